//! A stand-in for a CUDA program, for tests without a GPU: it does what the
//! CUDA driver does at `cuInit` (load `CUDA_INJECTION64_PATH` and call its
//! `InitializeInjection`), then "launches" work through the fake libcupti
//! (`CUPMON_LIBCUPTI`).
//!
//! usage: fake_cuda_app [STEP ...] (steps run in order)
//!   launch N, sleep MS, sigterm, sigkill, nocuda (first step only)
//!   steps N K E: N training steps of K launches of `demo::add` then E of
//!     `demo::straggle` (a rank made slower by extra work per step)
//!   _exit CODE, _Exit CODE: end through the C library's function of that name
//!   exit_in_handler CODE: `_exit(CODE)` from a SIGALRM handler
//!   fork_exit, fork_return, fork_sigterm: a child made by `fork` ends through
//!     `_exit(3)`, `exit(4)` or SIGTERM; the parent checks it did within 3 s
//!   slow_client MS: a second CUPTI client (through cupmon's interposed entry
//!     points) whose completion callback takes MS ms
//!   exiting_client CODE: a second CUPTI client whose completion callback calls
//!     `_exit(CODE)`
//!   kernel STREAM N NAME: N launches of kernel NAME on stream STREAM
//!   pending 0|1: kernels launched from now on never end (1) or end (0)
//!   grid X: kernels launched from now on have X blocks
//!   sync MS: a cudaStreamSynchronize that blocks MS ms
//!   sigabrt: abort(3)
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, CString};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

type Launch = unsafe extern "C" fn(u32, u32, *const c_char) -> c_int;
type Request = unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
type Complete = unsafe extern "C" fn(*mut std::ffi::c_void, u32, *mut u8, usize, usize);
type Register = unsafe extern "C" fn(Request, Complete) -> c_int;
type Enable = unsafe extern "C" fn(u32) -> c_int;

extern "C" {
    /// C99's `_Exit` (the libc crate does not declare it).
    fn _Exit(status: c_int) -> !;
}

/// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL.
const CONCURRENT_KERNEL: u32 = 10;

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
    let straggle = CString::new("_ZN4demo8straggleEv").expect("name");
    // SAFETY: the fake's control functions have these signatures.
    let (pending, grid, blocking): (
        libloading::Symbol<unsafe extern "C" fn(u32)>,
        libloading::Symbol<unsafe extern "C" fn(u32)>,
        libloading::Symbol<unsafe extern "C" fn(u32, u32, u64) -> c_int>,
    ) = unsafe {
        (
            fake.get(b"cupmonFakeSetKernelsPending").expect("pending"),
            fake.get(b"cupmonFakeSetGridX").expect("grid"),
            fake.get(b"cupmonFakeBlockingCall").expect("blocking call"),
        )
    };
    let mut steps = args.iter();
    while let Some(step) = steps.next() {
        let mut arg = || -> u64 {
            steps
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{step} needs a number"))
        };
        match step.as_str() {
            "launch" => {
                let n = arg() as u32;
                // SAFETY: a valid C string and plain integers.
                assert_eq!(unsafe { launch(n, 7, name.as_ptr()) }, 0);
            }
            "steps" => {
                let (n, per_step, extra) = (arg(), arg() as u32, arg() as u32);
                for _ in 0..n {
                    // SAFETY: valid C strings and plain integers.
                    assert_eq!(unsafe { launch(per_step, 7, name.as_ptr()) }, 0);
                    if extra > 0 {
                        // SAFETY: as above.
                        assert_eq!(unsafe { launch(extra, 7, straggle.as_ptr()) }, 0);
                    }
                }
            }
            "sleep" => std::thread::sleep(Duration::from_millis(arg())),
            "kernel" => {
                let (stream, n) = (arg() as u32, arg() as u32);
                let kernel = CString::new(steps.next().expect("kernel needs a name").as_str())
                    .expect("name");
                // SAFETY: a valid C string and plain integers.
                assert_eq!(unsafe { launch(n, stream, kernel.as_ptr()) }, 0);
            }
            // SAFETY: plain integers.
            "pending" => unsafe { pending(arg() as u32) },
            // SAFETY: as above.
            "grid" => unsafe { grid(arg() as u32) },
            // SAFETY: as above (runtime domain 2, cudaStreamSynchronize 131).
            "sync" => assert_eq!(unsafe { blocking(2, 131, arg()) }, 0),
            // SAFETY: ending the process as abort(3) does.
            "sigabrt" => unsafe { libc::abort() },
            "sigterm" | "sigkill" => {
                let sig = if step == "sigterm" {
                    libc::SIGTERM
                } else {
                    libc::SIGKILL
                };
                // SAFETY: signalling our own process.
                unsafe { libc::kill(libc::getpid(), sig) };
                std::thread::sleep(Duration::from_secs(5));
                panic!("still alive after {step}");
            }
            // SAFETY: ending the process; the dump is the injection library's business.
            "_exit" => unsafe { libc::_exit(arg() as c_int) },
            // SAFETY: as above.
            "_Exit" => unsafe { _Exit(arg() as c_int) },
            "exit_in_handler" => exit_in_handler(arg() as c_int),
            "fork_exit" => fork_and_check(Child::Exit, |s| {
                libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 3
            }),
            "fork_return" => fork_and_check(Child::Return, |s| {
                libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 4
            }),
            "fork_sigterm" => fork_and_check(Child::Sigterm, |s| {
                libc::WIFSIGNALED(s) && libc::WTERMSIG(s) == libc::SIGTERM
            }),
            "slow_client" => {
                SLOW_MS.store(arg(), Ordering::SeqCst);
                register_client(&inject);
            }
            "exiting_client" => {
                EXIT_CODE.store(arg() as i32, Ordering::SeqCst);
                register_client(&inject);
            }
            other => panic!("unknown step {other}"),
        }
    }
    // Leak the libraries: the exit flush runs from the injection library's atexit hook.
    std::mem::forget(fake);
    std::mem::forget(inject);
}

