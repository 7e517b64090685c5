//! Command-line arguments. Each subcommand's arguments become a plain
//! settings value before any core crate sees them.

use std::path::PathBuf;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use cupmon_trace::TraceFormat;

const AFTER_HELP: &str = "\
Examples:
  cupmon run -o prof -- python train.py              record every kernel, copy and memset
  cupmon run --window-at 30 --window-for 2 -- ./app  also take a full trace window at t=30s
  cupmon stats prof/1234                             what a dump holds
  cupmon report prof -o report.html                  one HTML page for all processes of a run
  cupmon decode prof/1234-20261201T093005Z --format chrome -o gpu.trace.json.gz
  cupmon merge --cpu torch_trace.json --window prof/window-0.json -o merged.json.gz
  cupmon export --window prof/1234-20261201T093005Z/window-0.json -o window-0.pftrace
  cupmon demo                                        a trace from a real H200 recording
  cupmon export-parquet prof -o fleet/ --job j42     every rank of a run as Parquet datasets
  cupmon sql fleet/ --stragglers                     the slowest rank per minute (DuckDB)

Traces open in https://ui.perfetto.dev (drag the file onto the page) or chrome://tracing.
Trace formats: Chrome JSON (Kineto's: .json, .json.gz), or Perfetto's protobuf trace when
the output ends in .pftrace or .pftrace.gz (or with --format pftrace): the same events and
args, a fraction of the size, times in ns; it opens in ui.perfetto.dev (not in
chrome://tracing or HTA).

Outputs: `-o -` writes to standard output; devices and FIFOs are written in place, and
a symlink is followed (its target is replaced, the link stays). A CPU trace may come from
a pipe or FIFO (`--cpu /dev/stdin`). No command writes over its inputs or into a dump it reads.

Exit codes: 0 success; 2 bad input or arguments (unreadable, malformed or missing
files, unwritable output); 3 no NVIDIA driver or CUPTI; 1 anything else; 130, 143
interrupted by Ctrl-C, SIGTERM (temporary files are removed first).
`cupmon run` exits with the traced program's exit code.";

#[derive(Debug, Parser)]
#[command(
    name = "cupmon",
    version,
    about = "A low-overhead GPU activity monitor for CUDA programs",
    long_about = "cupmon records every kernel, memcpy and memset of a CUDA program through \
CUPTI at a cost close to CUPTI's own, writes them to compressed dumps within a disk budget, and turns dumps and trace \
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
        after_help = "Examples:\n  cupmon run -- python train.py\n  cupmon run -o prof --window-at 30 --window-for 2 -- ./app --steps 1000\n  cupmon run --window-on-signal -- torchrun --nproc-per-node 8 train.py\n\nEach CUDA process writes a dump to a new directory OUTPUT/<pid>-<start>\n(OUTPUT/rank<R>-<pid>-<start> under torchrun; <start> is the UTC start time, e.g.\n20261201T093005Z, with -1, -2, ... added when taken: a dump is never overwritten);\neach window becomes window-N.json there, and when the program has ended cupmon run\nwrites its trace window-N.trace.json.gz beside it."
    )]
    Run(RunArgs),
    /// Merge a trace window into a torch.profiler (Kineto) CPU trace.
    #[command(
        after_help = "Example:\n  cupmon merge --cpu trace.json --window window-0.json -o merged.json.gz\n\nThe output is what PyTorch's merge_trace_window_into_chrome_trace writes (with --exact), byte for byte in meaning: the CPU events, then GPU\nkernels, copies, runtime calls and launch->kernel arrows. Open it in https://ui.perfetto.dev.\nWith -o merged.pftrace the same merged trace (CPU and GPU side) is one Perfetto protobuf trace."
    )]
    Merge(MergeArgs),
    /// Write a trace window as a standalone Kineto-style trace.
    #[command(
        after_help = "Examples:\n  cupmon export --window prof/1234-20261201T093005Z/window-0.json -o window-0.trace.json.gz\n  cupmon export --window prof/1234-20261201T093005Z/window-0.json -o window-0.pftrace     Perfetto's protobuf format"
    )]
    Export(ExportArgs),
    /// Decode a dump directory (or a time slice of it) into a trace window or a trace.
    #[command(
        after_help = "Examples:\n  cupmon decode prof/1234-20261201T093005Z -o window.json\n  cupmon decode prof/1234-20261201T093005Z --format chrome -o gpu.trace.json.gz\n  cupmon decode prof/1234-20261201T093005Z --cpu torch_trace.json -o merged.json.gz\n  cupmon decode prof/1234-20261201T093005Z -o gpu.pftrace                  a Perfetto protobuf trace\n  cupmon decode prof/1234-20261201T093005Z --from 14:32:00 --to 14:33:00 --format chrome -o slice.trace.json.gz\n  cupmon decode prof/1234-20261201T093005Z --last 30s -o last.json\n\nA slice (--from/--to/--last) holds the records whose time interval overlaps it, and the\nexternal correlations and annotations they refer to; only the segments and frames that\ncan overlap are read."
    )]
    Decode(DecodeArgs),
    /// Summarise a dump directory (or a time slice): records per kind, time span, top kernels.
    #[command(
        after_help = "Examples:\n  cupmon stats prof/1234-20261201T093005Z\n  cupmon stats prof/1234-20261201T093005Z --timeline 1m     where the job slowed down\n  cupmon stats prof/1234-20261201T093005Z --from 14:32:00 --to 14:33:00"
    )]
    Stats(StatsArgs),
    /// Write a trace from a real H200 recording built into cupmon (no GPU needed).
    Demo(DemoArgs),
    /// Open a trace window now in running monitored processes (all ranks of a run).
    #[command(
        after_help = "Examples:\n  cupmon window prof              every monitored process of `cupmon run -o prof`, 5 s\n  cupmon window prof --for 30s\n  cupmon window prof/rank0-4242-20261201T093005Z --steps 3\n                                   until the program has called cupmon.step() 3 times\n  cupmon window 4242               the process with pid 4242\n\nEach process writes window-N.json into its dump directory, and cupmon window writes its\ntrace window-N.trace.json.gz beside it; with several processes, one combined trace (one process group per rank) is written too.\nWorks for processes started by `cupmon run` and for those that only have the injection\nlibrary set (CUDA_INJECTION64_PATH); no signal is sent."
    )]
    Window(WindowArgs),
    /// List the monitored processes of a run, a dump directory or a pid.
    #[command(after_help = "Example:\n  cupmon status prof")]
    Status(StatusArgs),
    /// Name the rank(s) a hung job waits for, what each is stuck in, and the evidence.
    #[command(
        after_help = "Examples:\n  cupmon diagnose prof              every dump of `cupmon run -o prof`\n  cupmon diagnose prof --json\n  cupmon hang-dump prof && cupmon diagnose prof     a job hanging now\n\nReads every rank's dump and its hang records (hang-N.json, written after --hang-after\nwithout GPU progress, on SIGTERM or SIGABRT, or by `cupmon hang-dump`)."
    )]
    Diagnose(DiagnoseArgs),
    /// Have running monitored processes write a hang record into their dumps now.
    #[command(
        name = "hang-dump",
        after_help = "Examples:\n  cupmon hang-dump prof            every monitored process of `cupmon run -o prof`\n  cupmon hang-dump 4242            the process with pid 4242\n\nEach process forces a flush and writes hang-N.json into its dump: the work in flight per\nstream, the last completed operations, its launching threads and NCCL collectives.\nThen: cupmon diagnose prof."
    )]
    HangDump(HangDumpArgs),
    /// Combine traces of several ranks into one trace (one process group per rank).
    #[command(
        after_help = "Example:\n  cupmon combine prof/rank*/window-0.trace.json.gz -o job.trace.json.gz\n\nRanks come from each trace's distributedInfo. Traces of one host line up as they are;\nfor several hosts give each rank's clock offset, e.g. --offset 1=-250us."
    )]
    Combine(CombineArgs),
    /// One HTML page of what the GPUs did: a dump, or every process of a run.
    #[command(
        after_help = "Examples:\n  cupmon report prof -o report.html            every process (rank) of `cupmon run -o prof`\n  cupmon report prof/rank0-4242-20261201T093005Z --last 1h --bin 10s\n\nThe page is self-contained (no network when it is viewed): header, GPU busy % per\ndevice and rank over time with kernels/s, copy bandwidth and the trace windows, top\nkernels, copies, streams, ranks side by side with the slowest rank per minute, and the\n`cupmon decode` command for the slowest minute. Its numbers are `cupmon stats`' numbers."
    )]
    Report(ReportArgs),
    /// Name the straggler rank of each minute and the kernels behind it.
    #[command(
        after_help = "Examples:\n  cupmon stragglers prof                 every rank of a `cupmon run` output\n  cupmon stragglers prof --json --last 10m\n\nPer minute (UTC), each rank's compute kernels (NCCL kernels left out) are compared by\nname and launch configuration, their GPU time brought to the same amount of work; the\nrank that spends the most is named when it spends at least --threshold more than the\nother ranks' median, with the kernels that account for the difference."
    )]
    Stragglers(StragglersArgs),
    /// Write dumps as Parquet datasets (kernels, memcpy, memset, api, dumps) for SQL engines.
    #[command(
        name = "export-parquet",
        // Rows by start time, not decode's overlap: adjacent slices share no row.
        mut_arg("from", |a| a.help("Only rows that start at or after T: +12.5 or +90s (after the dump's first record), @1764567890.25 (Unix seconds), ISO-8601 (2026-12-01T14:32:00Z, ...+01:00; without zone: local time) or HH:MM:SS[.fff] (local time on the day of the dump's first record); relative forms count from each dump's own first record")),
        mut_arg("to", |a| a.help("Only rows that start before T (same forms as --from)")),
        mut_arg("last", |a| a.help("Only rows that start in the last DURATION before the dump's last record (e.g. 30s, 5m)")),
        after_help = "Examples:\n  cupmon export-parquet prof -o fleet --job train-42      every dump of a `cupmon run` output\n  cupmon export-parquet prof/rank0-4242 -o fleet --from 2026-12-01T02:00Z --to @1796180400\n\nLayout: OUT/<dataset>/day=YYYY-MM-DD/hour=H/<host>.r<rank>.p<pid>.<seq>.parquet (UTC).\nRunning it again on a grown dump adds only the new chunks; several hosts may write into one\nshared OUT. Then: cupmon sql OUT --top-kernels, or duckdb -init OUT/cupmon.sql.\nColumns, Spark and Trino: docs/parquet.md."
    )]
    ExportParquet(ExportParquetArgs),
    /// Query an export-parquet directory through DuckDB (the duckdb Python package).
    #[command(
        after_help = "Examples:\n  cupmon sql fleet --top-kernels\n  cupmon sql fleet --stragglers\n  cupmon sql fleet --top-lines\n  cupmon sql fleet -c \"SELECT rank, count(*) FROM kernels GROUP BY rank ORDER BY rank\"\n\nThe views and macros are those of OUT/cupmon.sql (kernels, memcpy, memset, api, stacks, dumps,\ntop_kernels, busy_per_minute, stragglers, comm_overlap). Needs the duckdb Python package:\npip install 'cupmon[sql]' (or pip install duckdb); the Python used is $CUPMON_PYTHON, else python3."
    )]
    Sql(SqlArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A dump directory, or a `cupmon run` output directory (all the dumps in it).
    pub target: PathBuf,
    /// Where to write the page.
    #[arg(short, long, value_name = "OUT", default_value = "report.html")]
    pub output: PathBuf,
    /// The charts' bin (e.g. 10s, 1m); default: a round bin giving about 1,500 bins.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub bin: Option<std::time::Duration>,
    /// How many kernels the kernel table lists.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    #[command(flatten)]
    pub slice: crate::slice_args::SliceArgs,
}

