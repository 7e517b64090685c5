//! `cupmon decode`: a raw dump into a trace window, a trace, or a merged trace.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cupmon_records::{DecodeReport, Dump, Reorder};
use cupmon_trace::{decode_slice_to_window, write_window_stream, DumpExport, OutputName};
use cupmon_trace::{
    merge_files_strict, AtomicOutput, MergeOptions, MergeWindow, TraceError, TraceWindow,
    WindowSource,
};

use super::{check_dump_dir, check_output, note_if_spooled, print_written, say_written, Input};
use crate::cli::{DecodeArgs, DecodeFormat};
use crate::exit::BadInput;
use crate::progress::Progress;
use crate::slice_args::{Slice, SliceArgs};

pub fn run(args: &DecodeArgs) -> Result<i32> {
    let format = args.decode_format().map_err(BadInput)?;
    check_dump_dir(&args.dump_dir)?;
    let rank = args.rank.checked()?;
    if rank.is_some() && args.cpu.is_none() && format == DecodeFormat::Window {
        return Err(BadInput(
            "--rank sets a trace's distributedInfo: use it with --format chrome or \
             pftrace, or --cpu (a window takes it at `cupmon export --window W --rank R`)"
                .into(),
        )
        .into());
    }
    let mut inputs = vec![Input::Dump(&args.dump_dir)];
    if let Some(cpu) = &args.cpu {
        inputs.push(Input::File(cpu));
    }
    check_output(&args.output, &inputs)?;
    if let Some(cpu) = &args.cpu {
        note_if_spooled(cpu);
        return merge_into_cpu_trace(args, cpu, rank);
    }
    let dir = &args.dump_dir;
    let dump = Dump::open(dir).with_context(|| dir.display().to_string())?;
    let slice = args.slice.resolve(&dump)?;
    let range = slice.map(|s| s.range).unwrap_or_default();
    // Every format streams: records are read, converted and written a buffer at a
    // time, so memory does not grow with the dump.
    match format {
        DecodeFormat::Window => {
            let out = AtomicOutput::create(&args.output)?;
            let mut writer = out.writer()?;
            let mut progress = Progress::dump("decoding", dir);
            let streamed = write_window_stream(
                &dump,
                &range,
                Reorder::default(),
                &mut writer,
                slice.is_none(),
                |p| progress.update_of(p.bytes_read, p.total_bytes),
            )
            .map_err(|e| named(e, dir, &args.output))?;
            progress.finish();
            let report = &streamed.report;
            print_report(report);
            if let Some(slice) = &slice {
                say_written(&args.output, &slice.line(&dump, report));
                if streamed.events == 0 {
                    let msg = slice.empty_message(&dump);
                    return Err(BadInput(format!("{}: {msg}", dir.display())).into());
                }
            }
            out.commit(writer)?;
            let mut line = format!(
                "wrote {} ({} events)",
                args.output.display(),
                streamed.events
            );
            if args.format.is_none() && OutputName::of(&args.output) != OutputName::Window {
                // The name did not say: say what it holds, and how to get a trace.
                line.push_str(
                    ", a trace window (not a trace: Perfetto does not open it; \
                     --format chrome, or an output named *.trace.json.gz, writes one)",
                );
            }
            if !cupmon_files::writes_in_place(&args.output) {
                line.push_str(&format!(
                    "; merge it into a torch.profiler CPU trace with `{}`",
                    merge_hint(&args.output)
                ));
            }
            say_written(&args.output, &line);
        }
        DecodeFormat::Chrome | DecodeFormat::Pftrace => {
            let mut progress = Progress::dump("reading", dir);
            let mut export =
                DumpExport::survey(&dump, &range, Reorder::default(), args.exact, |p| {
                    progress.update_of(p.bytes_read, p.total_bytes)
                })
                .map_err(|e| named(e, dir, &args.output))?;
            if let Some((rank, world_size)) = rank {
                export.set_rank(rank, world_size);
            }
            progress.finish();
            print_report(export.report());
            if export.late_lanes() > 0 {
                eprintln!(
                    "cupmon: warning: {} GPU ops came later than the {} s reorder window \
                     allows; their overlap tracks may differ from a full sort's",
                    export.late_lanes(),
                    Reorder::default().window_ns / 1_000_000_000
                );
            }
            if let Some(slice) = &slice {
                say_written(&args.output, &slice.line(&dump, export.report()));
                if export.events() == 0 {
                    let msg = slice.empty_message(&dump);
                    return Err(BadInput(format!("{}: {msg}", dir.display())).into());
                }
            }
            let mut progress = Progress::dump("writing", dir);
            let stats = export
                .write(
                    &args.output,
                    args.trace_name.clone(),
                    args.trace_format(),
                    |p| progress.update_of(p.bytes_read, p.total_bytes),
                )
                .map_err(|e| named(e, dir, &args.output))?;
            progress.finish();
            warn_evicted(stats.joins_evicted);
            print_written(&args.output, &stats.merge);
        }
    }
    Ok(0)
}

