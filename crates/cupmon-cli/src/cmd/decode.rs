//! `cupmon decode`: a raw dump into a trace window, a trace, or a merged trace.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cupmon_records::{DecodeReport, Dump};
use cupmon_trace::decode_slice_to_window;
use cupmon_trace::{
    merge_files_strict, writes_in_place, AtomicOutput, MergeOptions, MergeWindow, TraceError,
    TraceWindow, WindowSource,
};

use super::{
    check_dump_dir, check_output, note_if_spooled, print_trace_written, say_written, Input,
};
use crate::cli::{DecodeArgs, DecodeFormat};
use crate::exit::BadInput;
use crate::progress::Progress;
use crate::slice_args::{Slice, SliceArgs};

pub fn run(args: &DecodeArgs) -> Result<i32> {
    check_dump_dir(&args.dump_dir)?;
    let mut inputs = vec![Input::Dump(&args.dump_dir)];
    if let Some(cpu) = &args.cpu {
        inputs.push(Input::File(cpu));
    }
    check_output(&args.output, &inputs)?;
    if let Some(cpu) = &args.cpu {
        note_if_spooled(cpu);
    }
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
    if let Some(cpu) = &args.cpu {
        let stats = merge_files_strict(
            cpu,
            WindowSource::Loaded(&MergeWindow::from(window)),
            &args.output,
            &MergeOptions {
                trace_name: args.trace_name.clone(),
                exact: args.exact,
                max_event_bytes: args.max_event_size,
            },
            &mut |_| {},
        )?;
        print_trace_written(&args.output, stats.events_written);
        return Ok(0);
    }
    match args.format {
        DecodeFormat::Window => {
            write_window(window, &args.output)?;
            let mut line = format!(
                "wrote {} ({} events)",
                args.output.display(),
                window.events.len()
            );
            if !writes_in_place(&args.output) {
                line.push_str(&format!(
                    "; merge it into a torch.profiler CPU trace with `{}`",
                    merge_hint(&args.output)
                ));
            }
            say_written(&args.output, &line);
        }
        DecodeFormat::Chrome => {
            let window = MergeWindow::from(window);
            super::export_trace(&window, &args.output, args.trace_name.clone(), args.exact)?;
        }
    }
    Ok(0)
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

/// Decode a dump with a progress line for large ones; errors name the dump.
pub fn decode(dir: &Path) -> Result<(TraceWindow, DecodeReport)> {
    let d = decode_slice(dir, &SliceArgs::default())?;
    Ok((d.window, d.report))
}

/// A dump decoded, or the slice of it the flags name.
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
    if report.unresolved_kernel_names > 0 {
        eprintln!(
            "cupmon: warning: {} kernel records have no name in kernel_names.tsv (shown as kernel@0x...)",
            report.unresolved_kernel_names
        );
    }
}

/// The window as JSON (`.gz` by name), written whole or not at all.
pub fn write_window(window: &TraceWindow, path: &Path) -> Result<()> {
    let out = AtomicOutput::create(path)?;
    let mut writer = out.writer()?;
    serde_json::to_writer(&mut writer, window)
        .map_err(std::io::Error::from)
        .and_then(|()| writer.flush())
        .map_err(|err| TraceError::Io {
            path: path.to_path_buf(),
            what: "cannot write",
            err,
        })?;
    out.commit(writer)?;
    Ok(())
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