#[derive(Debug, Args)]
pub struct StragglersArgs {
    /// A `cupmon run` output directory (all the dumps in it) or a dump directory.
    pub target: PathBuf,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The period ranks are compared over.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = duration)]
    pub period: std::time::Duration,
    /// The least excess, in percent, of a rank's GPU time per unit of work over the
    /// other ranks' median that names it.
    #[arg(long, value_name = "PERCENT", default_value_t = cupmon_straggler::THRESHOLD * 100.0)]
    pub threshold: f64,
    #[command(flatten)]
    pub slice: crate::slice_args::SliceArgs,
}

#[derive(Debug, Args)]
pub struct ExportParquetArgs {
    /// Dump directories, `cupmon run` output directories (every dump in them), or
    /// PyTorch-format dumps.
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<PathBuf>,
    /// The dataset directory (created; other exports may already be in it).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// `--from`, `--to`, `--last`, as `cupmon decode` reads them, resolved against each
    /// dump; the help below says what they select here.
    #[command(flatten)]
    pub slice: crate::slice_args::SliceArgs,
    /// The record datasets to write (dumps/ is always written).
    #[arg(long, value_name = "KIND,...", default_value = "kernel,memcpy,memset,api", value_parser = parse_kinds)]
    pub kinds: cupmon_parquet::Kinds,
    /// The job's id, a column of every row.
    #[arg(long, value_name = "ID")]
    pub job: Option<String>,
    /// The host column (default: the dump's hostname, else this machine's name).
    #[arg(long, value_name = "NAME", value_parser = parse_host)]
    pub host: Option<String>,
}

