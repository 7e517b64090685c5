//! The occupancy arguments Kineto writes on every kernel (`blocks per SM`,
//! `warps per SM`, `est. achieved occupancy %`), computed as Kineto does: its
//! float arithmetic, and CUDA's occupancy calculator (`cuda_occupancy.h`)
//! re-derived here with Kineto's inputs (no opt-in shared memory, no partitioned
//! global caching, default cache split, barriers not counted).
//!
//! Integer steps follow C's `int`/`size_t` arithmetic (wrapping), so that even a
//! launch no driver would run gives the number Kineto would print.
//! `tests/occupancy.rs` checks all of it against NVIDIA's header.

mod arch;
mod device_limits;

use crate::kinds::KernelEvent;
use arch::{round_up_to_carveout, Arch};
pub use device_limits::DeviceLimits;

/// A kernel launch, with the types of CUPTI's kernel record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers_per_thread: u16,
    pub static_shared_memory: i32,
    pub dynamic_shared_memory: i32,
}

impl From<&KernelEvent> for LaunchConfig {
    fn from(k: &KernelEvent) -> Self {
        LaunchConfig {
            grid: k.grid,
            block: k.block,
            registers_per_thread: k.registers_per_thread,
            static_shared_memory: k.static_shared_memory,
            dynamic_shared_memory: k.dynamic_shared_memory,
        }
    }
}

/// What limits the blocks an SM runs at once (CUDA's `cudaOccResult`; Kineto
/// writes it as the `occupancy` dict from its 2026-03-27 version on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLimits {
    pub active_blocks: i32,
    /// Bits of [`BlockLimits::FACTORS`]: each limit equal to the result.
    pub limiting_factors: u32,
    pub by_registers: i32,
    pub by_shared_mem: i32,
    pub by_warps: i32,
    pub by_blocks: i32,
    /// `i32::MAX`: Kineto's inputs declare no barriers.
    pub by_barriers: i32,
    pub allocated_registers_per_block: i32,
    pub allocated_shared_mem_per_block: u64,
}

impl BlockLimits {
    /// The limiting-factor bits and the names Kineto gives them.
    pub const FACTORS: [(u32, &'static str); 5] = [
        (0x01, "WARPS"),
        (0x02, "REGS"),
        (0x04, "SMEM"),
        (0x08, "BLOCKS"),
        (0x10, "BARRIERS"),
    ];

    /// The factors as Kineto writes them: `WARPS|REGS`, or `none`.
    pub fn limiting_factors_text(&self) -> String {
        let names: Vec<&str> = Self::FACTORS
            .iter()
            .filter(|(bit, _)| self.limiting_factors & bit != 0)
            .map(|(_, name)| *name)
            .collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join("|")
        }
    }
}

/// Kineto's occupancy arguments of one kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// Kineto's float (f32) `blocks per SM`, widened.
    pub blocks_per_sm: f64,
    /// Kineto's float (f32) `warps per SM`, widened.
    pub warps_per_sm: f64,
    /// `None` where CUDA's calculator fails (bad input, unknown architecture).
    pub active_blocks_per_sm: Option<i32>,
    /// Achieved fraction of the SM's threads (Kineto's f32, widened).
    pub achieved_occupancy: Option<f64>,
    /// `lround(achieved_occupancy * 100)`; Kineto writes -100 where this is `None`
    /// (its version of 2026-03-27 on; torch 2.11's: [`Occupancy::torch_2_11_percent`]).
    pub achieved_occupancy_percent: Option<i64>,
    pub limits: Option<BlockLimits>,
}

impl Occupancy {
    /// `est. achieved occupancy %` as torch 2.11's Kineto writes it:
    /// `(int)(0.5 + occupancy * 100.0)`, truncated, with occupancy -1 when the
    /// calculator failed (so -99). Equal to the rounded percent when it is known
    /// and not negative.
    pub fn torch_2_11_percent(&self) -> i64 {
        let fraction = self.achieved_occupancy.unwrap_or(-1.0);
        i64::from((0.5 + fraction * 100.0) as i32)
    }
}

