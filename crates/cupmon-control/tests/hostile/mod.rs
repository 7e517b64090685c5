//! Issue 28: the client against peers that lie, flood, drip or never accept, and the
//! server against a client that drips. Each peer is a thread of this process (so of
//! this uid); a peer of another uid is in cupmon-cli's `hostile_control` tests.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cupmon_control::{serve, Client, ClientError, Request, MAX_ANSWER};

use super::Echo;

/// A listener at `dir/peer.sock` whose first connection gets `behave`.
fn peer(dir: &Path, behave: impl FnOnce(UnixStream) + Send + 'static) -> PathBuf {
    let socket = dir.join("peer.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            behave(stream);
        }
    });
    socket
}

/// Read the request line, so the peer's bytes come as an answer.
fn read_request(s: &mut UnixStream) {
    let mut byte = [0u8];
    while s.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {}
}

fn me(socket: &Path, timeout: Duration) -> Client {
    Client::new(socket, std::process::id(), timeout)
}

/// Issue 28: `cupmon status` aborted out of memory on a peer that never stops.
#[test]
fn flooding_peer_is_cut_at_max_answer() {
    let dir = tempfile::tempdir().unwrap();
    let socket = peer(dir.path(), |mut s| {
        read_request(&mut s);
        let block = vec![b' '; 1 << 16];
        while s.write_all(&block).is_ok() {}
    });
    let t0 = Instant::now();
    let err = me(&socket, Duration::from_secs(30))
        .call(&Request::Status)
        .unwrap_err();
    assert!(
        matches!(err, ClientError::TooLarge { cap, .. } if cap == MAX_ANSWER),
        "{err}"
    );
    assert!(err.to_string().contains("over 1048576 bytes"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(30));
}

/// Issue 28: one byte every 0.5 s held `status --timeout 3s` forever (the
/// timeout bounded each read).
#[test]
fn dripping_peer_meets_one_deadline_for_the_whole_exchange() {
    let dir = tempfile::tempdir().unwrap();
    let socket = peer(dir.path(), |mut s| {
        read_request(&mut s);
        while s.write_all(b" ").is_ok() {
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    let timeout = Duration::from_millis(1500);
    let t0 = Instant::now();
    let err = me(&socket, timeout).call(&Request::Status).unwrap_err();
    let took = t0.elapsed();
    assert!(
        matches!(err, ClientError::Timeout { got, .. } if got > 0),
        "{err}"
    );
    // The deadline, plus scheduling slack on a loaded machine.
    assert!(
        took >= timeout && took < timeout + Duration::from_secs(1),
        "{took:?}"
    );
}

#[test]
fn listener_that_never_accepts_meets_the_deadline() {
    use nix::sys::socket::{connect, socket, AddressFamily, SockFlag, SockType, UnixAddr};
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.sock");
    let _listener = UnixListener::bind(&path).unwrap();
    // Fill its backlog: then a blocking connect would wait for an accept forever.
    let addr = UnixAddr::new(&path).unwrap();
    let mut held = Vec::new();
    loop {
        let fd = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_NONBLOCK,
            None,
        )
        .unwrap();
        if connect(fd.as_raw_fd(), &addr).is_err() {
            break;
        }
        held.push(fd);
        assert!(held.len() < 100_000, "the backlog never filled");
    }
    let t0 = Instant::now();
    let err = me(&path, Duration::from_millis(500))
        .call(&Request::Status)
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
    assert!(
        t0.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t0.elapsed()
    );
}

/// Issue 28: any `cupmon_control.json` was trusted: a socket another process
/// serves must not be taken for the process the file names.
#[test]
fn control_file_naming_another_pid_than_the_socket_peer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), Echo).unwrap();
    for pid in [1, std::process::id() + 1, u32::MAX] {
        let err = Client::new(&server.socket, pid, Duration::from_secs(5))
            .call(&Request::Status)
            .unwrap_err();
        assert!(
            matches!(err, ClientError::WrongPeer { peer_pid, .. } if peer_pid as u32 == std::process::id()),
            "{err}"
        );
        let text = err.to_string();
        assert!(
            text.contains(&format!("not by process {pid}")) && text.contains("refused"),
            "{text}"
        );
    }
}

/// The server gives a dripping client REQUEST_TIME in all, then answers the next.
#[test]
fn server_cuts_a_dripping_client_at_its_request_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), Echo).unwrap();
    let mut s = UnixStream::connect(&server.socket).unwrap();
    let t0 = Instant::now();
    let mut answer = Vec::new();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    while t0.elapsed() < Duration::from_secs(10) {
        if s.write_all(b" ").is_err() {
            break;
        }
        let mut buf = [0u8; 4096];
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
        if answer.ends_with(b"\n") {
            break;
        }
    }
    let took = t0.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains("no whole request within 2 s"), "{answer}");
    assert!(
        took < cupmon_control::REQUEST_TIME + Duration::from_secs(2),
        "{took:?}"
    );
    assert!(me(&server.socket, Duration::from_secs(5))
        .call(&Request::Status)
        .is_ok());
}