/// `kernel,memcpy` (also `kernels`, `api`; case-insensitive).
fn parse_kinds(text: &str) -> Result<cupmon_parquet::Kinds, String> {
    let mut kinds = cupmon_parquet::Kinds {
        kernel: false,
        memcpy: false,
        memset: false,
        api: false,
    };
    for word in text.split(',').map(|w| w.trim().to_ascii_lowercase()) {
        match word.as_str() {
            "kernel" | "kernels" => kinds.kernel = true,
            "memcpy" => kinds.memcpy = true,
            "memset" => kinds.memset = true,
            "api" | "runtime" | "driver" => kinds.api = true,
            other => {
                return Err(format!(
                    "{other:?} is not a kind; use kernel, memcpy, memset, api (comma-separated)"
                ))
            }
        }
    }
    Ok(kinds)
}

/// A host name for the `host` column and the file names: letters, digits, `.`, `-`, `_`.
fn parse_host(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c));
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text:?}: a host name of letters, digits, '.', '-' and '_' (it names files)"
        ))
    }
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("what").required(true))]
pub struct SqlArgs {
    /// A directory written by `cupmon export-parquet` (holding cupmon.sql).
    #[arg(value_name = "OUT")]
    pub dir: PathBuf,
    /// Run this SQL (DuckDB's dialect) over the views.
    #[arg(short = 'c', long = "command", value_name = "QUERY", group = "what")]
    pub query: Option<String>,
    /// The kernels with the most GPU time, per rank (`--top N` of each).
    #[arg(long, group = "what")]
    pub top_kernels: bool,
    /// Busy time of each device per minute.
    #[arg(long, group = "what")]
    pub busy: bool,
    /// Per minute, the slowest rank against the fleet and the busiest one.
    #[arg(long, group = "what")]
    pub stragglers: bool,
    /// NCCL time overlapped with compute, per rank and device.
    #[arg(long, group = "what")]
    pub comm_overlap: bool,
    /// The Python lines whose kernels took the most GPU time, per rank (`--top N`
    /// of each; exports of dumps with Python stacks).
    #[arg(long, group = "what")]
    pub top_lines: bool,
    /// How many kernels (or lines) per rank --top-kernels (--top-lines) lists.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: u32,
    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// --top-kernels with each kernel's full name (by default a name longer than the
    /// line has room for loses its template arguments and parameters: `kernel<…>(…)`).
    #[arg(long)]
    pub full_names: bool,
    /// Most rows a table shows (CSV shows all).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_rows: u32,
}

