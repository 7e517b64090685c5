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

/// `cupmon decode ... -o - | head` is not a failure. The trace crate keeps
/// its I/O errors in the message, not as a source, so look there too.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        let io = c.downcast_ref::<std::io::Error>().or_else(|| {
            match c.downcast_ref::<TraceError>()? {
                TraceError::Io { err, .. } | TraceError::Write(err) => Some(err),
                _ => None,
            }
        });
        io.is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, each said once: an error whose
/// message already includes its source's text (an I/O error behind a file
/// name) would otherwise print the OS error twice.
pub fn message(err: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let dump = cupmon_records::DumpError::Io {
            file: "cupti_monitor_meta.bin".to_owned(),
            source: io,
        };
        let err = Err::<(), _>(dump).context("prof/1").unwrap_err();
        assert_eq!(
            message(&err),
            "prof/1: cupti_monitor_meta.bin: entity not found"
        );
    }

    #[test]
    fn a_broken_pipe_inside_a_trace_error_is_seen() {
        let err = anyhow::Error::from(TraceError::Io {
            path: "-".into(),
            what: "cannot write",
            err: std::io::ErrorKind::BrokenPipe.into(),
        });
        assert!(is_broken_pipe(&err));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}
