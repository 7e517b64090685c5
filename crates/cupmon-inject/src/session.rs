//! The process's one monitoring session, shared by the injection entry
//! point, the signal and schedule threads, and the C ABI.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cupmon_monitor::{env_vars, Monitor, MonitorConfig, MonitorError, MonitorStats, StateError};
use cupmon_window::TraceWindow;

/// A running monitor and what it has written.
#[derive(Debug)]
pub struct Session {
    pub monitor: Monitor,
    /// Started by `InitializeInjection` (rather than through the C ABI).
    pub injected: bool,
    /// Windows written as `window-N.json` so far.
    pub windows_written: AtomicU32,
    /// Who opened the open window, when, and how many steps it has left.
    pub window_owner: Mutex<Option<WindowOwner>>,
    /// The files of the last window written.
    pub last_window: Mutex<Option<cupmon_control::LastWindow>>,
    /// Steps the program has marked (`cupmon.step()`).
    pub steps: AtomicU64,
    /// The control channel's socket, removed when the session stops.
    pub control_socket: Mutex<Option<PathBuf>>,
}

/// Who opened a trace window.
#[derive(Debug, Clone)]
pub struct WindowOwner {
    /// `cupmon window`, `python`, `SIGUSR2`, `schedule`.
    pub who: String,
    pub since_unix_ns: u64,
    /// The window closes itself after this many more steps.
    pub steps_left: Option<u64>,
}

pub(crate) fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn lock_owner(s: &Session) -> MutexGuard<'_, Option<WindowOwner>> {
    s.window_owner.lock().unwrap_or_else(|p| p.into_inner())
}

impl Session {
    /// Open a trace window for `who`; with `steps`, it closes itself after that many
    /// steps. Refused, naming who has it, when a window is already open.
    pub fn open_window(&self, who: &str, steps: Option<u64>) -> Result<u64, MonitorError> {
        let mut owner = lock_owner(self);
        if self.monitor.window_open() {
            return Err(StateError::WindowAlreadyOpen.into());
        }
        let start = self.monitor.start_window()?;
        *owner = Some(WindowOwner {
            who: who.to_owned(),
            since_unix_ns: unix_ns(),
            steps_left: steps,
        });
        Ok(start)
    }

    /// Who holds the open window, for messages.
    pub fn window_owner(&self) -> Option<WindowOwner> {
        lock_owner(self).clone()
    }

    /// One step of the program: counts it, and closes a window opened for a number of
    /// steps when they are done (writing its files). Returns the files when it did.
    pub fn step(&self) -> Result<Option<PathBuf>, MonitorError> {
        self.steps.fetch_add(1, Ordering::Relaxed);
        let done = {
            let mut owner = lock_owner(self);
            match owner.as_mut().and_then(|o| o.steps_left.as_mut()) {
                Some(left) => {
                    *left = left.saturating_sub(1);
                    *left == 0
                }
                None => false,
            }
        };
        if done {
            return end_window_to_files();
        }
        Ok(None)
    }
}

/// The session, shared: callers clone the `Arc` and release the lock before
/// working, so that a slow call (a flush that hands records to another CUPTI
/// client, whose callbacks may call back into cupmon) never holds it.
static SESSION: Mutex<Option<Arc<Session>>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<Arc<Session>>> {
    SESSION.lock().unwrap_or_else(|p| p.into_inner())
}

/// The running session, if any. None in a child made by `fork`: the session is
/// the parent's, and its threads are not in the child.
pub(crate) fn current() -> Option<Arc<Session>> {
    if !crate::owner::is_owner() {
        return None;
    }
    lock().clone()
}