#[derive(Debug, Args)]
pub struct WindowArgs {
    /// A `cupmon run` output directory, a dump directory or a pid.
    pub target: String,
    /// How long the window stays open.
    #[arg(long = "for", value_name = "DURATION", default_value = "5s", value_parser = duration, conflicts_with = "steps")]
    pub length: std::time::Duration,
    /// Keep the window open for this many program steps (cupmon.step() calls).
    #[arg(long)]
    pub steps: Option<u64>,
    /// How long to wait for the steps before closing the windows anyway.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = duration)]
    pub timeout_steps: std::time::Duration,
    /// How long a process may take to answer.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub timeout: std::time::Duration,
    /// Where to write the combined trace (default: in TARGET).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// A `cupmon run` output directory, a dump directory or a pid.
    pub target: String,
    /// Also list processes that have exited or do not answer.
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration)]
    pub timeout: std::time::Duration,
}

#[derive(Debug, Args)]
pub struct DiagnoseArgs {
    /// A `cupmon run` output directory, a dump directory or the pid of a monitored process.
    pub target: String,
    /// The diagnosis as JSON (for automation).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HangDumpArgs {
    /// A `cupmon run` output directory, a dump directory or a pid.
    pub target: String,
    /// How long a process may take to answer.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub timeout: std::time::Duration,
}

