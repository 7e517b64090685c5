//! A stand-in for a CUDA program, for tests without a GPU: it does what the
//! CUDA driver does at `cuInit` (load `CUDA_INJECTION64_PATH` and call its
//! `InitializeInjection`), then "launches" work through the fake libcupti
//! (`CUPMON_LIBCUPTI`).
//!
//! usage: fake_cuda_app [launch N] [sleep MS] [sigterm] [sigkill] [nocuda] ...
//! (steps run in order)
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, CString};

type Launch = unsafe extern "C" fn(u32, u32, *const c_char) -> c_int;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("nocuda") {
        println!("no CUDA here");
        return;
    }
    let inject = std::env::var("CUDA_INJECTION64_PATH").expect("CUDA_INJECTION64_PATH");
    let fake = std::env::var("CUPMON_LIBCUPTI").expect("CUPMON_LIBCUPTI");
    // SAFETY: loading libraries whose initialisers are cupmon's own.
    let inject = unsafe { libloading::Library::new(&inject) }.expect("load the injection library");
    // SAFETY: InitializeInjection has this signature (the CUDA driver's contract).
    let init: libloading::Symbol<unsafe extern "C" fn() -> c_int> =
        unsafe { inject.get(b"InitializeInjection") }.expect("InitializeInjection");
    // SAFETY: called once, as the driver would.
    assert_eq!(unsafe { init() }, 1);
    // SAFETY: the fake libcupti, already loaded by the monitor (same handle).
    let fake = unsafe { libloading::Library::new(&fake) }.expect("load the fake libcupti");
    // SAFETY: the fake's control function has this signature.
    let launch: libloading::Symbol<Launch> =
        unsafe { fake.get(b"cupmonFakeLaunchKernels") }.expect("cupmonFakeLaunchKernels");
    let name = CString::new("_ZN4demo3addEPfPKfi").expect("name");
    let mut steps = args.iter();
    while let Some(step) = steps.next() {
        match step.as_str() {
            "launch" => {
                let n: u32 = steps.next().and_then(|v| v.parse().ok()).expect("launch N");
                // SAFETY: a valid C string and plain integers.
                assert_eq!(unsafe { launch(n, 7, name.as_ptr()) }, 0);
            }
            "sleep" => {
                let ms: u64 = steps.next().and_then(|v| v.parse().ok()).expect("sleep MS");
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            "sigterm" | "sigkill" => {
                let sig = if step == "sigterm" {
                    libc::SIGTERM
                } else {
                    libc::SIGKILL
                };
                // SAFETY: signalling our own process.
                unsafe { libc::kill(libc::getpid(), sig) };
                std::thread::sleep(std::time::Duration::from_secs(5));
                panic!("still alive after {step}");
            }
            other => panic!("unknown step {other}"),
        }
    }
    // Leak the libraries: the exit flush runs from the injection library's atexit hook.
    std::mem::forget(fake);
    std::mem::forget(inject);
}
