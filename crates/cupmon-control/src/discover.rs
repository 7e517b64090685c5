//! Finding monitored processes: a dump directory names its control socket in
//! `cupmon_control.json`; a run directory holds dump directories; a pid is found
//! through its environment (`CUPMON_OUTPUT_DIR`) and the pid in those files.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file in a dump directory that names the process's control socket.
pub const CONTROL_FILE: &str = "cupmon_control.json";

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
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        cupmon_files::replace_file(&dump_dir.join(CONTROL_FILE), &bytes)
    }

    /// The control file of `dump_dir`, if there is a readable one. Anyone who can
    /// write the run directory can plant one; what it names is checked when the
    /// client connects ([`crate::Client`]), and it is read with a cap, never blocking.
    pub fn read(dump_dir: &Path) -> Option<Self> {
        let bytes =
            cupmon_files::read_capped(&dump_dir.join(CONTROL_FILE), MAX_CONTROL_FILE).ok()?;
        Self::parse(&bytes)
    }

    /// A control file's bytes, if they are one.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }
}

/// The most bytes a control file may have: a socket path (at most 4 KiB) and two numbers.
pub const MAX_CONTROL_FILE: u64 = 8 << 10;

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
    let environ = match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(environ) => environ,
        Err(e) if !Path::new(&format!("/proc/{pid}")).exists() => {
            return Err(format!("no process {pid} is running ({e})"));
        }
        Err(e) => {
            return Err(format!(
                "process {pid}: cannot read its environment ({e}): is it another user's?"
            ))
        }
    };
    let var = |name: &str| {
        let prefix = format!("{name}=");
        environ
            .split(|&b| b == 0)
            .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let injected = |name: &str| var(name).is_some_and(|v| v.contains("cupmon_inject"));
    // Only said, not required: a Python process that called
    // cupmon.start_collection has neither.
    let foreign = !injected("LD_PRELOAD")
        && !injected("CUDA_INJECTION64_PATH")
        && var("CUPMON_OUTPUT_DIR").is_none();
    let never = "it was not started by `cupmon run`: no libcupmon_inject.so in its LD_PRELOAD \
                 or CUDA_INJECTION64_PATH, no CUPMON_OUTPUT_DIR";
    // Read through /proc/PID/cwd (the process's own view of its directory);
    // name the directory in messages by where that link points.
    let proc_cwd = PathBuf::from(format!("/proc/{pid}/cwd"));
    let relative = |p: PathBuf| {
        let shown =
            std::fs::read_link(&proc_cwd).map_or_else(|_| proc_cwd.join(&p), |c| c.join(&p));
        (proc_cwd.join(p), shown)
    };
    let (base, shown) = match var("CUPMON_OUTPUT_DIR").map(PathBuf::from) {
        Some(p) if p.is_absolute() => (p.clone(), p),
        Some(p) => relative(p),
        None => relative(PathBuf::from("cupmon-out")),
    };
    if !base.is_dir() {
        let missing = format!(
            "its output directory {} does not exist: it has not initialised CUDA yet, or \
             was not monitored",
            shown.display()
        );
        return Err(not_monitored(pid, if foreign { never } else { &missing }));
    }
    let mut hits: Vec<Found> = std::fs::read_dir(&base)
        .map_err(|e| {
            format!(
                "process {pid}: its output directory {}: {e}",
                shown.display()
            )
        })?
        .flatten()
        .filter_map(|e| found(&e.path()))
        .filter(|f| f.control.pid == pid)
        .collect();
    // The live process first: `cupmon window PID` means the one running now.
    hits.sort_by_key(|f| (!f.alive, f.dump_dir.clone()));
    if hits.is_empty() {
        let none = format!(
            "no dump directory of it with a control channel in {}",
            shown.display()
        );
        return Err(not_monitored(pid, if foreign { never } else { &none }));
    }
    Ok(hits)
}

/// Process `pid` is not monitored, `why`, and how to monitor a program.
fn not_monitored(pid: u32, why: &str) -> String {
    format!(
        "process {pid} is not monitored by cupmon ({why}); to monitor a program, start it \
         with `cupmon run -o DIR -- PROGRAM ARGS...`, or set \
         CUDA_INJECTION64_PATH=/path/to/libcupmon_inject.so in its environment"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Until `exec`, a spawned child's /proc/PID/environ is still its parent's.
    fn execed(child: &std::process::Child) {
        for _ in 0..500 {
            let comm = std::fs::read_to_string(format!("/proc/{}/comm", child.id()));
            // The kernel names the new program before it lays out its environment:
            // wait for both, or an empty environ reads as "not monitored" (flaky).
            let environ = std::fs::read(format!("/proc/{}/environ", child.id()));
            if comm.is_ok_and(|c| c.trim() == "sleep") && environ.is_ok_and(|e| !e.is_empty()) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("sleep did not start");
    }

    #[test]
    fn regression_status_of_an_unmonitored_pid_printed_a_proc_cwd_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(dir.path())
            .env_remove("LD_PRELOAD")
            .env_remove("CUDA_INJECTION64_PATH")
            .spawn()
            .unwrap();
        execed(&child);
        let err = find_processes(&child.id().to_string())
            .map(|_| ())
            .unwrap_err();
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            err.starts_with(&format!(
                "process {} is not monitored by cupmon (",
                child.id()
            )),
            "{err}"
        );
        assert!(
            err.contains("cupmon run -o DIR --") && !err.contains("/proc/"),
            "{err}"
        );
    }

    #[test]
    fn a_monitored_pid_without_its_output_directory_names_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(dir.path())
            .env("LD_PRELOAD", "/opt/cupmon/libcupmon_inject.so")
            .env("CUPMON_OUTPUT_DIR", "prof")
            .spawn()
            .unwrap();
        execed(&child);
        let err = find_processes(&child.id().to_string())
            .map(|_| ())
            .unwrap_err();
        let _ = child.kill();
        let _ = child.wait();
        let shown = dir.path().canonicalize().unwrap().join("prof");
        assert!(err.contains("is not monitored by cupmon"), "{err}");
        assert!(
            err.contains(&format!(
                "its output directory {} does not exist",
                shown.display()
            )),
            "{err}"
        );
    }

    #[test]
    fn a_pid_that_is_not_running_is_said_so() {
        // Beyond the kernel's largest pid (4194304).
        let err = find_processes("4999999").map(|_| ()).unwrap_err();
        assert!(err.starts_with("no process 4999999 is running"), "{err}");
    }
}
