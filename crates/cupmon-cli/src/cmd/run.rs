//! `cupmon run -- CMD`: run a program with the injection library, then
//! summarise what was recorded.

mod metrics;
mod signal;
mod summary;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use anyhow::{Context, Result};
use cupmon_config::{env_vars, MonitorConfig, TraceFormat, SETTINGS};

use crate::cli::RunArgs;
use crate::exit::BadInput;

const INJECT_LIBRARY: &str = "libcupmon_inject.so";

/// The settings of the run: the environment's `CUPMON_*` variables, then the flags,
/// checked together. Any problem is bad input, before the program starts.
fn settings(args: &RunArgs) -> Result<MonitorConfig> {
    let mut config = MonitorConfig::new("");
    let bad = |e: cupmon_config::ConfigError| BadInput(format!("not starting the program: {e}"));
    config.apply_env(|k| std::env::var(k).ok()).map_err(bad)?;
    if let Some(mib) = args.buffer_mib {
        config
            .set("buffer_size", &format!("{mib}MiB"))
            .map_err(bad)?;
    }
    for (name, value) in &args.settings.given {
        config.set(name, value).map_err(bad)?;
    }
    config.validate().map_err(bad)?;
    Ok(config)
}

pub fn run(args: &RunArgs) -> Result<i32> {
    let mut config = settings(args)?;
    let library = find_inject_library()?;
    let created = !config.output_dir.exists();
    std::fs::create_dir_all(&config.output_dir).map_err(|e| {
        BadInput(format!(
            "{}: cannot create the output directory: {e}",
            config.output_dir.display()
        ))
    })?;
    let output = config
        .output_dir
        .canonicalize()
        .context("output directory")?;
    config.output_dir = output.clone();
    let run = RunId::new();
    let before = dump_dirs(&output);
    let earlier_refusals = refusals(&output, &run);
    let mut command = Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    // Preloaded too, so that other CUPTI clients in the program (torch.profiler)
    // call cupmon's CUPTI entry points and share CUPTI instead of taking it.
    let preload = match std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        Some(existing) => {
            let mut joined = library.clone().into_os_string();
            joined.push(":");
            joined.push(existing);
            joined
        }
        None => library.clone().into_os_string(),
    };
    command
        .env("LD_PRELOAD", preload)
        .env("CUDA_INJECTION64_PATH", &library)
        .env(env_vars::INJECT_LIBRARY, &library)
        .env(env_vars::RUN_ID, &run.0)
        .env_remove(env_vars::DEBUG);
    nvtx_to_cupmon(&mut command, &library);
    // The validated settings, whole: what the injection library reads is what was checked.
    for s in SETTINGS {
        match s.show(&config) {
            Some(value) => command.env(s.env, value),
            None => command.env_remove(s.env),
        };
    }
    let metrics = match metrics::start(&config, &output, &run, &before) {
        Ok(m) => m,
        Err(e) => {
            if created {
                let _ = std::fs::remove_dir(&output);
            }
            return Err(e);
        }
    };
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            if let Some(m) = metrics {
                m.stop();
            }
            return Err(BadInput(format!("cannot run {:?}: {e}", args.command[0])).into());
        }
    };
    let pid = child.id();
    if config.window_on_signal {
        signal::toggle_windows_on_sigusr2(&output, run.clone())?;
        eprintln!(
            "cupmon: `kill -USR2 {}` (this cupmon) opens a trace window in every monitored \
             process of the run, a second one closes them; `cupmon window {}` does the same \
             from any shell",
            std::process::id(),
            output.display()
        );
    }
    forward_signals_to(pid);
    let status = child.wait().context("waiting for the program")?;
    if let Some(m) = metrics {
        m.stop();
    }
    let code = exit_code(status);
    let recorded = summarise(
        &output,
        &before,
        &earlier_refusals,
        &run,
        config.trace_format,
    );
    if !recorded && created {
        // Made for this run, and still empty: a run that recorded nothing
        // leaves nothing behind. (Not empty: something else wrote there.)
        let _ = std::fs::remove_dir(&output);
    }
    Ok(code)
}

/// NVTX's ranges go to cupmon's library, unless the user named another NVTX tool
/// (Nsight Systems sets `NVTX_INJECTION64_PATH`): that one keeps them, and cupmon says so.
fn nvtx_to_cupmon(command: &mut Command, library: &Path) {
    const NVTX_VAR: &str = "NVTX_INJECTION64_PATH";
    match std::env::var_os(NVTX_VAR).filter(|v| !v.is_empty()) {
        Some(other) if Path::new(&other) != library => eprintln!(
            "cupmon: {NVTX_VAR} is set ({}): NVTX ranges go to that tool, not to cupmon's \
             traces",
            Path::new(&other).display()
        ),
        _ => {
            command.env(NVTX_VAR, library);
        }
    }
}

/// What tells this run's dumps from those of another `cupmon run` writing into the same
/// output directory at the same time: cupmon's pid and start time, handed to the
/// program as `CUPMON_RUN_ID` and written into each dump's meta (`run_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunId(String);