/// Kineto's occupancy arguments for `launch` on `device`.
pub fn kernel_occupancy(device: &DeviceLimits, launch: &LaunchConfig) -> Occupancy {
    let (blocks_per_sm, warps_per_sm) = per_sm(launch, device.num_sms);
    let limits = block_limits(device, launch);
    let achieved_occupancy = limits.map(|l| {
        // f32 throughout, as in Kineto: blocks beyond the grid do not run.
        let blocks = blocks_per_sm as f32;
        let resident = if (l.active_blocks as f32) < blocks {
            l.active_blocks as f32
        } else {
            blocks
        };
        let threads = c_product(launch.block) as f32;
        f64::from(resident * threads / device.max_threads_per_multiprocessor as f32)
    });
    Occupancy {
        blocks_per_sm,
        warps_per_sm,
        active_blocks_per_sm: limits.map(|l| l.active_blocks),
        achieved_occupancy,
        achieved_occupancy_percent: achieved_occupancy.map(|f| (f * 100.0).round() as i64),
        limits,
    }
}

/// A float argument as torch 2.11's Kineto writes it (`std::to_string`: six
/// decimals), with an infinity as the string `"inf"`, as Kineto quotes it (even
/// a negative one; cupmon's traces leave out the per-SM args that would be one). Kineto would write a NaN bare, which is not JSON; it is
/// quoted here as `"nan"`.
pub fn kineto_float_text(value: f64) -> String {
    if value.is_infinite() {
        "\"inf\"".to_owned()
    } else if value.is_nan() {
        "\"nan\"".to_owned()
    } else {
        format!("{value:.6}")
    }
}

/// Blocks and warps per SM, in f32 as Kineto computes them.
fn per_sm(launch: &LaunchConfig, num_sms: i32) -> (f64, f64) {
    let blocks = c_product(launch.grid) as f32 / num_sms as f32;
    let warps = blocks * c_product(launch.block) as f32 / 32.0;
    (f64::from(blocks), f64::from(warps))
}

/// `x * y * z` in C `int`.
fn c_product([x, y, z]: [i32; 3]) -> i32 {
    x.wrapping_mul(y).wrapping_mul(z)
}

/// `(x + y - 1) / y` in C `int` (`y` > 0).
fn c_div_round_up(x: i32, y: i32) -> i32 {
    x.wrapping_add(y - 1).wrapping_div(y)
}

fn c_round_up(x: i32, y: i32) -> i32 {
    y.wrapping_mul(c_div_round_up(x, y))
}

/// CUDA's calculation of the blocks an SM can hold, `None` where it fails.
fn block_limits(device: &DeviceLimits, launch: &LaunchConfig) -> Option<BlockLimits> {
    let block_size = c_product(launch.block);
    if block_size <= 0 || !device.is_valid() {
        return None;
    }
    let arch = Arch::of(device.compute_major, device.compute_minor)?;
    let regs = i32::from(launch.registers_per_thread);
    let (mut by_registers, allocated_registers_per_block) =
        registers_limit(device, &arch, regs, block_size);
    if (device.compute_major, device.compute_minor) == (6, 0) && by_registers != 0 {
        // CUDA does not let a block run on GP100 that could not on the other
        // Pascals, whose SMs have four register partitions instead of two.
        let gp10x = Arch::of(6, 1)?;
        if registers_limit(device, &gp10x, regs, block_size).0 == 0 {
            by_registers = 0;
        }
    }
    let by_warps = if block_size > device.max_threads_per_block {
        0
    } else {
        let warps_per_sm = device
            .max_threads_per_multiprocessor
            .wrapping_div(device.warp_size);
        warps_per_sm.wrapping_div(c_div_round_up(block_size, device.warp_size))
    };
    let by_blocks = arch.max_blocks_per_sm;
    let (by_shared_mem, allocated_shared_mem_per_block) = shared_mem_limit(device, &arch, launch)?;
    let active_blocks = by_registers.min(by_shared_mem).min(by_warps).min(by_blocks);
    let factors = [by_warps, by_registers, by_shared_mem, by_blocks];
    let limiting_factors = factors
        .iter()
        .zip(BlockLimits::FACTORS)
        .filter(|(&limit, _)| limit == active_blocks)
        .fold(0, |bits, (_, (bit, _))| bits | bit);
    Some(BlockLimits {
        active_blocks,
        limiting_factors,
        by_registers,
        by_shared_mem,
        by_warps,
        by_blocks,
        by_barriers: i32::MAX,
        allocated_registers_per_block,
        allocated_shared_mem_per_block,
    })
}