#[derive(Debug, Args)]
pub struct CombineArgs {
    /// Chrome traces (.json or .json.gz), one per rank.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// The combined trace (.json, .json.gz, or .pftrace, .pftrace.gz for Perfetto's
    /// protobuf format).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// The output's format (default: by its name).
    #[arg(long, value_parser = trace_format_parser(), value_name = "FORMAT")]
    pub format: Option<TraceFormat>,
    /// Shift a rank's events by its clock's offset: RANK=DURATION (e.g. 1=-250us).
    #[arg(long, value_name = "RANK=DURATION")]
    pub offset: Vec<String>,
}

/// `512KiB`, `4GiB`, `4G`: cupmon's one size syntax (powers of 1024), at least a byte.
fn parse_size(text: &str) -> Result<u64, String> {
    match cupmon_config::units::parse_size(text)? {
        0 => Err(format!("{text:?}: the size must be at least one byte")),
        n => Ok(n),
    }
}

/// `5s`, `500ms`, `2m`: cupmon's one duration syntax.
fn duration(text: &str) -> Result<std::time::Duration, String> {
    cupmon_config::units::parse_duration(text)
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The torch.profiler CPU trace (.json or .json.gz; a pipe or FIFO is copied once).
    #[arg(long, value_name = "CPU_TRACE")]
    pub cpu: PathBuf,
    /// The trace window (JSON, as `cupmon run`, `cupmon decode` or PyTorch's monitor write it).
    #[arg(long, value_name = "WINDOW.json")]
    pub window: PathBuf,
    /// Where to write the merged trace (.json, .json.gz, or .pftrace, .pftrace.gz for
    /// Perfetto's protobuf format; `-`: standard output).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// The output's format (default: by its name).
    #[arg(long, value_parser = trace_format_parser(), value_name = "FORMAT")]
    pub format: Option<TraceFormat>,
    /// `traceName` of the output (default: the output path).
    #[arg(long)]
    pub trace_name: Option<String>,
    /// Write exactly what PyTorch's merge_trace_window_into_chrome_trace writes (the
    /// default is the complete trace: the same events with Kineto's GPU args, overlap
    /// tracks and memory events).
    #[arg(long)]
    pub exact: bool,
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
    /// Where to write the trace (.json, .json.gz, or .pftrace, .pftrace.gz for
    /// Perfetto's protobuf format; `-`: standard output).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// The output's format (default: by its name).
    #[arg(long, value_parser = trace_format_parser(), value_name = "FORMAT")]
    pub format: Option<TraceFormat>,
    #[arg(long)]
    pub trace_name: Option<String>,
    /// Write exactly what PyTorch's merge_trace_window_into_chrome_trace writes (the
    /// default is the complete trace: the same events with Kineto's GPU args, overlap
    /// tracks and memory events).
    #[arg(long)]
    pub exact: bool,
    /// The largest single JSON value to read (one event, or a top-level member such as
    /// user_annotations), e.g. 4GiB; a larger one is an error naming the file and the
    /// byte offset. It bounds the memory that reading takes beyond the window itself.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub max_event_size: u64,
    #[command(flatten)]
    pub rank: RankArgs,
}

