//! `cupmon demo`: the whole offline path on a real recording built into the
//! binary (3 SGD steps of a small MLP on an H200, CUPTI 13.0, with the
//! torch.profiler CPU trace of the same steps), so a machine without a GPU
//! still shows what cupmon makes.

use anyhow::{Context, Result};
use cupmon_trace::{merge_files_strict, MergeOptions, MergeWindow, WindowSource};

use super::{check_output, print_written};
use crate::cli::DemoArgs;

macro_rules! fixture {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/fixtures/h200-cupti13.0/torch_mlp/",
                $name
            ))
            .as_slice(),
        )
    };
}

const DUMP_FILES: [(&str, &[u8]); 3] = [
    fixture!("cupti_monitor_meta.bin"),
    fixture!("cupti_monitor_raw_buffers.bin"),
    fixture!("kernel_names.tsv"),
];
const CPU_TRACE: (&str, &[u8]) = fixture!("kineto_cpu_trace.json");

pub fn run(args: &DemoArgs) -> Result<i32> {
    check_output(&args.output, &[])?;
    // Registered so that Ctrl-C removes it too.
    let (scratch, _live) = cupmon_trace::create_live_temp(tempfile::tempdir, |d| d.path())
        .context("cannot create a temporary directory")?;
    for (name, bytes) in DUMP_FILES {
        std::fs::write(scratch.path().join(name), bytes)
            .with_context(|| format!("cannot write {name} to {}", scratch.path().display()))?;
    }
    let cpu_trace = scratch.path().join(CPU_TRACE.0);
    std::fs::write(&cpu_trace, CPU_TRACE.1).context("cannot write the demo CPU trace")?;

    eprintln!("cupmon demo: a real recording from an NVIDIA H200 (CUPTI 13.0): 3 SGD steps of a");
    eprintln!("small MLP under torch.profiler, recorded as raw CUPTI activity buffers.");
    let (window, report) = super::decode::decode(scratch.path())?;
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
            trace_name: Some("cupmon demo: torch_mlp on H200".to_owned()),
            exact: false,
            ..MergeOptions::default()
        },
        &mut |_| {},
    )?;
    print_written(&args.output, &stats);
    Ok(0)
}
