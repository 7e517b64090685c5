//! The server side, run by the injection library on a thread of its own: one
//! connection at a time, one request per connection, a short read timeout, peers of
//! another user refused.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};

use crate::discover::{ControlFile, CONTROL_FILE};
use crate::{Request, Response, MAX_REQUEST};

/// What the process does with requests.
pub trait Handler: Send + 'static {
    fn handle(&mut self, request: Request) -> Response;
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot create the control socket {path}: {err}")]
    Bind { path: PathBuf, err: std::io::Error },
    #[error("cannot write {path}: {err}")]
    ControlFile { path: PathBuf, err: std::io::Error },
}

/// A listening control channel; it stops (and removes its socket) with the process.
#[derive(Debug)]
pub struct Server {
    pub socket: PathBuf,
}

/// The socket path for `dump_dir`: `dump_dir/control.sock` when it fits in a Unix
/// socket address (108 bytes), else a short path in a directory of the user's own
/// under the runtime directory (or /tmp).
fn socket_path(dump_dir: &Path) -> std::io::Result<PathBuf> {
    let inside = dump_dir.join("control.sock");
    if inside.as_os_str().len() < 100 {
        return Ok(inside);
    }
    let uid = nix::unistd::geteuid();
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join(format!("cupmon-{uid}"));
    std::fs::create_dir_all(&base)?;
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Ok(base.join(format!("{}-{stamp}.sock", std::process::id())))
}

/// Listen for the process whose dump directory is `dump_dir`, answering with
/// `handler` on a thread named `cupmon-control`; writes `cupmon_control.json` there.
pub fn serve(dump_dir: &Path, handler: impl Handler) -> Result<Server, ServerError> {
    let path = socket_path(dump_dir).map_err(|err| ServerError::Bind {
        path: dump_dir.join("control.sock"),
        err,
    })?;
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|err| ServerError::Bind {
        path: path.clone(),
        err,
    })?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(|err| {
        ServerError::Bind {
            path: path.clone(),
            err,
        }
    })?;
    let file = ControlFile {
        socket: path.clone(),
        pid: std::process::id(),
        started: crate::discover::own_start_ticks(),
    };
    file.write(dump_dir)
        .map_err(|err| ServerError::ControlFile {
            path: dump_dir.join(CONTROL_FILE),
            err,
        })?;
    let mut handler = handler;
    let spawned = std::thread::Builder::new()
        .name("cupmon-control".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                // One bad client never stops the channel (nor the program).
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    answer(stream, &mut handler);
                }));
            }
        });
    spawned.map_err(|err| ServerError::Bind {
        path: path.clone(),
        err,
    })?;
    Ok(Server { socket: path })
}

fn answer(mut stream: UnixStream, handler: &mut impl Handler) {
    let same_user = getsockopt(&stream, PeerCredentials)
        .is_ok_and(|cred| cred.uid() == nix::unistd::geteuid().as_raw());
    if !same_user {
        return; // Closed without a word: other users learn nothing.
    }
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let response = match read_request(&stream) {
        Ok(request) => handler.handle(request),
        Err(message) => Response::Error { message },
    };
    let mut line = serde_json::to_string(&response).unwrap_or_default();
    line.push('\n');
    let _ = stream.write_all(line.as_bytes());
}

fn read_request(stream: &UnixStream) -> Result<Request, String> {
    let mut line = Vec::new();
    let mut reader = BufReader::new(stream.take(MAX_REQUEST as u64 + 1));
    reader
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("cannot read the request: {e}"))?;
    if line.len() > MAX_REQUEST {
        return Err(format!("request over {MAX_REQUEST} bytes refused"));
    }
    serde_json::from_slice(&line).map_err(|e| format!("not a request: {e}"))
}
