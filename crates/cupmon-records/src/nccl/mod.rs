//! NCCL's kernels: what their names say ([`NcclKernel`]) and how much of a process's
//! GPU time they take ([`CollectiveShare`]).
//!
//! Here rather than in cupmon-trace because both sides need it: `cupmon stats` reads
//! dumps (this crate) and knows names only as the dump's mangled strings, and the
//! traces (cupmon-trace, which stands on this crate) label kernels by their demangled
//! names. Both forms parse.
//!
//! CUPTI's kernel record carries neither the communicator nor the message size, and
//! the name does not either; see `docs/collectives.md` (repository root) for what does.

mod kernel_name;
mod schemes;
mod share;

pub use kernel_name::{Meaning, Named, NcclKernel, NcclScheme};
pub use share::{CollectiveShare, CollectiveStats, CollectiveTime, DeviceCollectiveTime};
