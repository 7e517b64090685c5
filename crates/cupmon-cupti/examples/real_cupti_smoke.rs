//! Smoke test for a machine with an NVIDIA GPU: finds and loads the real
//! libcupti, records a memset and three launches of a PTX kernel made through the
//! driver API, flushes, decodes the buffers and resolves the kernel name.
//! Exits non-zero when anything is missing.
//!
//! `cargo run -p cupmon-cupti --example real_cupti_smoke`
#![allow(unsafe_code)] // the driver API calls that make GPU work to record

use std::collections::{BTreeMap, HashSet};
use std::ffi::{c_char, c_void, CString};
use std::ptr::null_mut as null;
use std::sync::Mutex;

use cupmon_cupti::{
    callback_stats, ActivityBuffer, ActivityKind, ActivitySink, CompletedBuffer, Cupti,
    CuptiStatus, ExternalCorrelationKind, FlushFlag, ThreadIdType,
};
use cupmon_records::{Layout, RecordIter};

const PTX: &str = "
.version 7.0
.target sm_50
.address_size 64
.visible .entry cupmon_smoke_kernel() { ret; }
";

#[derive(Default)]
struct Sink {
    kinds: Mutex<BTreeMap<String, usize>>,
    /// One entry per distinct name pointer.
    names: Mutex<Vec<String>>,
    seen: Mutex<HashSet<u64>>,
}

impl ActivitySink for Sink {
    fn request_buffer(&self) -> Option<ActivityBuffer> {
        Some(ActivityBuffer::new(1 << 20))
    }

    fn buffer_completed(&self, completed: CompletedBuffer) {
        let mut seen = self.seen.lock().unwrap();
        let new_names = completed.kernel_names(|ptr| seen.insert(ptr));
        self.names
            .lock()
            .unwrap()
            .extend(new_names.map(|(_, name)| name));
        let layout =
            Layout::for_api_version(completed.cupti_version()).expect("a known CUPTI version");
        let mut kinds = self.kinds.lock().unwrap();
        for record in RecordIter::new(completed.bytes(), layout) {
            match record {
                Ok(record) => {
                    *kinds
                        .entry(record.kind().cupti_name().into_owned())
                        .or_default() += 1
                }
                Err(error) => eprintln!("decode: {error}"),
            }
        }
        if completed.dropped() > 0 {
            eprintln!("dropped {} records", completed.dropped());
        }
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let cupti = Cupti::load()?;
    println!(
        "libcupti: {} (cuptiGetVersion {})",
        cupti.path().display(),
        cupti.version()
    );
    let status = CuptiStatus::ERROR_NOT_INITIALIZED;
    println!(
        "result string: {:?}; message: {:?}",
        cupti.result_string(status),
        cupti.error_message(status)
    );
    let empty_pop = cupti.pop_external_correlation_id(ExternalCorrelationKind::CUSTOM1);
    println!("pop from an empty stack: {}", empty_pop.unwrap_err());

    cupti.set_thread_id_type(ThreadIdType::SYSTEM)?;
    let sink: &'static Sink = Box::leak(Box::default());
    cupti.register_callbacks(sink)?;
    for kind in [
        ActivityKind::CONCURRENT_KERNEL,
        ActivityKind::MEMSET,
        ActivityKind::DRIVER,
    ] {
        cupti.enable(kind)?;
    }
    make_gpu_work()?;
    cupti.flush_all(FlushFlag::FORCED)?;

    let kinds = sink.kinds.lock().unwrap().clone();
    let names = sink.names.lock().unwrap().clone();
    println!("records: {kinds:?}");
    println!("kernel names: {names:?}");
    println!("callback stats: {:?}", callback_stats());
    let ok = kinds.get("CONCURRENT_KERNEL") == Some(&3)
        && kinds.get("MEMSET") == Some(&1)
        && kinds.get("DRIVER").is_some_and(|&n| n >= 5)
        && names == ["cupmon_smoke_kernel"];
    println!("{}", if ok { "SMOKE OK" } else { "SMOKE FAILED" });
    std::process::exit(if ok { 0 } else { 1 });
}

/// cuInit, a primary context, a 1 MiB memset and three launches of the PTX kernel.
fn make_gpu_work() -> Result<(), Box<dyn std::error::Error>> {
    type Res = i32;
    // SAFETY: the driver library; its initialisers are made to run in any process.
    let cuda = Box::leak(Box::new(unsafe {
        libloading::Library::new("libcuda.so.1")
    }?));
    macro_rules! sym {
        ($name:literal: $ty:ty) => {{
            // SAFETY: the driver API functions with the signatures documented in cuda.h.
            let symbol: libloading::Symbol<$ty> = unsafe { cuda.get($name.as_bytes()) }?;
            *symbol
        }};
    }
    let cu_init = sym!("cuInit": unsafe extern "C" fn(u32) -> Res);
    let device_get = sym!("cuDeviceGet": unsafe extern "C" fn(*mut i32, i32) -> Res);
    let ctx_retain =
        sym!("cuDevicePrimaryCtxRetain": unsafe extern "C" fn(*mut *mut c_void, i32) -> Res);
    let ctx_set = sym!("cuCtxSetCurrent": unsafe extern "C" fn(*mut c_void) -> Res);
    let mem_alloc = sym!("cuMemAlloc_v2": unsafe extern "C" fn(*mut u64, usize) -> Res);
    let memset = sym!("cuMemsetD8_v2": unsafe extern "C" fn(u64, u8, usize) -> Res);
    let module_load =
        sym!("cuModuleLoadData": unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> Res);
    let get_function = sym!("cuModuleGetFunction": unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> Res);
    type Launch = unsafe extern "C" fn(
        *mut c_void,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> Res;
    let launch = sym!("cuLaunchKernel": Launch);
    let synchronize = sym!("cuCtxSynchronize": unsafe extern "C" fn() -> Res);

    let check = |what: &str, result: Res| {
        if result == 0 {
            Ok(())
        } else {
            Err(format!("{what} failed: {result}"))
        }
    };
    let (mut device, mut context, mut memory) = (0, std::ptr::null_mut(), 0u64);
    let (mut module, mut function) = (std::ptr::null_mut(), std::ptr::null_mut());
    let ptx = CString::new(PTX)?;
    let name = CString::new("cupmon_smoke_kernel")?;
    // SAFETY: documented driver API calls with valid out-pointers, in order.
    unsafe {
        check("cuInit", cu_init(0))?;
        check("cuDeviceGet", device_get(&mut device, 0))?;
        check("cuDevicePrimaryCtxRetain", ctx_retain(&mut context, device))?;
        check("cuCtxSetCurrent", ctx_set(context))?;
        check("cuMemAlloc", mem_alloc(&mut memory, 1 << 20))?;
        check("cuMemsetD8", memset(memory, 0, 1 << 20))?;
        check(
            "cuModuleLoadData",
            module_load(&mut module, ptx.as_ptr().cast()),
        )?;
        check(
            "cuModuleGetFunction",
            get_function(&mut function, module, name.as_ptr()),
        )?;
        for _ in 0..3 {
            check(
                "cuLaunchKernel",
                launch(function, 1, 1, 1, 32, 1, 1, 0, null(), null(), null()),
            )?;
        }
        check("cuCtxSynchronize", synchronize())?;
    }
    Ok(())
}
