//! The client side: one request, one answer, under one deadline for the whole
//! exchange, from a peer that is checked first. A control file can be planted by
//! anyone who can write the run directory, so the socket it names is trusted only
//! when the process at the other end (`SO_PEERCRED`) runs as the caller or root and
//! is the process the file names; the answer is read up to [`MAX_ANSWER`] bytes.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{
    connect, getsockopt, socket, sockopt::PeerCredentials, AddressFamily, SockFlag, SockType,
    UnixAddr,
};

use crate::exchange::{self, LineError};
use crate::{Found, Request, Response};

/// The most bytes of one answer the client reads: a status answer is a few KiB (the
/// server keeps the command line it reports short), a window answer two paths.
pub const MAX_ANSWER: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{socket}: not listening ({err}); the process has probably exited")]
    NotListening {
        socket: PathBuf,
        err: std::io::Error,
    },
    #[error("{socket}: no whole answer within {secs:.1} s ({got} bytes came)")]
    Timeout {
        socket: PathBuf,
        secs: f64,
        got: usize,
    },
    #[error("{socket}: the answer is over {cap} bytes; refused")]
    TooLarge { socket: PathBuf, cap: usize },
    #[error(
        "{socket}: served by pid {peer_pid} of uid {peer_uid}, not by process {pid} of your \
         uid {uid} (or root) that its control file names; refused (a control file planted by \
         another user?)"
    )]
    WrongPeer {
        socket: PathBuf,
        pid: u32,
        uid: u32,
        peer_pid: i32,
        peer_uid: u32,
    },
    #[error("{socket}: {err}")]
    Io {
        socket: PathBuf,
        err: std::io::Error,
    },
    #[error("{socket}: the answer is not understood: {msg}")]
    BadAnswer { socket: PathBuf, msg: String },
}

/// A connection target: the control socket of process `pid`.
#[derive(Debug, Clone)]
pub struct Client {
    pub socket: PathBuf,
    /// The process that must be listening there.
    pub pid: u32,
    /// For the whole exchange: connecting, the request and the answer.
    pub timeout: Duration,
}

impl Client {
    pub fn new(socket: impl AsRef<Path>, pid: u32, timeout: Duration) -> Self {
        Self {
            socket: socket.as_ref().to_path_buf(),
            pid,
            timeout,
        }
    }

    /// The client of a process found under a target.
    pub fn of(found: &Found, timeout: Duration) -> Self {
        Self::new(&found.control.socket, found.control.pid, timeout)
    }

    /// Send `request` and wait (at most the timeout, in all) for the answer.
    pub fn call(&self, request: &Request) -> Result<Response, ClientError> {
        let deadline = Instant::now() + self.timeout;
        let stream = self.connect(deadline)?;
        self.check_peer(&stream)?;
        let mut line = serde_json::to_string(request).unwrap_or_default();
        line.push('\n');
        exchange::write_all(&stream, line.as_bytes(), deadline).map_err(|err| {
            if err.kind() == std::io::ErrorKind::TimedOut {
                self.timeout(0)
            } else {
                self.io(err)
            }
        })?;
        let answer = exchange::read_line(&stream, deadline, MAX_ANSWER).map_err(|e| match e {
            LineError::TimedOut { got } => self.timeout(got),
            LineError::TooLong { cap } => ClientError::TooLarge {
                socket: self.socket.clone(),
                cap,
            },
            LineError::Io(err) => self.io(err),
        })?;
        if answer.is_empty() {
            return Err(ClientError::BadAnswer {
                socket: self.socket.clone(),
                msg: "the connection closed without an answer (another user's process?)".into(),
            });
        }
        crate::protocol::parse_response(&answer).map_err(|msg| ClientError::BadAnswer {
            socket: self.socket.clone(),
            msg,
        })
    }

    /// Connect without blocking: a listener that never accepts (its backlog full)
    /// would hold a blocking connect past any deadline.
    fn connect(&self, deadline: Instant) -> Result<UnixStream, ClientError> {
        let not_listening = |err: std::io::Error| ClientError::NotListening {
            socket: self.socket.clone(),
            err,
        };
        let addr = UnixAddr::new(&self.socket).map_err(|e| not_listening(e.into()))?;
        let fd: OwnedFd = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
            None,
        )
        .map_err(|e| self.io(e.into()))?;
        loop {
            match connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &addr) {
                Ok(()) => break,
                Err(Errno::EAGAIN | Errno::EINTR) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(Errno::EAGAIN) => return Err(self.timeout(0)),
                Err(e) => return Err(not_listening(e.into())),
            }
        }
        let stream = UnixStream::from(fd);
        stream.set_nonblocking(false).map_err(|e| self.io(e))?;
        Ok(stream)
    }

    /// The process at the other end runs as the caller or root, and is `self.pid`.
    fn check_peer(&self, stream: &UnixStream) -> Result<(), ClientError> {
        let cred = getsockopt(stream, PeerCredentials).map_err(|e| self.io(e.into()))?;
        let uid = nix::unistd::geteuid().as_raw();
        let trusted_uid = cred.uid() == uid || cred.uid() == 0;
        if trusted_uid && u32::try_from(cred.pid()).is_ok_and(|p| p == self.pid) {
            return Ok(());
        }
        Err(ClientError::WrongPeer {
            socket: self.socket.clone(),
            pid: self.pid,
            uid,
            peer_pid: cred.pid(),
            peer_uid: cred.uid(),
        })
    }

    fn timeout(&self, got: usize) -> ClientError {
        ClientError::Timeout {
            socket: self.socket.clone(),
            secs: self.timeout.as_secs_f64(),
            got,
        }
    }

    fn io(&self, err: std::io::Error) -> ClientError {
        ClientError::Io {
            socket: self.socket.clone(),
            err,
        }
    }
}
