//! The channel end to end in one process: a server with a test handler, real
//! sockets, the client and discovery; malformed and oversized requests; hostile
//! peers (`hostile`).

mod hostile;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use cupmon_control::{
    find_processes, serve, Client, Handler, ProcessStatus, Request, Response, MAX_REQUEST,
};

pub(crate) struct Echo;

impl Handler for Echo {
    fn handle(&mut self, request: Request) -> Response {
        match request {
            Request::Status => Response::Status(Box::new(ProcessStatus {
                pid: std::process::id(),
                ..ProcessStatus::default()
            })),
            Request::StartWindow { .. } => Response::WindowStarted { start_unix_ns: 42 },
            Request::EndWindow => Response::Error {
                message: "no trace window is open".into(),
            },
            Request::HangDump { owner } => Response::HangRecorded {
                path: format!("hang-1.json by {owner}"),
            },
        }
    }
}

fn raw(socket: &std::path::Path, bytes: &[u8]) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer
}

#[test]
fn a_served_process_answers_and_is_found_by_dir_run_dir_and_pid() {
    let run = tempfile::tempdir().unwrap();
    let dump = run.path().join("123");
    std::fs::create_dir(&dump).unwrap();
    let server = serve(&dump, Echo).unwrap();
    let mode = std::fs::metadata(&server.socket)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "only the owner may connect");
    for target in [dump.to_str().unwrap(), run.path().to_str().unwrap()] {
        let found = find_processes(target).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].alive);
        assert_eq!(found[0].control.socket, server.socket);
    }
    let client = Client::new(&server.socket, std::process::id(), Duration::from_secs(5));
    match client.call(&Request::Status).unwrap() {
        Response::Status(s) => assert_eq!(s.pid, std::process::id()),
        other => panic!("{other:?}"),
    }
    let started = client
        .call(&Request::StartWindow {
            owner: "test".into(),
            steps: None,
        })
        .unwrap();
    assert_eq!(started, Response::WindowStarted { start_unix_ns: 42 });
}

#[test]
fn malformed_and_oversized_requests_are_refused_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), Echo).unwrap();
    let junk = raw(&server.socket, b"{\"op\": \"format_disk\"}\n");
    assert!(junk.contains("not a request"), "{junk}");
    let big = vec![b'x'; MAX_REQUEST + 10];
    let answer = raw(&server.socket, &big);
    assert!(
        answer.contains("refused") || answer.contains("not a request"),
        "{answer}"
    );
    let nothing = raw(&server.socket, b"");
    assert!(
        nothing.contains("Error") || nothing.contains("error"),
        "{nothing}"
    );
    // Still answering.
    let client = Client::new(&server.socket, std::process::id(), Duration::from_secs(5));
    assert!(matches!(
        client.call(&Request::Status),
        Ok(Response::Status(_))
    ));
}

#[test]
fn a_dead_socket_and_a_missing_target_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(dir.path().join("none.sock"), 1, Duration::from_secs(1));
    let err = client.call(&Request::Status).unwrap_err().to_string();
    assert!(err.contains("not listening"), "{err}");
    let err = find_processes(dir.path().to_str().unwrap()).unwrap_err();
    assert!(err.contains("no monitored process"), "{err}");
    let err = find_processes("/nonexistent/dir").unwrap_err();
    assert!(err.contains("not a directory or a pid"), "{err}");
    let err = find_processes("999999999").unwrap_err();
    assert!(err.contains("process 999999999"), "{err}");
}

/// Kills the child on drop, so that a failed assertion leaves no process behind.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn an_earlier_process_with_the_same_pid_is_not_taken_for_the_live_one() {
    let run = tempfile::tempdir().unwrap();
    let child = Child(
        std::process::Command::new("sleep")
            .arg("30")
            .env("CUPMON_OUTPUT_DIR", run.path())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id();
    // spawn can return before the child's environment is readable in /proc (seen
    // under load): wait for it, as a user's process would have long had it.
    let environ = format!("/proc/{pid}/environ");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !std::fs::read(&environ)
        .unwrap_or_default()
        .windows(17)
        .any(|w| w == b"CUPMON_OUTPUT_DIR")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no environment in {environ}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let started = cupmon_control::process_start_ticks(pid).expect("start time");
    let t = std::time::SystemTime::now();
    // The dump of an earlier process that had this pid (a container's pid 1), then
    // the live one's: same pid and second, two directories.
    let earlier = cupmon_control::create_dump_dir(run.path(), None, pid, t).unwrap();
    let live = cupmon_control::create_dump_dir(run.path(), None, pid, t).unwrap();
    assert_ne!(earlier, live);
    for (dir, started) in [(&earlier, started.wrapping_sub(100)), (&live, started)] {
        cupmon_control::ControlFile {
            socket: dir.join("control.sock"),
            pid,
            started: Some(started),
        }
        .write(dir)
        .unwrap();
    }
    let by_pid = find_processes(&pid.to_string()).unwrap();
    let seen: Vec<_> = by_pid.iter().map(|f| (&f.dump_dir, f.alive)).collect();
    assert_eq!(
        seen,
        [(&live, true), (&earlier, false)],
        "the live one first"
    );
    let by_dir = find_processes(run.path().to_str().unwrap()).unwrap();
    assert_eq!(by_dir.iter().filter(|f| f.alive).count(), 1);
}
