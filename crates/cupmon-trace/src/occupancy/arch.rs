//! What CUDA's occupancy calculator knows of each GPU architecture beyond the
//! device's own properties, by compute capability: the figures of CUDA 13.0's
//! `cuda_occupancy.h`, the header torch 2.11+cu130's Kineto was built with.
//!
//! An architecture the header does not know (a compute capability outside
//! 5.0..=12.x, or a minor version it has no shared-memory layout for) makes the
//! calculator fail, and Kineto then writes its "no occupancy" value; so does
//! [`arch`] returning `None`.

/// Per-architecture limits of the occupancy calculation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Arch {
    /// Blocks an SM holds at once, from the header's table (not the driver's
    /// attribute: the header never reads it).
    pub max_blocks_per_sm: i32,
    /// Shared memory is handed to blocks in multiples of this many bytes.
    pub smem_granularity: i32,
    /// Registers are handed to warps in multiples of this many.
    pub reg_granularity: i32,
    pub max_regs_per_thread: i32,
    /// Register-file partitions of an SM (each warp's registers live in one).
    pub sub_partitions: i32,
    /// Volta on: the shared-memory sizes (KiB, ascending) the SM's unified
    /// L1/shared memory can be split into; a request is rounded up to the next
    /// one, and one past the last is an error. `None`: Maxwell and Pascal,
    /// whose shared memory is fixed.
    pub smem_carveouts_kib: Option<&'static [u64]>,
}

const VOLTA: &[u64] = &[0, 8, 16, 32, 64, 96];
// Turing's smallest split is 32 KiB: even a block without shared memory gets it.
const TURING: &[u64] = &[32, 64];
const AMPERE_100K: &[u64] = &[0, 8, 16, 32, 64, 100];
const AMPERE_164K: &[u64] = &[0, 8, 16, 32, 64, 100, 132, 164];
const HOPPER_228K: &[u64] = &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228];

impl Arch {
    /// The calculator's view of compute capability `major.minor`, or `None` where
    /// CUDA 13.0's header reports an unknown device.
    pub(super) fn of(major: i32, minor: i32) -> Option<Arch> {
        let max_blocks_per_sm = match (major, minor) {
            (5 | 6, _) => 32,
            (7, 5) => 16,
            (7, _) => 32,
            (8, 0) => 32,
            (8, 9) => 24,
            (8, _) => 16,
            (9, _) => 32,
            (10, 1) | (11, 0) => 24,
            (10 | 11, _) => 32,
            (12, _) => 24,
            _ => return None,
        };
        let smem_carveouts_kib = match (major, minor) {
            (5 | 6, _) => None,
            (7, 5) => Some(TURING),
            (7, _) => Some(VOLTA),
            (8, 0 | 7) => Some(AMPERE_164K),
            (8, _) => Some(AMPERE_100K),
            (9, _) => Some(HOPPER_228K),
            (10 | 11, 0 | 1 | 3) => Some(HOPPER_228K),
            (12, 0 | 1) => Some(AMPERE_100K),
            // The header has no split table for these minors (e.g. sm_107 in 13.0).
            _ => return None,
        };
        Some(Arch {
            max_blocks_per_sm,
            smem_granularity: if major >= 8 { 128 } else { 256 },
            reg_granularity: 256,
            max_regs_per_thread: if major >= 7 { 256 } else { 255 },
            // GP100 (6.0) has two partitions; every other SM four.
            sub_partitions: if (major, minor) == (6, 0) { 2 } else { 4 },
            smem_carveouts_kib,
        })
    }
}

/// The default shared memory the driver reserves per block, for a device whose
/// properties do not say (`reservedSharedMemPerBlock` is 1 KiB from Ampere on).
pub(super) fn default_reserved_smem(major: i32) -> u64 {
    if major >= 8 {
        1024
    } else {
        0
    }
}

/// `bytes` rounded up to the next configurable split of shared memory; `None`
/// past the largest (the header's invalid-input error).
pub(super) fn round_up_to_carveout(bytes: u64, carveouts_kib: &[u64]) -> Option<u64> {
    carveouts_kib
        .iter()
        .map(|kib| kib * 1024)
        .find(|&size| bytes <= size)
}