/// Start the session unless one is running.
pub(crate) fn start(config: MonitorConfig, injected: bool) -> Result<(), MonitorError> {
    let mut session = lock();
    if let Some(s) = session.as_ref() {
        return Err(StateError::AlreadyMonitoring {
            dump_dir: s.monitor.config().dump_dir.clone(),
        }
        .into());
    }
    // Before CUPTI 13.3 a process has one callback subscriber. Without this library's
    // CUPTI entry points in front (nothing preloaded: the Python API without `cupmon
    // run`), cupmon counting launches would take it from torch.profiler, whose
    // `cuptiSubscribe` would then fail: leave it, and say why launches are not counted.
    cupmon_cupti::leave_callback_slot((!crate::interpose::interposed()).then(|| {
        "cupmon's library is not preloaded (started without `cupmon run`), so CUPTI's one \
         callback subscriber is left to other clients such as torch.profiler; run under \
         `cupmon run` to count launches"
            .to_owned()
    }));
    let monitor = Monitor::start(config)?;
    let started = Arc::new(Session {
        monitor,
        injected,
        windows_written: AtomicU32::new(0),
        window_owner: Mutex::new(None),
        last_window: Mutex::new(None),
        steps: AtomicU64::new(0),
        control_socket: Mutex::new(None),
    });
    crate::interpose::attach(&started);
    crate::owner::claim();
    *session = Some(started.clone());
    drop(session);
    // The channel of `cupmon window` / `cupmon status`; without it the process is
    // still monitored.
    match cupmon_control::serve(&started.monitor.config().dump_dir, crate::control::Channel) {
        Ok(server) => {
            *started
                .control_socket
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(server.socket)
        }
        Err(e) => {
            cupmon_log::warn!("no control channel (cupmon window cannot reach this process): {e}")
        }
    }
    Ok(())
}

/// Run `f` on the running monitor (without holding the session lock).
pub(crate) fn with<T>(
    f: impl FnOnce(&Session) -> Result<T, MonitorError>,
) -> Result<T, MonitorError> {
    match current() {
        Some(session) => f(&session),
        None => Err(StateError::NotMonitoring.into()),
    }
}

/// Held for the length of a stop: a second caller (the signal thread, the flush
/// at `_exit`, the C ABI) waits for the first to finish, so that the process does
/// not end in the middle of it.
static STOPPING: Mutex<()> = Mutex::new(());

/// The thread that holds [`STOPPING`] (0: none): a stop called again from inside
/// the stop (a CUPTI client's callback) returns at once instead of waiting for itself.
static STOPPING_THREAD: AtomicI32 = AtomicI32::new(0);

/// Whether the calling thread is stopping the session now. Async-signal-safe.
pub(crate) fn stopping_here() -> bool {
    STOPPING_THREAD.load(Ordering::SeqCst) == crate::owner::thread_id()
}

/// Clears [`STOPPING_THREAD`] however the stop ends.
struct StoppingThread;

impl Drop for StoppingThread {
    fn drop(&mut self) {
        STOPPING_THREAD.store(0, Ordering::SeqCst);
    }
}

/// Stop the session (closing and writing an open window). None if none ran, if
/// another thread stopped it (after waiting for that stop to end), if called from
/// inside a stop, or in a child made by `fork` (which must not touch the parent's
/// session).
pub(crate) fn stop() -> Option<Result<MonitorStats, MonitorError>> {
    if !crate::owner::is_owner() || stopping_here() {
        return None;
    }
    let _one_at_a_time = STOPPING.lock().unwrap_or_else(|p| p.into_inner());
    STOPPING_THREAD.store(crate::owner::thread_id(), Ordering::SeqCst);
    let _clear = StoppingThread;
    let session = lock().take()?;
    let dir = session.monitor.config().dump_dir.clone();
    let written = session.windows_written.load(Ordering::Relaxed);
    let stopped = session.monitor.stop();
    crate::clients::WITHHOLD_API.store(false, Ordering::Relaxed);
    crate::interpose::detach();
    if let Some(socket) = session
        .control_socket
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        let _ = std::fs::remove_file(socket);
    }
    let injected = session.injected;
    Some(stopped.map(|(stats, window)| {
        if let Some(window) = window {
            write_window_file(&dir, written, &window);
        } else if injected && recorded_nothing(&stats) {
            remove_empty_dump(&dir);
        }
        stats
    }))
}

