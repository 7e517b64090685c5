//! Issue 28, the control channel: `cupmon status` and `cupmon window` against peers
//! that lie, flood, drip, run as another user or name files outside their dump
//! directory. A fake peer is a thread of this test process answering on a socket
//! named by a `cupmon_control.json` it writes (so of this uid, and its pid); the peer
//! of another uid is this test binary run again as `nobody` (root only, else SKIPPED).

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cupmon_control::{process_start_ticks, ControlFile};
use serde_json::json;

use crate::util::{cupmon, is_root, stderr, stdout};

/// Say that a test could not run where `cargo test` shows it: straight to the
/// process's stderr (the harness captures only `eprintln!`).
fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {why}");
}

/// What a fake peer does with one connection, given the request line.
type Behave = dyn Fn(&mut UnixStream, &serde_json::Value) + Send + Sync;

/// A fake monitored process: a socket in `dump` served by a thread of this process,
/// named in `dump`'s control file (pid and start of this process unless told).
struct FakePeer {
    stop: Arc<AtomicBool>,
}

impl FakePeer {
    fn start(dump: &Path, pid: Option<u32>, behave: Box<Behave>) -> Self {
        let socket = dump.join("control.sock");
        let listener = UnixListener::bind(&socket).expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let pid = pid.unwrap_or_else(std::process::id);
        ControlFile {
            socket,
            pid,
            started: process_start_ticks(pid),
        }
        .write(dump)
        .expect("control file");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let behave: Arc<Behave> = Arc::from(behave);
        std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        let behave = Arc::clone(&behave);
                        std::thread::spawn(move || {
                            let _ = s.set_nonblocking(false);
                            let request = read_line(&mut s);
                            behave(&mut s, &request);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Self { stop }
    }
}

impl Drop for FakePeer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn read_line(s: &mut UnixStream) -> serde_json::Value {
    let mut line = Vec::new();
    let mut byte = [0u8];
    while s.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    serde_json::from_slice(&line).unwrap_or_default()
}

fn answer(s: &mut UnixStream, value: serde_json::Value) {
    let _ = s.write_all(format!("{value}\n").as_bytes());
}

/// A status answer of process `pid` whose dump directory is `dump_dir`.
fn status(pid: u32, dump_dir: &Path, command: &str) -> serde_json::Value {
    json!({
        "result": "status", "pid": pid, "rank": 3, "command": [command],
        "dump_dir": dump_dir.display().to_string(), "started_unix_ns": 1, "uptime_s": 1.0,
        "kernels_per_s": 0.0, "records": 0, "dropped_records": 0, "dump_bytes": 0,
        "window": {"open": false}, "windows_written": 0
    })
}

/// A `sleep` to name in a control file: a live process that is not the peer.
struct Sleeper(std::process::Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run_timed(cwd: &Path, args: &[&str]) -> (Output, Duration) {
    let t0 = Instant::now();
    let out = cupmon(cwd, args);
    (out, t0.elapsed())
}

/// Issue 28: `cupmon status` aborted out of memory on a flooding peer, was held
/// forever by one that drips (`--timeout` bounded each read), and trusted any
/// control file. Each case: one fake process, `status --all --timeout 3s`; what it
/// must say, and that it is done within the timeout (plus the start of a debug
/// binary on a loaded machine).
#[test]
fn status_refuses_flooding_dripping_and_impostor_peers_within_its_timeout() {
    let sleeper = Sleeper(
        Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("start sleep"),
    );
    let other_pid = sleeper.0.id();
    let me = std::process::id();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let elsewhere_path = elsewhere.path().to_path_buf();
    let cases: Vec<(&str, Option<u32>, Box<Behave>, String)> = vec![
        (
            "flooding peer",
            None,
            Box::new(|s: &mut UnixStream, _: &serde_json::Value| {
                let block = vec![b' '; 1 << 16];
                while s.write_all(&block).is_ok() {}
            }),
            "over 1048576 bytes; refused".into(),
        ),
        (
            "dripping peer",
            None,
            Box::new(|s: &mut UnixStream, _: &serde_json::Value| {
                while s.write_all(b" ").is_ok() {
                    std::thread::sleep(Duration::from_millis(500));
                }
            }),
            "no whole answer within 3.0 s".into(),
        ),
        (
            "control file naming another pid than the socket's peer",
            Some(other_pid),
            Box::new(move |s: &mut UnixStream, _: &serde_json::Value| {
                answer(s, status(other_pid, Path::new("/"), "IMPOSTOR"));
            }),
            format!("served by pid {me} of uid"),
        ),
        (
            "status naming another dump directory",
            None,
            Box::new(move |s: &mut UnixStream, _: &serde_json::Value| {
                answer(s, status(me, &elsewhere_path, "IMPOSTOR"));
            }),
            "says its dump directory is".into(),
        ),
    ];
    for (case, pid, behave, says) in cases {
        let run = tempfile::tempdir().expect("tempdir");
        let dump = run.path().join("rank3-1-x");
        std::fs::create_dir(&dump).expect("mkdir");
        let _peer = FakePeer::start(&dump, pid, behave);
        let target = run.path().to_str().expect("utf-8");
        let (out, took) = run_timed(run.path(), &["status", target, "--all", "--timeout", "3s"]);
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{case}: {text}");
        assert!(text.contains(&says), "{case}: {says:?} not in {text}");
        assert!(!text.contains("IMPOSTOR"), "{case}: {text}");
        assert!(!text.contains("panicked"), "{case}: {text}");
        assert!(took < Duration::from_secs(8), "{case}: took {took:?}");
    }
}

/// Issue 28: a peer's answer named a trace in a 0700 directory and root's `cupmon
/// window` copied it into a world-readable combined trace, exit 0. Each case: the
/// file the answer names; the window must refuse it with a warning naming the rank
/// and the path, write no combined trace, and exit 1. The last case, a file inside
/// the dump directory, is combined (the check is not simply "refuse all").
#[test]
fn window_refuses_window_files_outside_the_dump_dir() {
    let run = tempfile::tempdir().expect("tempdir");
    let secret_dir = run.path().join("secret");
    std::fs::create_dir(&secret_dir).expect("mkdir");
    std::fs::set_permissions(&secret_dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let trace = json!({
        "traceEvents": [{"ph": "X", "cat": "kernel", "name": "SECRET_KERNEL", "ts": 1.0,
                         "dur": 1.0, "pid": 0, "tid": 7}],
        "distributedInfo": {"rank": 3}
    })
    .to_string();
    let secret = secret_dir.join("window-0.trace.json");
    std::fs::write(&secret, &trace).expect("write");
    let dump = run.path().join("rank3-1-x");
    std::fs::create_dir(&dump).expect("mkdir");
    std::os::unix::fs::symlink(&secret, dump.join("window-1.trace.json")).expect("symlink");
    std::os::unix::fs::symlink(&secret_dir, dump.join("sub")).expect("symlink");
    std::fs::write(dump.join("window-9.trace.json"), &trace).expect("write");
    std::fs::write(dump.join("window-9.json"), "{}").expect("write");
    let d = dump.display();
    let cases = [
        (secret.display().to_string(), false),
        (format!("{d}/window-1.trace.json"), false),
        (format!("{d}/sub/window-0.trace.json"), false),
        (format!("{d}/../secret/window-0.trace.json"), false),
        (format!("{d}/window-9.trace.json"), true),
    ];
    for (named, inside) in cases {
        let _ = std::fs::remove_file(dump.join("control.sock"));
        let combined = run.path().join("combined.trace.json");
        let _ = std::fs::remove_file(&combined);
        let (dump_dir, file) = (dump.clone(), named.clone());
        let json_file = format!("{d}/window-9.json");
        let _peer = FakePeer::start(
            &dump,
            None,
            Box::new(move |s: &mut UnixStream, request: &serde_json::Value| {
                let reply = match request["op"].as_str() {
                    Some("status") => status(std::process::id(), &dump_dir, "fake"),
                    Some("start_window") => json!({"result": "window_started", "start_unix_ns": 1}),
                    _ => json!({"result": "window_written", "number": 0, "events": 1,
                                "window_json": json_file, "trace": file}),
                };
                answer(s, reply);
            }),
        );
        let target = dump.to_str().expect("utf-8");
        let out_arg = combined.to_str().expect("utf-8");
        let out = cupmon(
            run.path(),
            &[
                "window",
                target,
                "--for",
                "100ms",
                "--timeout",
                "5s",
                "-o",
                out_arg,
            ],
        );
        let err = stderr(&out);
        if inside {
            assert_eq!(out.status.code(), Some(0), "{named}: {err}");
            let text = std::fs::read_to_string(&combined).expect("combined trace");
            assert!(
                text.contains("SECRET_KERNEL"),
                "{named}: the inside file is combined"
            );
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{named}: {err}");
        assert!(
            err.contains("rank 3") && err.contains(&named) && err.contains("refused"),
            "{named}: {err}"
        );
        assert!(!combined.exists(), "{named}: a combined trace was written");
        for entry in std::fs::read_dir(run.path()).expect("read_dir").flatten() {
            let p = entry.path();
            if p.is_file() {
                let bytes = std::fs::read(&p).unwrap_or_default();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains("SECRET_KERNEL"),
                    "{named}: the secret was copied to {}",
                    p.display()
                );
            }
        }
    }
}

/// Set in the environment of the peer run as another uid: the socket to serve.
const OTHER_UID_PEER: &str = "CUPMON_TEST_OTHER_UID_PEER_SOCKET";
const OTHER_UID_CHILD: &str = "hostile_control::peer_of_another_uid_child";
const NOBODY: u32 = 65534;

/// Issue 28: a process run as `nobody` in a shared run directory answered root's
/// `cupmon window`. Root's `status` and `window` must not take its answers, whatever
/// its control file says (here: its own pid, so only the uid tells).
#[test]
fn status_and_window_refuse_a_peer_of_another_uid() {
    const TEST: &str = "status_and_window_refuse_a_peer_of_another_uid";
    if !is_root() {
        skipped(TEST, "not root: cannot run a peer as another uid");
        return;
    }
    let run = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(run.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let sockets = run.path().join("sockets");
    std::fs::create_dir(&sockets).expect("mkdir");
    std::os::unix::fs::chown(&sockets, Some(NOBODY), Some(NOBODY)).expect("chown");
    let socket = sockets.join("evil.sock");
    let exe = std::env::current_exe().expect("the test binary");
    let child = std::os::unix::process::CommandExt::gid(
        std::os::unix::process::CommandExt::uid(
            Command::new(&exe)
                .args([OTHER_UID_CHILD, "--exact", "--ignored", "--nocapture"])
                .env(OTHER_UID_PEER, &socket),
            NOBODY,
        ),
        NOBODY,
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn();
    let Ok(child) = child else {
        skipped(
            TEST,
            &format!("cannot run {} as uid {NOBODY}", exe.display()),
        );
        return;
    };
    let mut child = Sleeper(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        if child.0.try_wait().ok().flatten().is_some() || Instant::now() > deadline {
            skipped(
                TEST,
                &format!("the test binary run as uid {NOBODY} did not serve (cannot read it?)"),
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.0.id();
    let dump = run.path().join("rank3-1-x");
    std::fs::create_dir(&dump).expect("mkdir");
    ControlFile {
        socket: socket.clone(),
        pid,
        started: process_start_ticks(pid),
    }
    .write(&dump)
    .expect("control file");
    let target = run.path().to_str().expect("utf-8");
    let out = cupmon(run.path(), &["status", target, "--all", "--timeout", "3s"]);
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains(&format!("served by pid {pid} of uid {NOBODY}")) && text.contains("refused"),
        "{text}"
    );
    assert!(!text.contains("EVIL"), "{text}");
    let out = cupmon(
        run.path(),
        &["window", target, "--for", "100ms", "--timeout", "3s"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("of uid {NOBODY}")), "{err}");
    child.0.kill().ok();
}

#[test]
#[ignore = "the peer run as another uid by status_and_window_refuse_a_peer_of_another_uid"]
fn peer_of_another_uid_child() {
    let Some(socket) = std::env::var_os(OTHER_UID_PEER).map(PathBuf::from) else {
        skipped(
            OTHER_UID_CHILD,
            "runs only in the process status_and_window_refuse_a_peer_of_another_uid starts",
        );
        return;
    };
    let listener = UnixListener::bind(&socket).expect("bind");
    let _ = std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777));
    let dump = socket.parent().map(Path::to_path_buf).unwrap_or_default();
    // Answers everything as a live process would, until killed (at most a minute).
    let deadline = Instant::now() + Duration::from_secs(60);
    listener.set_nonblocking(true).expect("nonblocking");
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((mut s, _)) => {
                let _ = s.set_nonblocking(false);
                let request = read_line(&mut s);
                let reply = match request["op"].as_str() {
                    Some("start_window") => {
                        json!({"result": "window_started", "start_unix_ns": 1})
                    }
                    _ => status(std::process::id(), &dump, "EVIL"),
                };
                answer(&mut s, reply);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Issue 28: with a dump path too long for a socket, every root-run job chmodded a
/// planted `/tmp/cupmon-0 -> /etc` to 0700 and put its socket there. Under `cupmon
/// run` (fake libcupti) with `XDG_RUNTIME_DIR` holding what another user planted:
/// the program runs and exits 0, "no control channel" is said once, the planted
/// thing is left as it was. Where nothing is planted, the directory is made 0700.
#[test]
fn symlinked_or_loose_socket_fallback_dir_gives_no_control_channel_and_is_left_alone() {
    use std::os::unix::fs::MetadataExt;
    for planted in ["symlink", "mode 0755", "nothing"] {
        let runtime = tempfile::tempdir().expect("tempdir");
        // The effective uid: the owner of what this process makes.
        let uid = std::fs::metadata(runtime.path()).expect("stat").uid();
        let victim = runtime.path().join("etc");
        std::fs::create_dir(&victim).expect("mkdir");
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let fallback = runtime.path().join(format!("cupmon-{uid}"));
        match planted {
            "symlink" => std::os::unix::fs::symlink(&victim, &fallback).expect("symlink"),
            "mode 0755" => {
                std::fs::create_dir(&fallback).expect("mkdir");
                std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
            _ => {}
        }
        let out_dir = tempfile::tempdir().expect("tempdir");
        // Long enough that DUMP_DIR/control.sock cannot be a socket address.
        let output = out_dir.path().join("o".repeat(110));
        let out = crate::run_fake::command(&output, &[], &[], &["launch", "3"])
            .env("XDG_RUNTIME_DIR", runtime.path())
            .output()
            .expect("run cupmon");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{planted}: {err}");
        let said = err.matches("no control channel").count();
        let mode = |p: &Path| std::fs::symlink_metadata(p).expect("stat").mode() & 0o7777;
        assert_eq!(
            mode(&victim),
            0o755,
            "{planted}: the link's target chmodded"
        );
        assert_eq!(
            std::fs::read_dir(&victim).expect("read_dir").count(),
            0,
            "{planted}"
        );
        match planted {
            "symlink" => {
                assert_eq!(said, 1, "{planted}: {err}");
                assert!(err.contains("a symbolic link"), "{planted}: {err}");
            }
            "mode 0755" => {
                assert_eq!(said, 1, "{planted}: {err}");
                assert!(err.contains("mode 0755"), "{planted}: {err}");
                assert_eq!(mode(&fallback), 0o755, "left as found");
            }
            _ => {
                assert_eq!(said, 0, "{planted}: {err}");
                assert_eq!(mode(&fallback), 0o700);
            }
        }
    }
}