impl RunId {
    fn new() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Self(format!("{}-{now}", std::process::id()))
    }

    /// Whether the dump directory `dir` may be this run's: its meta names this run, or
    /// no run (a dump of a writer that does not say, kept as before).
    pub(crate) fn owns(&self, dir: &Path) -> bool {
        let path = dir.join(cupmon_records::dump::META_FILE);
        match cupmon_records::MetaFile::read(path) {
            Ok(meta) => self.names(meta.json().get("run_id").and_then(|v| v.as_str())),
            // Unreadable: the summary says why, as before.
            Err(_) => true,
        }
    }

    fn names(&self, run_id: Option<&str>) -> bool {
        run_id.is_none_or(|id| id == self.0)
    }
}

/// The traced program's exit code; 128 + N when a signal ended it, as a shell reports it.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// The injection library: `CUPMON_INJECT_LIBRARY`, or next to this binary
/// (as `cargo build` and the Python wheel place it), or in `../lib`.
fn find_inject_library() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(env_vars::INJECT_LIBRARY) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(BadInput(format!(
                "{}={} does not exist",
                env_vars::INJECT_LIBRARY,
                path.display()
            ))
            .into())
        };
    }
    let exe = std::env::current_exe().context("locating the cupmon binary")?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let candidates = [
        dir.join(INJECT_LIBRARY),
        dir.join("../lib").join(INJECT_LIBRARY),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .ok_or_else(|| {
            BadInput(format!(
                "cannot find {INJECT_LIBRARY} (looked in {}); build it with `cargo build --release` \
                 or set {}",
                candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
                env_vars::INJECT_LIBRARY
            ))
            .into()
        })
}

static CHILD: AtomicU32 = AtomicU32::new(0);
static INTERRUPTS: AtomicI32 = AtomicI32::new(0);

/// Ctrl-C reaches the program through the terminal; cupmon stays to
/// summarise. A second Ctrl-C (or a SIGTERM to cupmon) is passed on: first
/// as SIGTERM, then as SIGKILL.
fn forward_signals_to(pid: u32) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    CHILD.store(pid, Ordering::Relaxed);
    let installed = ctrlc::set_handler(|| {
        let n = INTERRUPTS.fetch_add(1, Ordering::Relaxed);
        let child = Pid::from_raw(CHILD.load(Ordering::Relaxed) as i32);
        let signal = if n == 0 {
            Signal::SIGTERM
        } else {
            Signal::SIGKILL
        };
        if n > 0 {
            eprintln!("\ncupmon: killing the program (its dump is readable up to the last complete chunk)");
        }
        let _ = kill(child, signal);
    });
    if let Err(e) = installed {
        eprintln!("cupmon: warning: cannot handle Ctrl-C: {e}");
    }
}

/// Subdirectories of the output directory that look like dumps.
fn dump_dirs(output: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(output)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(cupmon_records::dump::META_FILE).is_file())
        .collect()
}

/// Says what the run recorded (each new dump's summary), or why nothing; whether
/// anything was: a dump, or a status file saying why a process was not monitored.
fn summarise(
    output: &Path,
    before: &BTreeSet<PathBuf>,
    earlier_refusals: &[Refusal],
    run: &RunId,
    trace_format: TraceFormat,
) -> bool {
    // New dumps of this run: another run into the same directory has its own.
    let new: Vec<PathBuf> = dump_dirs(output)
        .difference(before)
        .filter(|dir| run.owns(dir))
        .cloned()
        .collect();
    // Status files written (or rewritten) during this run.
    let refused: Vec<Refusal> = refusals(output, run)
        .into_iter()
        .filter(|r| !earlier_refusals.contains(r))
        .collect();
    for Refusal { dir, reason, .. } in &refused {
        eprintln!("cupmon: {} was not monitored: {reason}", dir.display());
    }
    if new.is_empty() && !refused.is_empty() {
        return true;
    }
    if new.is_empty() {
        eprintln!("cupmon: {}", nothing_recorded());
        return false;
    }
    for dir in &new {
        // The processes wrote their windows' JSON only: their traces are made here.
        super::shared::window_trace::write_missing_traces(dir, trace_format);
        summary::print(dir);
    }
    true
}

/// A status file in which the injection library said why it did not monitor a process.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    dir: PathBuf,
    reason: String,
    modified: Option<std::time::SystemTime>,
}

/// The refusals under the output directory (none of them a dump), but those of
/// another run.
fn refusals(output: &Path, run: &RunId) -> Vec<Refusal> {
    std::fs::read_dir(output)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.join(cupmon_records::dump::META_FILE).is_file())
        .filter_map(|dir| {
            let refusal = cupmon_records::dump::read_refusal(&dir)?;
            if !run.names(refusal.run_id.as_deref()) {
                return None;
            }
            let reason = refusal.reason;
            let modified = std::fs::metadata(dir.join(cupmon_records::dump::STATUS_FILE))
                .and_then(|m| m.modified())
                .ok();
            Some(Refusal {
                dir,
                reason,
                modified,
            })
        })
        .collect()
}

/// Why a run left no dump: no driver on this machine, or no process of the
/// program recorded GPU activity (the injection library removes the dump of
/// one that initialised CUDA and launched nothing, and none is made for one
/// that never initialised it).
fn nothing_recorded() -> String {
    match cupmon_cupti::find_driver() {
        Err(e) => format!(
            "{e}: no process of the program could use CUDA, and nothing was recorded (no dump \
             written); cupmon needs an NVIDIA GPU with its driver"
        ),
        Ok(()) => "the program never used CUDA: none of its processes initialised CUDA or \
                   launched a kernel, copy or memset, so nothing was recorded (no dump written)"
            .to_owned(),
    }
}
