//! The control channel of a monitored process. Each process cupmon monitors listens
//! on a Unix socket of its own and names it in `cupmon_control.json` in its dump
//! directory; `cupmon window` and `cupmon status` find the processes of a run, a dump
//! or a pid there and talk to them, one JSON line each way. The dump directory of a
//! process is named here too ([`create_dump_dir`]): unique, never reused.
//!
//! Security (issue 28): both ends check the other. The socket is created mode 0600 (in
//! the dump directory, or in a [`private_dir`] when that path is too long) and the
//! server accepts only connections whose peer (`SO_PEERCRED`) runs as the process's
//! own user; it never listens on a network port; it reads a request of at most
//! [`MAX_REQUEST`] bytes within [`REQUEST_TIME`] in all, and refuses one that does not
//! parse without affecting the program. The client talks only to a peer of its own
//! uid (or root) that is the process the control file names, reads at most
//! [`MAX_ANSWER`] bytes under one deadline for the whole exchange, and takes only
//! files inside that process's dump directory ([`Found::own_file`]).

mod client;
mod discover;
mod dump_dir;
mod exchange;
mod own_files;
mod private_dir;
mod protocol;
mod server;

pub use client::{Client, ClientError, MAX_ANSWER};
pub use discover::{
    find_processes, process_start_ticks, ControlFile, Found, CONTROL_FILE, MAX_CONTROL_FILE,
};
pub use dump_dir::{create_dump_dir, dump_dir_name, DumpDirError};
pub use own_files::NotItsOwn;
pub use private_dir::{private_dir, PrivateDirError, PRIVATE_MODE};
pub use protocol::{
    parse_request, parse_response, LastWindow, ProcessStatus, Request, Response, WindowStatus,
};
pub use server::{serve, Handler, Server, ServerError};

/// The most bytes of one request the server reads.
pub const MAX_REQUEST: usize = 64 << 10;

/// The most time the server gives one client to send its request, in all.
pub const REQUEST_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Say that a test could not run, where `cargo test` shows it: straight to the
/// process's stderr (the test harness captures only `eprintln!`).
#[cfg(test)]
pub(crate) fn skipped(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {why}");
}
