//! The client side: one request, one answer, with a deadline.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{Request, Response};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{socket}: not listening ({err}); the process has probably exited")]
    NotListening {
        socket: PathBuf,
        err: std::io::Error,
    },
    #[error("{socket}: no answer within {secs:.0} s ({err})")]
    Timeout {
        socket: PathBuf,
        secs: f64,
        err: std::io::Error,
    },
    #[error("{socket}: the answer is not understood: {msg}")]
    BadAnswer { socket: PathBuf, msg: String },
}

/// A connection target: one process's control socket.
#[derive(Debug, Clone)]
pub struct Client {
    pub socket: PathBuf,
    pub timeout: Duration,
}

impl Client {
    pub fn new(socket: impl AsRef<Path>, timeout: Duration) -> Self {
        Self {
            socket: socket.as_ref().to_path_buf(),
            timeout,
        }
    }

    /// Send `request` and wait (at most the timeout) for the answer.
    pub fn call(&self, request: &Request) -> Result<Response, ClientError> {
        let socket = self.socket.clone();
        let mut stream =
            UnixStream::connect(&self.socket).map_err(|err| ClientError::NotListening {
                socket: socket.clone(),
                err,
            })?;
        let timeout = |err| ClientError::Timeout {
            socket: socket.clone(),
            secs: self.timeout.as_secs_f64(),
            err,
        };
        stream
            .set_read_timeout(Some(self.timeout))
            .map_err(timeout)?;
        stream
            .set_write_timeout(Some(self.timeout))
            .map_err(timeout)?;
        let mut line = serde_json::to_string(request).unwrap_or_default();
        line.push('\n');
        stream.write_all(line.as_bytes()).map_err(timeout)?;
        let mut answer = String::new();
        BufReader::new(&stream)
            .read_line(&mut answer)
            .map_err(timeout)?;
        if answer.is_empty() {
            return Err(ClientError::BadAnswer {
                socket,
                msg: "the connection closed without an answer (another user's process?)".into(),
            });
        }
        serde_json::from_str(&answer).map_err(|e| ClientError::BadAnswer {
            socket,
            msg: e.to_string(),
        })
    }
}
