//! "Which line of my code is slow": the dump's kernels grouped by the source line that
//! launched them (the innermost frame of their Python stack that is the user's code, not
//! torch's, Triton's or cupmon's), each line with its GPU time and its kernels. What
//! `cupmon stats --by-line` and the report show. The autograd engine's kernels that
//! torch's sequence numbers tie to a forward op are a line of their own beside it:
//! "backward of" the forward op's line.

use std::collections::HashMap;

use crate::dump::{LaunchStack, StackTable};
use crate::{DecodeProgress, DecodeReport, Dump, DumpError, KernelNames, Record, TimeRange};

/// One source line and the kernels it launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    pub file: String,
    pub function: String,
    pub line: i32,
    /// The backward of this line's forward ops (kernels of the autograd engine).
    pub backward: bool,
    /// Kernel time (the sum of the kernels' durations) and kernels.
    pub gpu_ns: u64,
    pub kernels: u64,
    /// Per kernel name: time and count, most time first.
    pub by_kernel: Vec<(String, u64, u64)>,
}

/// Kernels that no line claims, by why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unclaimed {
    pub kernels: u64,
    pub gpu_ns: u64,
}

/// The kernels of a slice by source line.
#[derive(Debug, Clone, Default)]
pub struct LinesReport {
    /// Most GPU time first.
    pub lines: Vec<SourceLine>,
    pub total: Unclaimed,
    /// Launched from threads without Python frames (C++ threads, and the autograd
    /// engine's backward threads when no sequence number tied them to a forward op).
    pub no_python: Unclaimed,
    /// No stack noted (stacks off, launched before the session, a note overwritten, a
    /// wrapped correlation id).
    pub unattributed: Unclaimed,
    /// The walk's report (warnings, damage).
    pub decode: Option<DecodeReport>,
}

#[derive(Default)]
struct Acc {
    gpu_ns: u64,
    kernels: u64,
    by_kernel: HashMap<u64, (u64, u64)>,
}

/// Walks `range` of `dump` and groups its kernels by line.
pub fn source_lines(
    dump: &Dump,
    range: &TimeRange,
    progress: impl FnMut(&DecodeProgress),
) -> Result<LinesReport, DumpError> {
    let table = dump.python_stacks();
    let mut by_stack: HashMap<u32, Acc> = HashMap::new();
    let mut report = LinesReport::default();
    let decode = crate::walk_slice(dump, range, progress, |_, _, record| {
        let Record::Kernel(k) = record else { return };
        let ns = k.end.saturating_sub(k.start);
        if k.end == 0 {
            return; // unfinished at a forced flush: no duration
        }
        report.total.kernels += 1;
        report.total.gpu_ns += ns;
        match table.gpu_op(k.correlation_id, k.graph_node_id) {
            Some(LaunchStack::Stack(id)) => {
                let acc = by_stack.entry(id).or_default();
                acc.gpu_ns += ns;
                acc.kernels += 1;
                let e = acc.by_kernel.entry(k.name_ptr).or_default();
                e.0 += ns;
                e.1 += 1;
            }
            Some(LaunchStack::NoPython) => {
                report.no_python.kernels += 1;
                report.no_python.gpu_ns += ns;
            }
            None => {
                report.unattributed.kernels += 1;
                report.unattributed.gpu_ns += ns;
            }
        }
    })?;
    report.decode = Some(decode);
    report.lines = merge_by_line(table, by_stack, &mut KernelNames::new(dump.kernel_names()));
    Ok(report)
}

impl SourceLine {
    /// `file:line`, or `backward of file:line` (as trace args and Parquet name it).
    pub fn location(&self) -> String {
        let prefix = if self.backward {
            crate::dump::BACKWARD_OF
        } else {
            ""
        };
        format!("{prefix}{}:{}", self.file, self.line)
    }
}

/// Stacks that end in the same user line are one line (its backward another).
fn merge_by_line(
    table: &StackTable,
    by_stack: HashMap<u32, Acc>,
    names: &mut KernelNames<'_>,
) -> Vec<SourceLine> {
    let mut lines: HashMap<(String, i32, bool), (String, Acc)> = HashMap::new();
    for (id, acc) in by_stack {
        let (file, function, line) = match table.user_frame(id) {
            Some(f) => (f.file.clone(), f.function.clone(), f.line),
            None => (
                format!("<stack {id} not in python_stacks.jsonl>"),
                String::new(),
                0,
            ),
        };
        let (_, merged) = lines
            .entry((file, line, table.is_backward(id)))
            .or_insert_with(|| (function, Acc::default()));
        merged.gpu_ns += acc.gpu_ns;
        merged.kernels += acc.kernels;
        for (ptr, (ns, n)) in acc.by_kernel {
            let e = merged.by_kernel.entry(ptr).or_default();
            e.0 += ns;
            e.1 += n;
        }
    }
    let mut out: Vec<SourceLine> = lines
        .into_iter()
        .map(|((file, line, backward), (function, acc))| {
            let mut by_kernel: Vec<(String, u64, u64)> = acc
                .by_kernel
                .into_iter()
                .map(|(ptr, (ns, n))| (names.name(ptr).0.to_owned(), ns, n))
                .collect();
            by_kernel.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            SourceLine {
                file,
                function,
                line,
                backward,
                gpu_ns: acc.gpu_ns,
                kernels: acc.kernels,
                by_kernel,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.gpu_ns
            .cmp(&a.gpu_ns)
            .then_with(|| a.file.cmp(&b.file))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.backward.cmp(&b.backward))
    });
    out
}