/// Whether a session ends with nothing in its dump worth a directory: no record
/// kept, dropped, lost or retired, and no trace window taken. A process that
/// initialises CUDA and launches nothing (torchrun's launcher, a tool asking
/// for the device count) ends so.
fn recorded_nothing(stats: &MonitorStats) -> bool {
    stats.records == 0
        && stats.dropped_records == 0
        && stats.buffers_lost == 0
        && stats.decode_errors == 0
        && stats.retired_segments == 0
        && stats.windows_taken == 0
}

/// Remove the dump directory of an injected process that recorded nothing, so
/// that it does not show in `cupmon report`, `window` or `export-parquet` as a
/// process (the directory is this process's own: new, never reused). `cupmon
/// run` says when no process of a run recorded anything.
fn remove_empty_dump(dir: &Path) {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => cupmon_log::info!(
            "this process recorded no GPU activity: its empty dump {} was removed",
            dir.display()
        ),
        Err(e) => cupmon_log::warn!(
            "this process recorded no GPU activity, but its empty dump {} could not be \
             removed: {e}",
            dir.display()
        ),
    }
}

/// End the open window, however it was opened. Other CUPTI clients get
/// runtime and driver records again afterwards (not before: the window's
/// final flush still belongs to it).
pub(crate) fn end_window(session: &Session) -> Result<TraceWindow, MonitorError> {
    let window = session.monitor.end_window();
    crate::clients::WITHHOLD_API.store(false, Ordering::Relaxed);
    lock_owner(session).take();
    window
}

/// End the open window and write `window-N.json` into the dump directory. The
/// trace of it is made outside this process (`cupmon run` when the program ends,
/// `cupmon window` when it closes the window, `cupmon export`, or the Python side):
/// the traced program never pays for JSON, gzip or Perfetto. `Ok(None)` when no
/// window is open (or no session).
pub(crate) fn end_window_to_files() -> Result<Option<PathBuf>, MonitorError> {
    let Some(session) = current() else {
        return Ok(None);
    };
    if !session.monitor.window_open() {
        return Ok(None);
    }
    let window = end_window(&session)?;
    let dir = session.monitor.config().dump_dir.clone();
    let n = session.windows_written.fetch_add(1, Ordering::Relaxed);
    let path = write_window_file(&dir, n, &window);
    *session
        .last_window
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = Some(cupmon_control::LastWindow {
        number: n,
        window_json: path.display().to_string(),
        trace: None,
        events: window.events.len() as u64,
        trace_format: Some(session.monitor.config().trace_format.name().to_owned()),
    });
    Ok(Some(path))
}

/// Write a window as `window-N.json` (through a temporary file: a reader never
/// sees half of it); problems are reported, not fatal (the program being traced
/// must go on).
fn write_window_file(dir: &Path, n: u32, window: &TraceWindow) -> PathBuf {
    let json_path = dir.join(format!("window-{n}.json"));
    let written = serde_json::to_vec(window)
        .map_err(|e| e.to_string())
        .and_then(|bytes| {
            cupmon_files::replace_file(&json_path, &bytes).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        cupmon_log::error!("cannot write {}: {e}", json_path.display());
    }
    json_path
}

/// The settings of an injected session, from the environment (validated). The
/// dump directory comes from [`new_dump_dir`], once the session is to start.
pub(crate) fn config_from_env() -> Result<MonitorConfig, MonitorError> {
    Ok(MonitorConfig::new("").with_env(|k| std::env::var(k).ok())?)
}

/// A new dump directory for this process under `output`: never an existing one,
/// so that a later process given the same pid (a container's pid 1 on a persistent
/// volume) cannot overwrite this one's dump.
pub(crate) fn new_dump_dir(output: &Path) -> Result<PathBuf, cupmon_control::DumpDirError> {
    let rank = std::env::var(env_vars::RANK).ok();
    cupmon_control::create_dump_dir(
        output,
        rank.as_deref(),
        std::process::id(),
        std::time::SystemTime::now(),
    )
}

/// The output directory of the environment, for the status file when the
/// settings themselves are unusable.
pub(crate) fn output_dir_from_env() -> PathBuf {
    std::env::var_os("CUPMON_OUTPUT_DIR").map_or_else(|| PathBuf::from("cupmon-out"), PathBuf::from)
}
