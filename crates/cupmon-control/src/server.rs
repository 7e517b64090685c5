//! The server side, run by the injection library on a thread of its own: one
//! connection at a time, one request per connection read under one short deadline,
//! peers of another user refused.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};

use crate::discover::{ControlFile, CONTROL_FILE};
use crate::exchange::{self, LineError};
use crate::private_dir::{private_dir, PrivateDirError};
use crate::{Request, Response, MAX_ANSWER, MAX_REQUEST, REQUEST_TIME};

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
    #[error("the dump directory's path is too long for a socket, and {0}")]
    PrivateDir(#[from] PrivateDirError),
}

/// A listening control channel; it stops (and removes its socket) with the process.
#[derive(Debug)]
pub struct Server {
    pub socket: PathBuf,
}

/// The socket path for `dump_dir`: `dump_dir/control.sock` when it fits in a Unix
/// socket address (108 bytes), else a short path in a [`private_dir`] of the user's
/// own under the runtime directory (or /tmp).
fn socket_path(dump_dir: &Path) -> Result<PathBuf, ServerError> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir());
    socket_path_under(dump_dir, runtime.as_deref().unwrap_or(Path::new("/tmp")))
}

fn socket_path_under(dump_dir: &Path, runtime: &Path) -> Result<PathBuf, ServerError> {
    let inside = dump_dir.join("control.sock");
    if inside.as_os_str().len() < 100 {
        return Ok(inside);
    }
    let uid = nix::unistd::geteuid();
    let base = private_dir(&runtime.join(format!("cupmon-{uid}")))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Ok(base.join(format!("{}-{stamp}.sock", std::process::id())))
}

/// Listen for the process whose dump directory is `dump_dir`, answering with
/// `handler` on a thread named `cupmon-control`; writes `cupmon_control.json` there.
pub fn serve(dump_dir: &Path, handler: impl Handler) -> Result<Server, ServerError> {
    let path = socket_path(dump_dir)?;
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

fn answer(stream: UnixStream, handler: &mut impl Handler) {
    let same_user = getsockopt(&stream, PeerCredentials)
        .is_ok_and(|cred| cred.uid() == nix::unistd::geteuid().as_raw());
    if !same_user {
        return; // Closed without a word: other users learn nothing.
    }
    // One deadline for the whole request: a client dripping bytes holds the channel
    // (one connection at a time) for REQUEST_TIME at most.
    let response = match read_request(&stream, Instant::now() + REQUEST_TIME) {
        Ok(request) => handler.handle(request),
        Err(message) => Response::Error { message },
    };
    let mut line = serde_json::to_string(&response).unwrap_or_default();
    if line.len() > MAX_ANSWER {
        // Clients read no more: say so rather than be cut off.
        line = serde_json::to_string(&Response::Error {
            message: format!("the answer is over {MAX_ANSWER} bytes ({})", line.len()),
        })
        .unwrap_or_default();
    }
    line.push('\n');
    let _ = exchange::write_all(&stream, line.as_bytes(), Instant::now() + ANSWER_TIME);
}

/// The most time one answer may take to go out (a client that does not read).
const ANSWER_TIME: Duration = Duration::from_secs(5);

fn read_request(stream: &UnixStream, deadline: Instant) -> Result<Request, String> {
    let line = exchange::read_line(stream, deadline, MAX_REQUEST).map_err(|e| match e {
        LineError::TimedOut { got } => format!(
            "no whole request within {:.0} s ({got} bytes came)",
            REQUEST_TIME.as_secs_f64()
        ),
        LineError::TooLong { .. } => format!("request over {MAX_REQUEST} bytes refused"),
        LineError::Io(e) => format!("cannot read the request: {e}"),
    })?;
    crate::protocol::parse_request(&line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, MetadataExt};

    fn long_dump_dir(base: &Path) -> PathBuf {
        base.join("d".repeat(120))
    }

    #[test]
    fn a_short_dump_dir_holds_its_socket_and_a_long_one_gets_a_private_dir() {
        let run = tempfile::tempdir().unwrap();
        let runtime = tempfile::tempdir().unwrap();
        let short = run.path().join("1");
        assert_eq!(
            socket_path_under(&short, runtime.path()).unwrap(),
            short.join("control.sock")
        );
        let path = socket_path_under(&long_dump_dir(run.path()), runtime.path()).unwrap();
        let dir = path.parent().unwrap();
        assert_eq!(
            dir,
            runtime
                .path()
                .join(format!("cupmon-{}", nix::unistd::geteuid()))
        );
        assert_eq!(std::fs::metadata(dir).unwrap().mode() & 0o7777, 0o700);
    }

    /// Issue 28: a planted `/tmp/cupmon-0 -> /etc` was chmodded 0700 and root's
    /// socket put where the planter chose.
    #[test]
    fn symlinked_fallback_dir_gives_no_socket_and_is_not_chmodded() {
        let run = tempfile::tempdir().unwrap();
        let runtime = tempfile::tempdir().unwrap();
        let victim = runtime.path().join("etc");
        std::fs::create_dir(&victim).unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).unwrap();
        let planted = runtime
            .path()
            .join(format!("cupmon-{}", nix::unistd::geteuid()));
        symlink(&victim, &planted).unwrap();
        let err = socket_path_under(&long_dump_dir(run.path()), runtime.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("symbolic link") && err.contains(&planted.display().to_string()),
            "{err}"
        );
        assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o7777, 0o755);
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    }
}
