//! Finding monitored processes: a dump directory names its control socket in
//! `cupmon_control.json`; a run directory holds dump directories; a pid is found
//! through its environment (`CUPMON_OUTPUT_DIR`) and the pid in those files.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file in a dump directory that names the process's control socket.
pub const CONTROL_FILE: &str = "cupmon_control.json";

/// A control file is a socket path, a pid and a start time: a few hundred bytes.
const CONTROL_FILE_CAP: u64 = 64 * cupmon_files::KIB;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlFile {
    pub socket: PathBuf,
    pub pid: u32,
    /// When the process started, in clock ticks after boot (`/proc/PID/stat`): a
    /// later process with the same pid is not this one. Absent in files of older
    /// cupmon versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<u64>,
}

impl ControlFile {
    /// Write it into `dump_dir` (temporary file and rename).
    pub fn write(&self, dump_dir: &Path) -> std::io::Result<()> {
        let tmp = dump_dir.join(format!(".{CONTROL_FILE}.tmp"));
        std::fs::write(&tmp, serde_json::to_vec(self).unwrap_or_default())?;
        std::fs::rename(&tmp, dump_dir.join(CONTROL_FILE))
    }

    /// Read it from `dump_dir` by the rule every file of a run directory is read by:
    /// a FIFO or a link to `/dev/zero` planted in its place is no control file.
    pub fn read(dump_dir: &Path) -> Option<Self> {
        let bytes =
            cupmon_files::read_capped(&dump_dir.join(CONTROL_FILE), CONTROL_FILE_CAP).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// A process found under a target, alive or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub dump_dir: PathBuf,
    pub control: ControlFile,
    /// Whether the process still runs: its pid exists and, where the control file
    /// says when it started, started then (not a later process given the same pid).
    pub alive: bool,
}

/// When process `pid` started, in clock ticks after boot (field 22 of
/// `/proc/PID/stat`, read after the command name, which may hold spaces).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    start_ticks_in(&format!("/proc/{pid}/stat"))
}

/// [`process_start_ticks`] of the calling process (through `/proc/self`, right
/// also where /proc belongs to another pid namespace than the process's pid).
pub(crate) fn own_start_ticks() -> Option<u64> {
    start_ticks_in("/proc/self/stat")
}

fn start_ticks_in(stat: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(stat).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn alive(control: &ControlFile) -> bool {
    match control.started {
        Some(started) => process_start_ticks(control.pid) == Some(started),
        None => Path::new(&format!("/proc/{}", control.pid)).exists(),
    }
}

fn found(dump_dir: &Path) -> Option<Found> {
    let control = ControlFile::read(dump_dir)?;
    Some(Found {
        alive: alive(&control),
        dump_dir: dump_dir.to_path_buf(),
        control,
    })
}

/// The monitored processes of `target`: a dump directory, a `cupmon run` output
/// directory (its dump directories, sorted), or a pid. `Err` says why none can be.
pub fn find_processes(target: &str) -> Result<Vec<Found>, String> {
    if let Ok(pid) = target.parse::<u32>() {
        if !Path::new(target).exists() {
            return by_pid(pid);
        }
    }
    let path = Path::new(target);
    if !path.is_dir() {
        return Err(format!(
            "{target}: not a directory or a pid (give a `cupmon run` output directory, a dump \
             directory or a process id)"
        ));
    }
    if let Some(one) = found(path) {
        return Ok(vec![one]);
    }
    let mut all: Vec<Found> = std::fs::read_dir(path)
        .map_err(|e| format!("{target}: {e}"))?
        .flatten()
        .filter_map(|e| found(&e.path()))
        .collect();
    all.sort_by(|a, b| a.dump_dir.cmp(&b.dump_dir));
    if all.is_empty() {
        return Err(format!(
            "{target}: no monitored process has a control channel here (no {CONTROL_FILE} in \
             it or its subdirectories)"
        ));
    }
    Ok(all)
}

/// The dump directory of process `pid`, from its `CUPMON_OUTPUT_DIR` (or
/// `cupmon-out` in its working directory): those whose control file names the pid.
/// Several when earlier processes had the pid (dump directories are never reused);
/// only the one that started when `pid` did is alive, and it comes first.
fn by_pid(pid: u32) -> Result<Vec<Found>, String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ"))
        .map_err(|e| format!("process {pid}: {e} (is it running, and yours?)"))?;
    let output = environ
        .split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(b"CUPMON_OUTPUT_DIR="))
        .map(|v| PathBuf::from(String::from_utf8_lossy(v).into_owned()));
    let base = match output {
        Some(p) if p.is_absolute() => p,
        Some(p) => PathBuf::from(format!("/proc/{pid}/cwd")).join(p),
        None => PathBuf::from(format!("/proc/{pid}/cwd/cupmon-out")),
    };
    let mut hits: Vec<Found> = std::fs::read_dir(&base)
        .map_err(|e| {
            format!(
                "process {pid}: its output directory {}: {e}",
                base.display()
            )
        })?
        .flatten()
        .filter_map(|e| found(&e.path()))
        .filter(|f| f.control.pid == pid)
        .collect();
    // The live process first: `cupmon window PID` means the one running now.
    hits.sort_by_key(|f| (!f.alive, f.dump_dir.clone()));
    if hits.is_empty() {
        return Err(format!(
            "process {pid} is not monitored by cupmon (no dump directory of it with a control \
             channel in {})",
            base.display()
        ));
    }
    Ok(hits)
}
