//! Exit codes, documented in `cupmon --help`: 0 success, 2 bad input or
//! arguments, 3 no NVIDIA driver or CUPTI, 1 anything else.

use cupmon_trace::TraceError;

pub const BAD_INPUT: i32 = 2;
pub const NO_GPU_STACK: i32 = 3;
pub const OTHER: i32 = 1;

/// An error the user can fix by changing the command or its files.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// No driver, no libcupti: the machine, not the command, is the problem.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoGpuStack(pub String);

pub fn code_for(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if cause.is::<BadInput>()
            || cause.is::<TraceError>()
            || cause.is::<cupmon_records::DumpError>()
        {
            return BAD_INPUT;
        }
        if cause.is::<NoGpuStack>() {
            return NO_GPU_STACK;
        }
    }
    OTHER
}

pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
