//! How cupmon handles files. Everything it reads from a dump or run directory may have
//! been left there by a crash, a full disk or another user of a shared directory: a
//! FIFO that never answers, a link to `/dev/zero` that never ends, a file far larger
//! than such a file can be. So every such file is read by one rule ([`read_capped`],
//! and [`open_regular`] for files streamed in pieces):
//!
//! - opened with `O_NOFOLLOW`, so a link planted in place of the file is refused, not
//!   followed;
//! - opened with `O_NONBLOCK`, so opening a FIFO returns at once instead of waiting
//!   for a writer (on a regular file the flag changes nothing);
//! - checked on the opened descriptor (`fstat`) to be a regular file;
//! - read to at most a cap the caller ties to what the file can legitimately hold.
//!
//! Anything else is a [`FileError`] naming the file, what it is and, for a file over
//! its cap, its size and the cap: the caller reports it as damage and goes on.
//!
//! And how cupmon writes files, so that nothing the user had is lost and no half
//! file is left: outputs appear whole or not at all ([`AtomicOutput`]: a temporary
//! file beside the target, renamed over it; a FIFO or device written in place);
//! small files with fixed names are replaced by a rename ([`replace_file`]); every
//! temporary file is registered so that Ctrl-C removes it
//! ([`remove_live_temp_files`]); an input that can be read only once is copied to
//! one ([`spool`]). All but [`replace_file`] are behind the feature `outputs`, so
//! that the traced process (records, control, the injection library) links no
//! `tempfile`.

mod error;
#[cfg(feature = "outputs")]
mod output;
mod read;
mod replace;
#[cfg(feature = "outputs")]
mod spool;
#[cfg(feature = "outputs")]
mod temp_files;

pub use error::{FileError, FileKind, OutputError};
#[cfg(feature = "outputs")]
pub use output::{
    resolve_links, temp_dir_for, without_temp_path, writes_in_place, AtomicOutput, STDOUT_NAME,
};
pub use read::{open_regular, open_regular_if_present, read_capped, read_capped_if_present};
pub use replace::replace_file;
#[cfg(feature = "outputs")]
pub use spool::{needs_spool, spool, Spooled};
#[cfg(feature = "outputs")]
pub use temp_files::{create_live_temp, remove_live_temp_files, LiveTemp};

/// One kibibyte, mebibyte and gibibyte: the units caps are written in.
pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

/// Whether a write failed because the disk (or the user's quota) is full: `ENOSPC`
/// or `EDQUOT`.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}
