//! `cupmon demo`: the whole offline path on a real recording built into the
//! binary (two training steps of a small transformer on an H200, CUPTI 13.0,
//! recorded by `cupmon.torch.profile` from plain Python, with torch.profiler's CPU
//! trace of the same steps; `tests/fixtures/h200-cupti13.0/torch_transformer`), so a
//! machine without a GPU still shows what cupmon makes.

use anyhow::{Context, Result};
use cupmon_records::{Dump, TimeRange};
use cupmon_trace::{
    decode_slice_to_window, merge_files_strict, MergeOptions, MergeWindow, WindowSource,
};

use super::{check_output, print_written};
use crate::cli::DemoArgs;

macro_rules! fixture {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/fixtures/h200-cupti13.0/torch_transformer/",
                $name
            ))
            .as_slice(),
        )
    };
}

const DUMP_FILES: [(&str, &[u8]); 5] = [
    fixture!("dump/cupti_monitor_meta.bin"),
    fixture!("dump/kernel_names.tsv"),
    fixture!("dump/user_annotations.jsonl"),
    fixture!("dump/segments/index.jsonl"),
    fixture!("dump/segments/seg-000001.cupmr"),
];
const CPU_TRACE: (&str, &[u8]) = fixture!("kineto_cpu_trace.json");

pub fn run(args: &DemoArgs) -> Result<i32> {
    check_output(&args.output, &[])?;
    super::check_output_name(&args.output, super::Writes::Trace)?;
    // Registered so that Ctrl-C removes it too.
    let (scratch, _live) = cupmon_files::create_live_temp(tempfile::tempdir, |d| d.path())
        .context("cannot create a temporary directory")?;
    for (name, bytes) in DUMP_FILES {
        let path = scratch.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let dump = scratch.path().join("dump");
    let cpu_trace = scratch.path().join(CPU_TRACE.0);
    std::fs::write(&cpu_trace, CPU_TRACE.1).context("cannot write the demo CPU trace")?;

    eprintln!("cupmon demo: a real recording from an NVIDIA H200 (CUPTI 13.0): two training steps");
    eprintln!("of a small transformer (bf16, AdamW, a CUDA graph) under cupmon.torch.profile.");
    // The dump holds the profiler's whole life (its warm-up step too); the demo shows
    // the slice that torch.profiler's CPU trace covers, as `--from/--to` would.
    let span = cpu_trace_span(CPU_TRACE.1)?;
    let dump = Dump::open(&dump).with_context(|| dump.display().to_string())?;
    let (window, report) = decode_slice_to_window(&dump, &span, |_| {})?;
    super::decode::print_report(&report);
    let kernels = window
        .events
        .iter()
        .filter(|e| e.kind_name() == "kernel")
        .count();
    eprintln!(
        "decoded {} records ({} kernels) from {} buffers; merging into the torch.profiler CPU trace",
        report.records, kernels, report.chunks
    );
    let stats = merge_files_strict(
        &cpu_trace,
        WindowSource::Loaded(&MergeWindow::from(&window)),
        &args.output,
        &MergeOptions {
            trace_name: Some("cupmon demo: transformer training on H200".to_owned()),
            exact: false,
            ..MergeOptions::default()
        },
        &mut |_| {},
    )?;
    print_written(&args.output, &stats);
    Ok(0)
}

/// Kernels still running when the profiler stopped end this long after its last op.
const TAIL_NS: u64 = 50_000_000;

/// `[first op, last op end + TAIL_NS)` of a Kineto trace, in Unix ns (its `ts` are
/// microseconds after `baseTimeNanoseconds`).
fn cpu_trace_span(trace: &[u8]) -> Result<TimeRange> {
    let doc: serde_json::Value =
        serde_json::from_slice(trace).context("the demo CPU trace is not JSON")?;
    let base = doc["baseTimeNanoseconds"].as_u64().unwrap_or(0);
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for e in doc["traceEvents"].as_array().into_iter().flatten() {
        if let (Some("X"), Some(ts)) = (e["ph"].as_str(), e["ts"].as_f64()) {
            lo = lo.min(ts);
            hi = hi.max(ts + e["dur"].as_f64().unwrap_or(0.0));
        }
    }
    anyhow::ensure!(lo <= hi, "the demo CPU trace has no events");
    let ns = |us: f64| base + (us * 1e3) as u64;
    Ok(TimeRange::new(Some(ns(lo)), Some(ns(hi) + TAIL_NS)))
}