/// Blocks per SM allowed by the register file, and the registers one block takes.
/// Registers go to warps, per partition of the SM.
fn registers_limit(device: &DeviceLimits, arch: &Arch, regs: i32, block_size: i32) -> (i32, i32) {
    let warps_per_block = c_div_round_up(block_size, device.warp_size);
    let regs_per_warp = c_round_up(regs.wrapping_mul(device.warp_size), arch.reg_granularity);
    let regs_per_block = regs_per_warp.wrapping_mul(warps_per_block);
    // The hardware checks a block against the per-block limit as if its warps
    // were spread over every partition.
    let regs_checked = regs_per_warp.wrapping_mul(c_round_up(warps_per_block, arch.sub_partitions));
    let limit = if device.regs_per_block < regs_checked
        || device.regs_per_block < regs_per_block
        || regs > arch.max_regs_per_thread
    {
        0
    } else if regs_per_warp > 0 {
        let per_partition = device.regs_per_multiprocessor / arch.sub_partitions;
        let warps_per_partition = per_partition / regs_per_warp;
        (warps_per_partition.wrapping_mul(arch.sub_partitions)).wrapping_div(warps_per_block)
    } else {
        i32::MAX
    };
    (limit, regs_per_block)
}

/// Blocks per SM allowed by shared memory, and the shared memory one block
/// takes; `None` where the calculator fails (a size past the SM's splits).
fn shared_mem_limit(
    device: &DeviceLimits,
    arch: &Arch,
    launch: &LaunchConfig,
) -> Option<(i32, u64)> {
    let granularity = arch.smem_granularity;
    // The split the SM is configured with by default: all of it.
    let per_sm_default = match arch.smem_carveouts_kib {
        Some(carveouts) => round_up_to_carveout(device.shared_mem_per_multiprocessor, carveouts)?,
        None => device.shared_mem_per_multiprocessor,
    };
    let reserved = device.reserved_shared_mem_per_block;
    // C: int32 -> size_t sign-extends; the total goes through `int` once.
    let static_smem = (launch.static_shared_memory as i64 as u64).wrapping_add(reserved);
    let total = static_smem.wrapping_add(launch.dynamic_shared_memory as i64 as u64);
    let allocated = c_round_up(total as i32, granularity) as i64 as u64;
    let mut per_block_limit = device.shared_mem_per_block;
    if device.compute_major >= 8 {
        per_block_limit = per_block_limit.wrapping_add(reserved);
    }
    if allocated > per_block_limit {
        return Some((0, allocated));
    }
    let per_sm = if per_sm_default >= allocated {
        per_sm_default
    } else {
        match arch.smem_carveouts_kib {
            Some(carveouts) => round_up_to_carveout(allocated, carveouts)?,
            None => device.shared_mem_per_multiprocessor,
        }
    };
    // A block with no shared memory at all is not limited by it. The quotient
    // goes through C's `int`, as in the header.
    let limit = per_sm
        .checked_div(allocated)
        .map_or(i32::MAX, |blocks| blocks as i32);
    Some((limit, allocated))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> DeviceLimits {
        let entry = serde_json::json!({
            "id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320u64,
            "computeMajor": 9, "computeMinor": 0,
            "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
            "regsPerBlock": 65536, "warpSize": 32,
            "sharedMemPerBlock": 49152, "numSms": 132,
            "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448,
            "sharedMemPerMultiprocessor": 233472
        });
        DeviceLimits::from_kineto_json(&entry).expect("the fixture's H200 entry")
    }

    fn launch(grid: i32, threads: i32, regs: u16, dynamic: i32) -> LaunchConfig {
        LaunchConfig {
            grid: [grid, 1, 1],
            block: [threads, 1, 1],
            registers_per_thread: regs,
            static_shared_memory: 0,
            dynamic_shared_memory: dynamic,
        }
    }

    // Worked by hand from the H200's figures: 64 warps, 4 partitions of 16384
    // registers, 228 KiB of shared memory, 1 KiB reserved per block.
    #[test]
    fn h200_by_hand() {
        let d = h200();
        assert_eq!(d.reserved_shared_mem_per_block, 1024);
        // (grid, threads, regs, dynamic smem) -> (active blocks, factors, percent)
        let cases = [
            // 1024 regs a warp: 16 warps a partition, 8 blocks; so do the warps.
            ((528, 256, 32, 0), (8, "WARPS|REGS", 50)),
            // 2048 regs a warp: 8 warps a partition, one 32-warp block (the
            // warps would allow two).
            ((264, 1024, 64, 0), (1, "REGS", 50)),
            // One block on 132 SMs: 1/132 of a block per SM.
            ((1, 1024, 64, 0), (1, "REGS", 0)),
            // 255 regs round up to 8192 a warp: 2 warps a partition, 2 blocks.
            ((10_000, 128, 255, 0), (2, "REGS", 13)),
            // 48 KiB + 1 KiB reserved is exactly the per-block limit: 4 fit.
            ((10_000, 256, 32, 49152), (4, "SMEM", 50)),
            // One byte more is past the limit: nothing runs.
            ((10_000, 256, 32, 49153), (0, "SMEM", 0)),
            // No registers: only the 32-block limit counts.
            ((10_000, 32, 0, 0), (32, "BLOCKS", 50)),
            // Past 1024 threads a block cannot run.
            ((10_000, 1025, 16, 0), (0, "WARPS", 0)),
        ];
        for ((grid, threads, regs, dynamic), (active, factors, percent)) in cases {
            let o = kernel_occupancy(&d, &launch(grid, threads, regs, dynamic));
            let limits = o.limits.expect("H200 is known");
            let case = (grid, threads, regs, dynamic);
            assert_eq!(o.active_blocks_per_sm, Some(active), "{case:?}");
            assert_eq!(limits.limiting_factors_text(), factors, "{case:?}");
            assert_eq!(o.achieved_occupancy_percent, Some(percent), "{case:?}");
            assert_eq!(o.torch_2_11_percent(), percent, "{case:?}");
        }
        let o = kernel_occupancy(&d, &launch(528, 256, 32, 0));
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (4.0, 32.0));
        let limits = o.limits.unwrap();
        assert_eq!(limits.allocated_registers_per_block, 8192);
        assert_eq!(limits.allocated_shared_mem_per_block, 1024);
        assert_eq!(limits.by_shared_mem, 228);
    }

    #[test]
    fn kineto_text_of_floats() {
        let one_block = kernel_occupancy(&h200(), &launch(1, 128, 32, 0));
        assert_eq!(kineto_float_text(one_block.blocks_per_sm), "0.007576");
        assert_eq!(kineto_float_text(one_block.warps_per_sm), "0.030303");
        // A tie at the sixth decimal goes to even, as printf's %f does.
        assert_eq!(kineto_float_text(1.0 / 128.0), "0.007812");
        assert_eq!(kineto_float_text(4.0), "4.000000");
        // Kineto's blocks per SM on a device of 0 SMs (one it has no properties
        // of), which the traces leave out.
        let (blocks, warps) = per_sm(&launch(1, 128, 32, 0), 0);
        assert_eq!(kineto_float_text(blocks), "\"inf\"");
        assert_eq!(kineto_float_text(warps), "\"inf\"");
    }

    #[test]
    fn calculator_failures_give_no_occupancy() {
        let mut sm_107 = h200();
        (sm_107.compute_major, sm_107.compute_minor) = (10, 7);
        let mut no_sms = h200();
        no_sms.num_sms = 0;
        for d in [sm_107, no_sms] {
            let o = kernel_occupancy(&d, &launch(132, 256, 32, 0));
            assert_eq!(
                (o.active_blocks_per_sm, o.achieved_occupancy_percent),
                (None, None)
            );
            assert_eq!(o.torch_2_11_percent(), -99);
        }
        let empty_block = kernel_occupancy(&h200(), &launch(132, 0, 32, 0));
        assert_eq!(empty_block.limits, None);
    }
}
