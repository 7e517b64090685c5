//! `cupmon stats --by-line`: the source lines that launched the most GPU time.

use std::io::Write;

use anyhow::{Context, Result};
use cupmon_records::{source_lines, Dump, LinesReport, TimeRange, Unclaimed};

/// What the kernels of threads without Python frames are called, with how to tie the
/// autograd engine's to their forward lines.
const NO_PYTHON_FRAMES: &str = "launched from threads without Python frames; the autograd \
     engine's backward kernels get their forward line under torch.autograd.profiler.emit_nvtx()";

/// Kernels listed under each line at most.
const KERNELS_PER_LINE: usize = 3;

/// Walks the slice and writes the `top` lines, each with its kernels.
pub fn write(
    out: &mut impl Write,
    dump: &Dump,
    range: &TimeRange,
    top: usize,
    name_room: Option<usize>,
) -> Result<()> {
    let table = dump.python_stacks();
    for w in table.warnings() {
        eprintln!("cupmon: warning: {w}");
    }
    let report =
        source_lines(dump, range, |_| {}).with_context(|| dump.dir().display().to_string())?;
    if table.is_empty() {
        let why = dump
            .meta()
            .json()
            .get("python_stacks")
            .and_then(|v| v.as_str())
            .map(|s| format!(" (the recording said: {s})"))
            .unwrap_or_default();
        writeln!(
            out,
            "source lines: this dump has no Python stacks{why}; they are noted for programs \
             run on CPython 3.11-3.13 with launch counting on"
        )?;
        return Ok(());
    }
    write_lines(out, &report, top, name_room)?;
    if table.ambiguous() > 0 {
        writeln!(
            out,
            "  {} launches left unattributed: their correlation ids were given twice (CUPTI's \
             ids wrapped)",
            table.ambiguous()
        )?;
    }
    Ok(())
}

fn share(part: &Unclaimed, total: &Unclaimed) -> String {
    if total.gpu_ns == 0 {
        return "0.0%".to_owned();
    }
    format!("{:.1}%", part.gpu_ns as f64 * 100.0 / total.gpu_ns as f64)
}

/// The table: `ms  share  kernels  file:line (function)`, then the line's kernels.
pub fn write_lines(
    out: &mut impl Write,
    r: &LinesReport,
    top: usize,
    name_room: Option<usize>,
) -> Result<()> {
    writeln!(
        out,
        "top source lines by GPU time ({} kernels, {:.3} ms; the innermost frame that is not \
         torch's (Inductor's code included), Triton's, cupmon's or exec'd):",
        r.total.kernels,
        r.total.gpu_ns as f64 / 1e6
    )?;
    writeln!(
        out,
        "  {:>10} {:>6} {:>9}  line",
        "total ms", "share", "kernels"
    )?;
    for l in r.lines.iter().take(top) {
        let this = Unclaimed {
            kernels: l.kernels,
            gpu_ns: l.gpu_ns,
        };
        writeln!(
            out,
            "  {:>10.3} {:>6} {:>9}  {} ({})",
            l.gpu_ns as f64 / 1e6,
            share(&this, &r.total),
            l.kernels,
            l.location(),
            l.function
        )?;
        for (name, ns, n) in l.by_kernel.iter().take(KERNELS_PER_LINE) {
            let name = match name_room {
                Some(room) => cupmon_demangle::short_name(name, room.saturating_sub(4).max(30)),
                None => std::borrow::Cow::Borrowed(name.as_str()),
            };
            writeln!(
                out,
                "  {:>10.3} {:>6} {:>9}      {name}",
                *ns as f64 / 1e6,
                "",
                n
            )?;
        }
        if l.by_kernel.len() > KERNELS_PER_LINE {
            writeln!(
                out,
                "  {:>27}      ... {} more kernels",
                "",
                l.by_kernel.len() - KERNELS_PER_LINE
            )?;
        }
    }
    if r.lines.len() > top {
        writeln!(out, "  ... {} more lines (--top N)", r.lines.len() - top)?;
    }
    for (what, part) in [
        (NO_PYTHON_FRAMES, &r.no_python),
        ("with no stack noted", &r.unattributed),
    ] {
        if part.kernels > 0 {
            writeln!(
                out,
                "  {:>10.3} {:>6} {:>9}  ({what})",
                part.gpu_ns as f64 / 1e6,
                share(part, &r.total),
                part.kernels
            )?;
        }
    }
    Ok(())
}