/// `--cpu`: the merge into a torch.profiler CPU trace holds the window in memory
/// (its first pass reads the CPU trace for the CPU ops the window's events name).
fn merge_into_cpu_trace(
    args: &DecodeArgs,
    cpu: &Path,
    rank: Option<(i64, Option<i64>)>,
) -> Result<i32> {
    let decoded = decode_slice(&args.dump_dir, &args.slice)?;
    let (window, report) = (&decoded.window, &decoded.report);
    print_report(report);
    if let Some(slice) = &decoded.slice {
        say_written(&args.output, &slice.line(&decoded.dump, report));
        if window.events.is_empty() {
            let msg = slice.empty_message(&decoded.dump);
            return Err(BadInput(format!("{}: {msg}", args.dump_dir.display())).into());
        }
    }
    let mut window = MergeWindow::from(window);
    if let Some((rank, world_size)) = rank {
        window.set_rank(rank, world_size);
    }
    let stats = merge_files_strict(
        cpu,
        WindowSource::Loaded(&window),
        &args.output,
        &MergeOptions {
            trace_name: args.trace_name.clone(),
            exact: args.exact,
            max_event_bytes: args.max_event_size,
            format: args.trace_format(),
        },
        &mut |_| {},
    )?;
    print_written(&args.output, &stats);
    Ok(0)
}

/// A streamed decode's error, naming the dump (reading it) or the output (writing).
fn named(e: TraceError, dir: &Path, output: &Path) -> anyhow::Error {
    match e {
        TraceError::Dump(e) => anyhow::Error::from(e).context(dir.display().to_string()),
        TraceError::Write(err) => TraceError::Io {
            path: output.to_path_buf(),
            what: "cannot write",
            err,
        }
        .into(),
        other => other.into(),
    }
}

fn warn_evicted(n: u64) {
    if n > 0 {
        eprintln!(
            "cupmon: warning: {n} external correlations left the reorder window early (it \
             holds {} at most): some events may lack their External id or annotation",
            cupmon_records::DEFAULT_MAX_PENDING
        );
    }
}

/// The name of the CPU trace in the printed merge command.
pub const CPU_TRACE_PLACEHOLDER: &str = "CPU_TRACE.json";

/// A `cupmon merge` command for a window just written, that works as printed
/// once the CPU trace is named `CPU_TRACE.json` (paths quoted for a shell).
fn merge_hint(window: &Path) -> String {
    format!(
        "cupmon merge --cpu {CPU_TRACE_PLACEHOLDER} --window {} -o {}",
        shell_quote(&window.display().to_string()),
        shell_quote(&merged_name(window).display().to_string())
    )
}

/// `dir/w.json` -> `dir/w.merged.trace.json.gz`.
fn merged_name(window: &Path) -> PathBuf {
    let name = window.file_name().unwrap_or_default().to_string_lossy();
    let stem = [".json.gz", ".json", ".gz"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(&name);
    window.with_file_name(format!("{stem}.merged.trace.json.gz"))
}

/// `s` as one shell word: as it is when it is plain, else in single quotes.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./+-=:,@%".contains(&b));
    if plain && !s.starts_with('-') {
        s.to_owned()
    } else if plain {
        format!("./{s}")
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A dump decoded, or the slice of it the flags name (with a progress line for
/// large ones; errors name the dump).
pub struct Decoded {
    pub dump: Dump,
    pub slice: Option<Slice>,
    pub window: TraceWindow,
    pub report: DecodeReport,
}

/// [`decode`] of the slice `args` name (the whole dump without flags).
pub fn decode_slice(dir: &Path, args: &SliceArgs) -> Result<Decoded> {
    let dump = Dump::open(dir).with_context(|| dir.display().to_string())?;
    let slice = args.resolve(&dump)?;
    let range = slice.map(|s| s.range).unwrap_or_default();
    let mut progress = Progress::dump("decoding", dir);
    let (window, report) = decode_slice_to_window(&dump, &range, |p| {
        progress.update_of(p.bytes_read, p.total_bytes)
    })
    .with_context(|| dir.display().to_string())?;
    progress.finish();
    Ok(Decoded {
        dump,
        slice,
        window,
        report,
    })
}

/// Warnings on stderr: the output is incomplete, and the user must know.
pub fn print_report(report: &DecodeReport) {
    for warning in &report.warnings {
        eprintln!("cupmon: warning: {warning}");
    }
    if let Some(dropped) = report.dropped_records.filter(|&d| d > 0) {
        eprintln!("cupmon: warning: CUPTI dropped {dropped} records while recording this dump");
    }
    warn_evicted(report.joins_evicted);
    if report.unresolved_kernel_names > 0 {
        eprintln!(
            "cupmon: warning: {} kernel records have no name in kernel_names.tsv (shown as kernel@0x...)",
            report.unresolved_kernel_names
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merge_hint_quotes_paths_and_names_a_new_output() {
        assert_eq!(
            merge_hint(Path::new("prof/w.json")),
            "cupmon merge --cpu CPU_TRACE.json --window prof/w.json -o prof/w.merged.trace.json.gz"
        );
        assert_eq!(
            merge_hint(Path::new("my dir/it's.json.gz")),
            r"cupmon merge --cpu CPU_TRACE.json --window 'my dir/it'\''s.json.gz' -o 'my dir/it'\''s.merged.trace.json.gz'"
        );
        assert_eq!(shell_quote("-w.json"), "./-w.json");
    }
}
