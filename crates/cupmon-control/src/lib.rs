//! The control channel of a monitored process. Each process cupmon monitors listens
//! on a Unix socket of its own and names it in `cupmon_control.json` in its dump
//! directory; `cupmon window` and `cupmon status` find the processes of a run, a dump
//! or a pid there and talk to them, one JSON line each way. The dump directory of a
//! process is named here too ([`create_dump_dir`]): unique, never reused.
//!
//! Security: the socket is created mode 0600 and the server accepts only connections
//! whose peer (`SO_PEERCRED`) runs as the process's own user; it never listens on a
//! network port; a request over [`MAX_REQUEST`] bytes or one that does not parse is
//! refused without affecting the program.

mod client;
mod discover;
mod dump_dir;
mod protocol;
mod server;

pub use client::{Client, ClientError};
pub use discover::{find_processes, process_start_ticks, ControlFile, Found, CONTROL_FILE};
pub use dump_dir::{create_dump_dir, dump_dir_name, DumpDirError};
pub use protocol::{LastWindow, ProcessStatus, Request, Response, WindowStatus};
pub use server::{serve, Handler, Server, ServerError};

/// The most bytes of one request the server reads.
pub const MAX_REQUEST: usize = 64 << 10;