static HANDLER_CODE: AtomicI32 = AtomicI32::new(0);

extern "C" fn exit_now(_: c_int) {
    // SAFETY: _exit is async-signal-safe, as a handler needs.
    unsafe { libc::_exit(HANDLER_CODE.load(Ordering::SeqCst)) }
}

fn exit_in_handler(code: c_int) {
    HANDLER_CODE.store(code, Ordering::SeqCst);
    // SAFETY: installing a handler that only calls _exit, then raising the signal.
    unsafe {
        libc::signal(
            libc::SIGALRM,
            exit_now as extern "C" fn(c_int) as libc::sighandler_t,
        );
        libc::raise(libc::SIGALRM);
    }
    std::thread::sleep(Duration::from_secs(5));
    panic!("still alive after _exit in a handler");
}

#[derive(Clone, Copy)]
enum Child {
    Exit,
    Return,
    Sigterm,
}

/// Fork; the child ends as `how` says; the parent waits at most 3 s for it (a
/// child ends at once: it has no session to flush) and checks its status.
fn fork_and_check(how: Child, ok: impl Fn(c_int) -> bool) {
    // SAFETY: fork; the child only makes system calls and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: the child ends itself.
        unsafe {
            match how {
                Child::Exit => libc::_exit(3),
                Child::Return => libc::exit(4),
                Child::Sigterm => {
                    libc::kill(libc::getpid(), libc::SIGTERM);
                    libc::sleep(5);
                    libc::_exit(99);
                }
            }
        }
    }
    let since = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child without blocking.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            assert!(ok(status), "the child ended with status {status:#x}");
            println!("child {pid} ended after {:?}", since.elapsed());
            return;
        }
        if since.elapsed() > Duration::from_secs(3) {
            // SAFETY: killing our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the child made by fork hung at its end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

static SLOW_MS: AtomicU64 = AtomicU64::new(0);
static EXIT_CODE: AtomicI32 = AtomicI32::new(-1);
const CLIENT_BUFFER: usize = 1 << 20;

unsafe extern "C" fn client_request(buffer: *mut *mut u8, size: *mut usize, max: *mut usize) {
    let memory = Box::leak(vec![0u64; CLIENT_BUFFER / 8].into_boxed_slice());
    // SAFETY: CUPTI's contract: valid out-pointers.
    unsafe {
        *buffer = memory.as_mut_ptr().cast();
        *size = CLIENT_BUFFER;
        *max = 0;
    }
}

unsafe extern "C" fn client_complete(
    _: *mut std::ffi::c_void,
    _: u32,
    _: *mut u8,
    _: usize,
    _: usize,
) {
    let code = EXIT_CODE.load(Ordering::SeqCst);
    if code >= 0 {
        // SAFETY: ending the process from a completion callback, as the step says.
        unsafe { libc::_exit(code) };
    }
    std::thread::sleep(Duration::from_millis(SLOW_MS.load(Ordering::SeqCst)));
}

/// Register a second CUPTI client through cupmon's interposed entry points, as
/// Kineto does under `cupmon run`, with kernels on.
fn register_client(inject: &libloading::Library) {
    // SAFETY: cupmon's CUPTI entry points have CUPTI's signatures.
    unsafe {
        let register: libloading::Symbol<Register> = inject
            .get(b"cuptiActivityRegisterCallbacks")
            .expect("register");
        let enable: libloading::Symbol<Enable> =
            inject.get(b"cuptiActivityEnable").expect("enable");
        assert_eq!(register(client_request, client_complete), 0);
        assert_eq!(enable(CONCURRENT_KERNEL), 0);
    }
}
