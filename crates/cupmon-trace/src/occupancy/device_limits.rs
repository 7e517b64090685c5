//! A GPU's limits as the occupancy calculation reads them, from the
//! `deviceProperties` entries of Kineto's traces (which cupmon writes too).

use serde_json::Value;

use super::arch::default_reserved_smem;

/// A GPU as the occupancy calculation needs it: the fields of one of Kineto's
/// `deviceProperties` entries, plus what cupmon adds from the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceLimits {
    pub id: u32,
    pub compute_major: i32,
    pub compute_minor: i32,
    pub max_threads_per_block: i32,
    pub max_threads_per_multiprocessor: i32,
    pub regs_per_block: i32,
    pub regs_per_multiprocessor: i32,
    pub warp_size: i32,
    pub shared_mem_per_block: u64,
    pub shared_mem_per_multiprocessor: u64,
    pub shared_mem_per_block_optin: u64,
    pub num_sms: i32,
    /// `reservedSharedMemPerBlock` when the entry has it (Kineto hands the
    /// driver's value to the calculator), else the architecture's default.
    pub reserved_shared_mem_per_block: u64,
    /// `maxBlocksPerMultiprocessor` when the entry has it. Informative only:
    /// CUDA's calculator, and so Kineto, takes this limit from its own table by
    /// compute capability, never from the driver.
    pub driver_max_blocks_per_multiprocessor: Option<i32>,
}

impl DeviceLimits {
    /// One entry of a trace's `deviceProperties`, or `None` when a field the
    /// calculation needs is missing or out of range (a ROCm or XPU entry, say).
    pub fn from_kineto_json(entry: &Value) -> Option<Self> {
        let int = |key: &str| i32::try_from(entry.get(key)?.as_i64()?).ok();
        let size = |key: &str| entry.get(key)?.as_u64();
        // Absent and null (an unknown driver attribute) both mean "not given".
        let optional = |key: &str| entry.get(key).filter(|v| !v.is_null());
        let compute_major = int("computeMajor")?;
        let reserved_shared_mem_per_block = match optional("reservedSharedMemPerBlock") {
            Some(v) => v.as_u64()?,
            None => default_reserved_smem(compute_major),
        };
        let driver_max_blocks_per_multiprocessor = match optional("maxBlocksPerMultiprocessor") {
            Some(v) => Some(i32::try_from(v.as_i64()?).ok()?),
            None => None,
        };
        Some(DeviceLimits {
            id: u32::try_from(entry.get("id")?.as_u64()?).ok()?,
            compute_major,
            compute_minor: int("computeMinor")?,
            max_threads_per_block: int("maxThreadsPerBlock")?,
            max_threads_per_multiprocessor: int("maxThreadsPerMultiprocessor")?,
            regs_per_block: int("regsPerBlock")?,
            regs_per_multiprocessor: int("regsPerMultiprocessor")?,
            warp_size: int("warpSize")?,
            shared_mem_per_block: size("sharedMemPerBlock")?,
            shared_mem_per_multiprocessor: size("sharedMemPerMultiprocessor")?,
            shared_mem_per_block_optin: size("sharedMemPerBlockOptin")?,
            num_sms: int("numSms")?,
            reserved_shared_mem_per_block,
            driver_max_blocks_per_multiprocessor,
        })
    }

    /// The calculator's check of the device: every limit positive.
    pub(super) fn is_valid(&self) -> bool {
        [
            self.max_threads_per_block,
            self.max_threads_per_multiprocessor,
            self.regs_per_block,
            self.regs_per_multiprocessor,
            self.warp_size,
            self.num_sms,
        ]
        .iter()
        .all(|&v| v > 0)
            && self.shared_mem_per_block > 0
            && self.shared_mem_per_multiprocessor > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_json_keys() {
        let mut entry = serde_json::json!({
            "id": 1, "computeMajor": 7, "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
            "sharedMemPerBlock": 49152, "numSms": 80, "regsPerMultiprocessor": 65536,
            "sharedMemPerBlockOptin": 98304, "sharedMemPerMultiprocessor": 98304,
            "maxBlocksPerMultiprocessor": null
        });
        let v100 = DeviceLimits::from_kineto_json(&entry).unwrap();
        assert_eq!((v100.id, v100.reserved_shared_mem_per_block), (1, 0));
        assert_eq!(v100.driver_max_blocks_per_multiprocessor, None);
        entry["reservedSharedMemPerBlock"] = 512.into();
        entry["maxBlocksPerMultiprocessor"] = 32.into();
        let given = DeviceLimits::from_kineto_json(&entry).unwrap();
        assert_eq!(given.reserved_shared_mem_per_block, 512);
        assert_eq!(given.driver_max_blocks_per_multiprocessor, Some(32));
        entry["reservedSharedMemPerBlock"] = "1KiB".into();
        assert_eq!(DeviceLimits::from_kineto_json(&entry), None);
        entry
            .as_object_mut()
            .unwrap()
            .remove("reservedSharedMemPerBlock");
        entry
            .as_object_mut()
            .unwrap()
            .remove("regsPerMultiprocessor");
        assert_eq!(DeviceLimits::from_kineto_json(&entry), None);
    }
}
