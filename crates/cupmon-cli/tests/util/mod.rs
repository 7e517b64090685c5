//! Helpers of the regression tests: the real `cupmon` binary run as a child
//! that is killed if the test ends first (a panic, a hang caught by the
//! timeout), scratch directories, FIFOs and fixtures.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Long enough for a debug build on a loaded machine; short enough that a
/// hang fails the test instead of the CI job.
pub const TIMEOUT: Duration = Duration::from_secs(120);

pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cupmon"))
}

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(rel)
}

pub const DUMP_FILES: [&str; 3] = [
    "cupti_monitor_meta.bin",
    "cupti_monitor_raw_buffers.bin",
    "kernel_names.tsv",
];

/// A copy of the torch_mlp dump in `dir` (created).
pub fn copy_dump(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    for name in DUMP_FILES {
        std::fs::copy(fixture("torch_mlp").join(name), dir.join(name)).expect("copy");
    }
}

/// `cupmon ARGS` in `cwd`.
pub fn command(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(cwd);
    cmd
}

/// A running child; killed and reaped on drop.
#[derive(Debug)]
pub struct Running {
    child: Child,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

fn drain(src: Option<impl Read + Send + 'static>) -> Option<JoinHandle<Vec<u8>>> {
    src.map(|mut s| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = s.read_to_end(&mut buf);
            buf
        })
    })
}

impl Running {
    /// Start `cmd` with stdout and stderr captured (stdin as the caller set it).
    pub fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start cupmon");
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        Self {
            child,
            stdout,
            stderr,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn stdin(&mut self) -> ChildStdin {
        self.child.stdin.take().expect("stdin was piped")
    }

    /// Stop reading stdout: the child's next write gets a broken pipe.
    pub fn close_stdout(&mut self) {
        self.stdout = None;
    }

    /// The exit status, if the child has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// Wait (at most [`TIMEOUT`]) and collect what it printed.
    pub fn finish(self) -> Output {
        self.finish_within(TIMEOUT)
    }

    /// Wait at most `limit` (then kill it and fail: it hung) and collect what it
    /// printed.
    pub fn finish_within(mut self, limit: Duration) -> Output {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.exited() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let err = self.stderr.take().map(|h| h.join().unwrap_or_default());
                panic!(
                    "cupmon still running after {limit:?} (hung); stderr: {}",
                    String::from_utf8_lossy(&err.unwrap_or_default())
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let join = |h: Option<JoinHandle<Vec<u8>>>| {
            h.map_or_else(Vec::new, |h| h.join().unwrap_or_default())
        };
        Output {
            status,
            stdout: join(self.stdout.take()),
            stderr: join(self.stderr.take()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cupmon ARGS` in `cwd`, to the end.
pub fn cupmon(cwd: &Path, args: &[&str]) -> Output {
    Running::start(command(cwd, args)).finish()
}

/// `cupmon` with the arguments of a line split at spaces, in `cwd`, to the end.
pub fn cupmon_line(cwd: &Path, line: &str) -> Output {
    cupmon(cwd, &line.split_whitespace().collect::<Vec<_>>())
}

/// [`command`] with the arguments of a line split at spaces.
pub fn command_line(cwd: &Path, line: &str) -> Command {
    command(cwd, &line.split_whitespace().collect::<Vec<_>>())
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{:?}; stderr: {}",
        out.status,
        stderr(out)
    );
    assert!(!stderr(out).contains("panicked"), "{}", stderr(out));
}

/// Exit code 2 and one line `cupmon: error: ...` that mentions each of `mentions`.
pub fn assert_bad_input(out: &Output, mentions: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {err}");
    assert!(lines[0].starts_with("cupmon: error: "), "{err}");
    for m in mentions {
        assert!(err.contains(m), "{m:?} not in {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

/// Names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// cupmon's hidden temporary files (`.NAME.XXXXXX.tmp`) in `dir`.
pub fn temps(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
        .collect()
}

/// Make a FIFO; false (with a loud SKIPPED line) where mkfifo is missing.
pub fn mkfifo(path: &Path) -> bool {
    let made = Command::new("mkfifo").arg(path).status();
    if made.is_ok_and(|s| s.success()) {
        return true;
    }
    cupmon_test_skip::skipped!("mkfifo {} failed or is not installed", path.display());
    false
}

/// Write `bytes` into the FIFO at `path` from a thread (opening it waits
/// for cupmon to open it); with `hold`, keep it open after writing (cupmon
/// never sees the end) until `hold`'s sender is dropped. The thread is
/// joined only after cupmon succeeded, so a cupmon that never opens the FIFO
/// cannot hang a test.
pub fn feed_fifo(
    path: &Path,
    bytes: Vec<u8>,
    hold: Option<std::sync::mpsc::Receiver<()>>,
) -> JoinHandle<std::io::Result<()>> {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let mut fifo = std::fs::OpenOptions::new().write(true).open(&path)?;
        std::io::Write::write_all(&mut fifo, &bytes)?;
        if let Some(hold) = hold {
            let _ = hold.recv();
        }
        Ok(())
    })
}

/// Read the FIFO at `path` to its end in a thread. [`FifoReader::finish`]
/// returns what it read, and cannot hang: also when nobody ever opened the
/// FIFO for writing, or the FIFO was replaced (a rename over it) while the
/// thread waited in open().
pub struct FifoReader {
    /// A second read end, opened without blocking: a handle on the FIFO
    /// itself, whatever happens to its path.
    keeper: std::fs::File,
    thread: JoinHandle<std::io::Result<Vec<u8>>>,
}

impl FifoReader {
    pub fn start(path: &Path) -> Self {
        use std::os::unix::fs::OpenOptionsExt;
        let keeper = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .expect("open fifo");
        let p = path.to_path_buf();
        Self {
            keeper,
            thread: std::thread::spawn(move || std::fs::read(p)),
        }
    }

    pub fn finish(self) -> Vec<u8> {
        use std::os::fd::AsRawFd;
        // A writer that opens and closes lets a reader still waiting in
        // open() through, to the end of the data.
        let me = format!("/proc/self/fd/{}", self.keeper.as_raw_fd());
        let _ = std::fs::OpenOptions::new().write(true).open(me);
        self.thread.join().expect("join").expect("read fifo")
    }
}

/// A JSON file (`.gz` by name) or text, parsed.
pub fn parse_json(bytes: &[u8], gz: bool) -> serde_json::Value {
    let mut text = Vec::new();
    if gz {
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut text)
            .expect("gunzip");
    } else {
        text = bytes.to_vec();
    }
    serde_json::from_slice(&text).expect("JSON")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    parse_json(
        &std::fs::read(path).expect("read"),
        path.to_string_lossy().ends_with(".gz"),
    )
}

/// Whether the tests run as root (who may write anywhere, /dev included).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new().expect("tempfile");
    probe.as_file().metadata().expect("meta").uid() == 0
}
