//! Command-line arguments. Each subcommand's arguments become a plain
//! settings value before any core crate sees them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::size::parse_size;

const AFTER_HELP: &str = "\
Examples:
  cupmon run -o prof -- python train.py              record every kernel, copy and memset
  cupmon run --window-at 30 --window-for 2 -- ./app  also take a full trace window at t=30s
  cupmon stats prof/1234                             what a dump holds
  cupmon decode prof/1234 --format chrome -o gpu.trace.json.gz
  cupmon merge --cpu torch_trace.json --window prof/window-0.json -o merged.json.gz
  cupmon demo                                        a trace from a real H200 recording

Traces open in https://ui.perfetto.dev (drag the file onto the page) or chrome://tracing.

Exit codes: 0 success; 2 bad input or arguments (unreadable, malformed or missing
files, unwritable output); 3 no NVIDIA driver or CUPTI; 1 anything else.
`cupmon run` exits with the traced program's exit code.";

#[derive(Debug, Parser)]
#[command(
    name = "cupmon",
    version,
    about = "A low-overhead GPU activity monitor for CUDA programs",
    long_about = "cupmon records every kernel, memcpy and memset of a CUDA program through \
CUPTI at a cost close to CUPTI's own, writes them to raw dumps, and turns dumps and trace \
windows into Kineto/PyTorch-profiler-compatible Chrome traces (Perfetto, chrome://tracing, HTA).",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a program under cupmon (always-on collection, optional trace windows).
    #[command(
        after_help = "Examples:\n  cupmon run -- python train.py\n  cupmon run -o prof --window-at 30 --window-for 2 -- ./app --steps 1000\n  cupmon run --window-on-signal -- torchrun --nproc-per-node 8 train.py\n\nEach CUDA process writes a dump to OUTPUT/<pid> (OUTPUT/rank<R>-<pid> under torchrun);\neach window becomes window-N.json and window-N.trace.json.gz there."
    )]
    Run(RunArgs),
    /// Merge a trace window into a torch.profiler (Kineto) CPU trace.
    #[command(
        after_help = "Example:\n  cupmon merge --cpu trace.json --window window-0.json -o merged.json.gz\n\nThe output is the seed's merge, byte for byte in meaning: the CPU events, then GPU\nkernels, copies, runtime calls and launch->kernel arrows. Open it in https://ui.perfetto.dev."
    )]
    Merge(MergeArgs),
    /// Write a trace window as a standalone Kineto-style trace.
    #[command(
        after_help = "Example:\n  cupmon export --window prof/1234/window-0.json -o window-0.trace.json.gz"
    )]
    Export(ExportArgs),
    /// Decode a raw dump directory into a trace window or a trace.
    #[command(
        after_help = "Examples:\n  cupmon decode prof/1234 -o window.json\n  cupmon decode prof/1234 --format chrome -o gpu.trace.json.gz\n  cupmon decode prof/1234 --cpu torch_trace.json -o merged.json.gz"
    )]
    Decode(DecodeArgs),
    /// Summarise a raw dump directory: records per kind, time span, top kernels.
    #[command(after_help = "Example:\n  cupmon stats prof/1234")]
    Stats(StatsArgs),
    /// Write a trace from a real H200 recording built into cupmon (no GPU needed).
    Demo(DemoArgs),
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The torch.profiler CPU trace (.json or .json.gz).
    #[arg(long, value_name = "CPU_TRACE")]
    pub cpu: PathBuf,
    /// The trace window (JSON, as `cupmon run`, `cupmon decode` or PyTorch's monitor write it).
    #[arg(long, value_name = "WINDOW.json")]
    pub window: PathBuf,
    /// Where to write the merged trace (.json or .json.gz).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// `traceName` of the output (default: the output path).
    #[arg(long)]
    pub trace_name: Option<String>,
    /// The largest single JSON value to read (one event, or a top-level member such as
    /// user_annotations), e.g. 4GiB; a larger one is an error naming the file and the
    /// byte offset. It bounds the memory that reading takes beyond the window itself.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub max_event_size: u64,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[arg(long, value_name = "WINDOW.json")]
    pub window: PathBuf,
    /// Where to write the trace (.json or .json.gz).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    #[arg(long)]
    pub trace_name: Option<String>,
    /// The largest single JSON value to read (one event, or a top-level member such as
    /// user_annotations), e.g. 4GiB; a larger one is an error naming the file and the
    /// byte offset. It bounds the memory that reading takes beyond the window itself.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub max_event_size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecodeFormat {
    /// The trace-window JSON that `cupmon merge` consumes.
    Window,
    /// A standalone Chrome trace, as `cupmon export` writes it.
    Chrome,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// A dump directory (holding cupti_monitor_meta.bin and cupti_monitor_raw_buffers.bin).
    pub dump_dir: PathBuf,
    #[arg(long, value_enum, default_value = "window")]
    pub format: DecodeFormat,
    /// Merge straight into this torch.profiler CPU trace (implies a Chrome trace).
    #[arg(long, value_name = "CPU_TRACE")]
    pub cpu: Option<PathBuf>,
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    #[arg(long)]
    pub trace_name: Option<String>,
    /// With --cpu: the largest single JSON value of the CPU trace to read (one event, or a
    /// top-level member), e.g. 4GiB; a larger one is an error naming the file and the offset.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub max_event_size: u64,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    pub dump_dir: PathBuf,
    /// How many kernels to list by total GPU time.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the demo trace.
    #[arg(short, long, default_value = "cupmon-demo.trace.json.gz")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Output directory (one subdirectory per traced process, named by pid).
    #[arg(short, long, default_value = "cupmon-out")]
    pub output: PathBuf,
    /// Open a trace window this many seconds after the program starts.
    #[arg(long, value_name = "SECONDS", requires = "window_for")]
    pub window_at: Option<f64>,
    /// Keep the window open this many seconds.
    #[arg(long, value_name = "SECONDS", requires = "window_at")]
    pub window_for: Option<f64>,
    /// SIGUSR2 to the traced process opens a window; the next SIGUSR2 closes it.
    #[arg(long)]
    pub window_on_signal: bool,
    /// Activity buffer size in MiB.
    #[arg(long, default_value_t = 4)]
    pub buffer_mib: usize,
    /// How often to flush completed activity to the dump, in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub flush_period: f64,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}
