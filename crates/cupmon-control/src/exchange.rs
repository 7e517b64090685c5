//! One line each way under one deadline, for both ends: a socket timeout bounds one
//! read, so a peer dripping a byte just inside it would hold a plain `read_line`
//! forever; here every read gets only the time left, and the line has a size cap.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Why no line came.
#[derive(Debug)]
pub(crate) enum LineError {
    /// The deadline passed with `got` bytes read and no newline.
    TimedOut {
        got: usize,
    },
    /// More than `cap` bytes without a newline.
    TooLong {
        cap: usize,
    },
    Io(std::io::Error),
}

/// The time left before `deadline`, or `None` when it has passed (a zero socket
/// timeout would mean "none" to the kernel).
fn left(deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    (left >= Duration::from_millis(1)).then_some(left)
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Read one line (without its newline) of at most `cap` bytes before `deadline`; the
/// bytes up to the end of the stream when it ends first.
pub(crate) fn read_line(
    mut stream: &UnixStream,
    deadline: Instant,
    cap: usize,
) -> Result<Vec<u8>, LineError> {
    let mut line = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let Some(left) = left(deadline) else {
            return Err(LineError::TimedOut { got: line.len() });
        };
        stream.set_read_timeout(Some(left)).map_err(LineError::Io)?;
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Ok(line),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if timed_out(&e) => return Err(LineError::TimedOut { got: line.len() }),
            Err(e) => return Err(LineError::Io(e)),
        };
        let newline = chunk[..n].iter().position(|&b| b == b'\n');
        line.extend_from_slice(&chunk[..newline.unwrap_or(n)]);
        if line.len() > cap {
            return Err(LineError::TooLong { cap });
        }
        if newline.is_some() {
            return Ok(line);
        }
    }
}

/// Write all of `bytes` before `deadline` (`TimedOut` after it).
pub(crate) fn write_all(
    mut stream: &UnixStream,
    mut bytes: &[u8],
    deadline: Instant,
) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = left(deadline).ok_or(std::io::ErrorKind::TimedOut)?;
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if timed_out(&e) => return Err(std::io::ErrorKind::TimedOut.into()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (UnixStream, UnixStream) {
        UnixStream::pair().unwrap()
    }

    #[test]
    fn a_line_is_read_to_its_newline_and_the_end_of_a_stream_ends_it() {
        let (mut a, b) = pair();
        a.write_all(b"{\"x\":1}\nrest").unwrap();
        let soon = Instant::now() + Duration::from_secs(5);
        assert_eq!(read_line(&b, soon, 100).unwrap(), b"{\"x\":1}");
        let (mut a, b) = pair();
        a.write_all(b"no newline").unwrap();
        drop(a);
        assert_eq!(read_line(&b, soon, 100).unwrap(), b"no newline");
    }

    #[test]
    fn a_flooding_peer_is_cut_at_the_cap() {
        let (a, b) = pair();
        let flood = std::thread::spawn(move || {
            let block = vec![b'x'; 1 << 16];
            while (&a).write_all(&block).is_ok() {}
        });
        let soon = Instant::now() + Duration::from_secs(10);
        assert!(matches!(
            read_line(&b, soon, 1 << 20),
            Err(LineError::TooLong { cap }) if cap == 1 << 20
        ));
        drop(b);
        flood.join().unwrap();
    }

    #[test]
    fn a_dripping_peer_is_held_to_one_deadline_not_one_per_read() {
        let (a, b) = pair();
        let drip = std::thread::spawn(move || {
            for _ in 0..40 {
                if (&a).write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let t0 = Instant::now();
        let got = read_line(&b, t0 + Duration::from_millis(500), 100);
        let took = t0.elapsed();
        assert!(
            matches!(got, Err(LineError::TimedOut { got }) if got > 0),
            "{got:?}"
        );
        assert!(took < Duration::from_millis(1500), "{took:?}");
        drop(b);
        drip.join().unwrap();
    }
}
