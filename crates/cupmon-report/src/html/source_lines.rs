//! "Top source lines by GPU time": per process with Python stacks, the lines of the
//! user's code that launched the most kernel time (the innermost frame that is not
//! torch's, Triton's or cupmon's), each with its kernels (as `cupmon stats --by-line`).

use std::io::{self, Write};

use super::tables::KERNEL_NAME_CHARS;
use super::text::{esc, ms, percent};
use crate::Report;

/// Lines listed per process, and kernels per line.
const LINES: usize = 20;
const KERNELS_PER_LINE: usize = 3;

pub fn write(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let with_lines: Vec<_> = r
        .processes
        .iter()
        .filter_map(|p| p.lines.as_ref().map(|l| (p, l)))
        .collect();
    if with_lines.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "<section id=\"source-lines\"><h2>Top source lines by GPU time</h2><p class=\"note\">\
         The line of Python that launched each kernel: the innermost frame of its stack \
         that is not torch's (Inductor's generated code included), Triton's, cupmon's or exec'd (`<string>`) (a CUDA graph's kernels: the line that \
         captured them; the autograd engine's backward kernels, when torch's sequence numbers \
         tied them to a forward op under emit_nvtx: \"backward of\" its line). Each line with \
         its kernels; share of the process's kernel time.</p>"
    )?;
    for (p, lines) in with_lines {
        let total = lines.total.gpu_ns;
        let share = |ns: u64| (total > 0).then(|| ns as f64 / total as f64);
        writeln!(
            out,
            "<h3>{}</h3><table class=\"source-lines\"><thead><tr><th>line</th>\
             <th>kernels</th><th>total ms</th><th>share</th></tr></thead><tbody>",
            esc(&p.label)
        )?;
        for l in lines.lines.iter().take(LINES) {
            writeln!(
                out,
                "<tr><td class=\"name\" title=\"{file}\">{backward}{short}:{line} <span class=\"note\">\
                 {function}</span></td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td></tr>",
                l.kernels,
                ms(l.gpu_ns),
                percent(share(l.gpu_ns)),
                file = esc(&l.file),
                short = esc(l.file.rsplit('/').next().unwrap_or(&l.file)),
                line = l.line,
                backward = if l.backward { "backward of " } else { "" },
                function = esc(&l.function),
            )?;
            for (name, ns, n) in l.by_kernel.iter().take(KERNELS_PER_LINE) {
                writeln!(
                    out,
                    "<tr class=\"sub\"><td class=\"name\" title=\"{}\">&nbsp;&nbsp;{}</td>\
                     <td class=\"num\">{n}</td><td class=\"num\">{}</td><td></td></tr>",
                    esc(name),
                    esc(&cupmon_demangle::short_name(name, KERNEL_NAME_CHARS)),
                    ms(*ns),
                )?;
            }
        }
        for (what, part) in [
            (
                "launched from threads without Python frames; backward kernels get their \
                 forward line under torch.autograd.profiler.emit_nvtx()",
                &lines.no_python,
            ),
            ("no stack noted", &lines.unattributed),
        ] {
            if part.kernels > 0 {
                writeln!(
                    out,
                    "<tr><td class=\"name note\">({what})</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                    part.kernels,
                    ms(part.gpu_ns),
                    percent(share(part.gpu_ns)),
                )?;
            }
        }
        writeln!(out, "</tbody></table>")?;
    }
    writeln!(out, "</section>")
}
