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

mod error;
mod read;

pub use error::{FileError, FileKind};
pub use read::{open_regular, open_regular_if_present, read_capped, read_capped_if_present};

/// One kibibyte, mebibyte and gibibyte: the units caps are written in.
pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

/// Whether a write failed because the disk (or the user's quota) is full: `ENOSPC`
/// or `EDQUOT`.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}
