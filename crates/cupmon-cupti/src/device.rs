//! The GPUs' properties, as Kineto writes them at the top of its traces
//! (`deviceProperties`), read from the CUDA driver.

use std::ffi::{c_char, c_int, CStr};

use libloading::Library;

use crate::env_vars;

/// One device, with the fields of Kineto's `deviceProperties` entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProperties {
    pub id: i32,
    pub name: String,
    pub total_global_mem: u64,
    pub compute_major: i32,
    pub compute_minor: i32,
    pub max_threads_per_block: i32,
    pub max_threads_per_multiprocessor: i32,
    pub regs_per_block: i32,
    pub warp_size: i32,
    pub shared_mem_per_block: i32,
    pub num_sms: i32,
    pub regs_per_multiprocessor: i32,
    pub shared_mem_per_block_optin: i32,
    pub shared_mem_per_multiprocessor: i32,
    /// Not in Kineto's JSON: the most blocks an SM holds at once (`None` when
    /// the driver does not know the attribute).
    pub max_blocks_per_multiprocessor: Option<i32>,
    /// Not in Kineto's JSON: the shared memory the driver keeps for itself in each
    /// block (1 KiB from Ampere on), which CUDA's occupancy calculator adds to
    /// every block's use (`cudaDeviceProp::reservedSharedMemPerBlock`).
    pub reserved_shared_mem_per_block: Option<i32>,
}

// `CUdevice_attribute` values (CUDA driver API).
const MAX_THREADS_PER_BLOCK: c_int = 1;
const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 8;
const WARP_SIZE: c_int = 10;
const MAX_REGISTERS_PER_BLOCK: c_int = 12;
const MULTIPROCESSOR_COUNT: c_int = 16;
const MAX_THREADS_PER_MULTIPROCESSOR: c_int = 39;
const COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const COMPUTE_CAPABILITY_MINOR: c_int = 76;
const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: c_int = 81;
const MAX_REGISTERS_PER_MULTIPROCESSOR: c_int = 82;
const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
// Newer than the others: a driver without them answers CUDA_ERROR_INVALID_VALUE.
const MAX_BLOCKS_PER_MULTIPROCESSOR: c_int = 106;
const RESERVED_SHARED_MEMORY_PER_BLOCK: c_int = 111;

type GetCountFn = unsafe extern "C" fn(*mut c_int) -> c_int;
type GetFn = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type GetNameFn = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type TotalMemFn = unsafe extern "C" fn(*mut usize, c_int) -> c_int;
type GetAttributeFn = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;

/// Every device's properties, or `None` when the driver cannot say (not
/// initialised yet, a stand-in library in tests, no device).
pub fn device_properties() -> Option<Vec<DeviceProperties>> {
    let name = std::env::var_os(env_vars::CUPMON_LIBCUDA).unwrap_or_else(|| "libcuda.so.1".into());
    // SAFETY: the driver library, already loaded by the driver check; loading
    // it again only takes a reference.
    let lib = unsafe { Library::new(&name) }.ok()?;
    // SAFETY: the CUDA driver API's documented signatures for these symbols.
    let (count, get, get_name, total_mem, attribute) = unsafe {
        (
            *lib.get::<GetCountFn>(b"cuDeviceGetCount").ok()?,
            *lib.get::<GetFn>(b"cuDeviceGet").ok()?,
            *lib.get::<GetNameFn>(b"cuDeviceGetName").ok()?,
            *lib.get::<TotalMemFn>(b"cuDeviceTotalMem_v2").ok()?,
            *lib.get::<GetAttributeFn>(b"cuDeviceGetAttribute").ok()?,
        )
    };
    let mut n = 0;
    // SAFETY: a valid out-pointer; fails cleanly before cuInit.
    if unsafe { count(&mut n) } != 0 {
        return None;
    }
    let mut devices = Vec::new();
    for ordinal in 0..n {
        let mut dev = 0;
        // SAFETY: valid out-pointer, ordinal below the count.
        if unsafe { get(&mut dev, ordinal) } != 0 {
            return None;
        }
        let attr = |a: c_int| {
            let mut v = 0;
            // SAFETY: valid out-pointer, a device handle from cuDeviceGet.
            (unsafe { attribute(&mut v, a, dev) } == 0).then_some(v)
        };
        let mut name_buf = [0 as c_char; 256];
        let mut mem = 0usize;
        // SAFETY: the buffer holds 256 bytes and the driver NUL-terminates within it.
        let named = unsafe { get_name(name_buf.as_mut_ptr(), 256, dev) } == 0;
        // SAFETY: valid out-pointer.
        let sized = unsafe { total_mem(&mut mem, dev) } == 0;
        if !(named && sized) {
            return None;
        }
        // SAFETY: NUL-terminated by cuDeviceGetName.
        let name = unsafe { CStr::from_ptr(name_buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        devices.push(DeviceProperties {
            id: ordinal,
            name,
            total_global_mem: mem as u64,
            compute_major: attr(COMPUTE_CAPABILITY_MAJOR)?,
            compute_minor: attr(COMPUTE_CAPABILITY_MINOR)?,
            max_threads_per_block: attr(MAX_THREADS_PER_BLOCK)?,
            max_threads_per_multiprocessor: attr(MAX_THREADS_PER_MULTIPROCESSOR)?,
            regs_per_block: attr(MAX_REGISTERS_PER_BLOCK)?,
            warp_size: attr(WARP_SIZE)?,
            shared_mem_per_block: attr(MAX_SHARED_MEMORY_PER_BLOCK)?,
            num_sms: attr(MULTIPROCESSOR_COUNT)?,
            regs_per_multiprocessor: attr(MAX_REGISTERS_PER_MULTIPROCESSOR)?,
            shared_mem_per_block_optin: attr(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            shared_mem_per_multiprocessor: attr(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            max_blocks_per_multiprocessor: attr(MAX_BLOCKS_PER_MULTIPROCESSOR),
            reserved_shared_mem_per_block: attr(RESERVED_SHARED_MEMORY_PER_BLOCK),
        });
    }
    (!devices.is_empty()).then_some(devices)
}