/// `--rank R [--world-size N]`: a trace's `distributedInfo`.
#[derive(Debug, Args)]
pub struct RankArgs {
    /// The process's rank, for a window or dump that does not say it (one recorded
    /// without torchrun's environment): written as the trace's distributedInfo, so that
    /// HolisticTraceAnalysis and `cupmon combine` tell the ranks apart.
    #[arg(long, value_name = "R")]
    pub rank: Option<i64>,
    /// The job's number of ranks (with --rank).
    #[arg(long, value_name = "N", requires = "rank")]
    pub world_size: Option<i64>,
}

/// A trace's format, on the command line: [`TraceFormat`]'s names and help texts.
fn trace_format_parser() -> impl TypedValueParser<Value = TraceFormat> {
    let names = TraceFormat::ALL.map(|f| PossibleValue::new(f.name()).help(f.describe()));
    clap::builder::PossibleValuesParser::new(names)
        .try_map(|name: String| TraceFormat::parse(&name).ok_or("not a trace format"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecodeFormat {
    /// The trace-window JSON that `cupmon merge` consumes.
    Window,
    /// A standalone trace, as `cupmon export` writes it (Chrome JSON, or Perfetto's
    /// protobuf when OUT ends in .pftrace or .pftrace.gz).
    Chrome,
    /// A standalone trace in Perfetto's protobuf format, whatever OUT's name.
    Pftrace,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// A dump directory (holding cupti_monitor_meta.bin and cupti_monitor_raw_buffers.bin).
    pub dump_dir: PathBuf,
    /// What to write [default: by OUT's name: a trace for .trace.json, .trace.json.gz,
    /// .pftrace, .pftrace.gz; a trace window otherwise].
    #[arg(long, value_enum)]
    pub format: Option<DecodeFormat>,
    /// Merge straight into this torch.profiler CPU trace (implies a Chrome trace).
    #[arg(long, value_name = "CPU_TRACE")]
    pub cpu: Option<PathBuf>,
    /// Where to write the window or trace (.json, .json.gz; .pftrace, .pftrace.gz for a
    /// trace in Perfetto's protobuf format; `-`: standard output).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    #[arg(long)]
    pub trace_name: Option<String>,
    /// Write exactly what PyTorch's merge_trace_window_into_chrome_trace writes (the
    /// default is the complete trace: the same events with Kineto's GPU args, overlap
    /// tracks and memory events).
    #[arg(long)]
    pub exact: bool,
    /// With --cpu: the largest single JSON value of the CPU trace to read (one event, or a
    /// top-level member), e.g. 4GiB; a larger one is an error naming the file and the offset.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub max_event_size: u64,
    /// A trace's rank (default: the dump's meta, else its name, rank<R>-<pid>-...).
    #[command(flatten)]
    pub rank: RankArgs,
    #[command(flatten)]
    pub slice: crate::slice_args::SliceArgs,
}

impl DecodeArgs {
    /// `--format`, or what OUT's name asks for: a trace for `.trace.json[.gz]` and
    /// `.pftrace[.gz]`, a window otherwise. An error (the message) when `--format`
    /// asks for a window and the name says a trace, or the other way round.
    pub fn decode_format(&self) -> Result<DecodeFormat, String> {
        use cupmon_trace::OutputName;
        let named = OutputName::of(&self.output);
        let clash = |asked: &str, fix: &str| {
            Err(format!(
                "{}: --format {asked}, but the name says {}; {fix}",
                self.output.display(),
                named.says().unwrap_or("something else"),
            ))
        };
        match (self.format, named) {
            (None, OutputName::Pftrace | OutputName::ChromeTrace) => Ok(DecodeFormat::Chrome),
            (None, _) => Ok(DecodeFormat::Window),
            (Some(DecodeFormat::Window), OutputName::Pftrace | OutputName::ChromeTrace) => clash(
                "window (the JSON that `cupmon merge` reads, which Perfetto does not open)",
                "leave out --format for a trace, or name the output *.window.json",
            ),
            (Some(DecodeFormat::Chrome | DecodeFormat::Pftrace), OutputName::Window) => clash(
                "chrome/pftrace (a trace)",
                "leave out --format for a trace window, or name the output *.trace.json.gz",
            ),
            (Some(f), _) => Ok(f),
        }
    }

    /// The trace format asked for (`None`: by OUT's name).
    pub fn trace_format(&self) -> Option<TraceFormat> {
        (self.format == Some(DecodeFormat::Pftrace)).then_some(TraceFormat::Pftrace)
    }
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    pub dump_dir: PathBuf,
    /// How many kernels to list by total GPU time.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// List the kernels with their full names (by default a name longer than the
    /// line has room for loses its template arguments and parameters: `kernel<…>(…)`).
    #[arg(long)]
    pub full_names: bool,
    /// GPU time by range name (NVTX ranges, cupmon.annotate): kernels and copies under
    /// the innermost range their launch ran in, as linked while a trace window was open.
    #[arg(long)]
    pub by_range: bool,
    /// Also list the source lines that launched the most GPU time (the innermost frame
    /// of each kernel's Python stack that is not torch's (Inductor's generated code included), Triton's, cupmon's or exec'd (`<string>`)), each
    /// with its kernels. Reads every kernel record of the slice.
    #[arg(long)]
    pub by_line: bool,
    #[command(flatten)]
    pub slice: crate::slice_args::SliceArgs,
    #[command(flatten)]
    pub timeline: crate::slice_args::TimelineArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the demo trace.
    #[arg(short, long, default_value = "cupmon-demo.trace.json.gz")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub settings: crate::setting_args::SettingArgs,
    /// Activity buffer size in MiB (older spelling of --buffer-size N MiB).
    #[arg(long, hide = true, value_name = "MIB")]
    pub buffer_mib: Option<u64>,
    /// The program and its arguments: after `--`, or from the first word that is
    /// not an option of `cupmon run` (everything from there on is the program's).
    /// An unknown option before it is an error, not the program (`--kepe 1G`).
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl RankArgs {
    /// `(rank, world size)` when `--rank` is given and fits the world size.
    pub fn checked(&self) -> Result<Option<(i64, Option<i64>)>, crate::exit::BadInput> {
        let Some(rank) = self.rank else {
            return Ok(None);
        };
        let bad = |msg: String| Err(crate::exit::BadInput(msg));
        match self.world_size {
            _ if rank < 0 => bad(format!("--rank {rank}: a rank is 0 or more")),
            Some(n) if rank >= n => bad(format!(
                "--rank {rank} is not a rank of a job of --world-size {n}"
            )),
            n => Ok(Some((rank, n))),
        }
    }
}
