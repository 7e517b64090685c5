//! Which line of Python launched a kernel: the calling thread's Python stack, read
//! without the GIL and interned.
//!
//! torch releases the GIL before it dispatches an op, so at `cudaLaunchKernel` the
//! launching thread does not hold it and CPython's C API (`PyEval_GetFrame`) cannot be
//! used. Its own frames are frozen while it is inside the call, so they are read
//! directly: the thread's state from `PyGILState_GetThisThreadState` (kept while the GIL
//! is released), then the chain of `_PyInterpreterFrame`s, with each version's layout
//! (`layout.rs`: CPython 3.11, 3.12, 3.13, release builds). Another version, or no
//! Python in the process: no attribution ([`status`] says why), never a crash.
//!
//! - `runtime`: finding this process's CPython (`dlsym`, no link to libpython).
//! - `walk`: the frame walk and the first-sight reading of a frame's file, function
//!   and line (`PyCode_Addr2Line`, which reads only the code's line table).
//! - `intern`: per-thread caches of whole stacks, the process's table of frames and
//!   stacks, and what is new since the monitor last wrote it.

#![allow(unsafe_code)]

mod intern;
pub mod layout;
mod runtime;
mod walk;

pub use intern::{all, backward_of, take_new, Frame, NewStacks, Origin, Stack, NO_PYTHON_FRAMES};
pub use walk::{set_max_frames, MAX_DEPTH};

/// The calling thread's Python stack, interned: `Some(NO_PYTHON_FRAMES)` for a thread
/// without Python frames, `None` when stacks cannot be read in this process (see
/// [`status`]) or this one could not be interned.
///
/// Call it only from a thread that is inside a C call (a CUDA launch callback): the
/// frames it reads are the thread's own and must not move while they are read.
#[inline]
pub fn this_thread_stack() -> Option<u32> {
    let rt = runtime::runtime().as_ref().ok()?;
    // SAFETY: `rt` is this process's CPython; the caller is inside a C call (this
    // function's contract, which the launch callbacks meet).
    unsafe { intern::this_thread(rt) }
}

/// Whether stacks can be read here: `Ok("CPython 3.12.1")` or why not.
pub fn status() -> Result<String, String> {
    match runtime::runtime() {
        Ok(rt) => {
            let v = rt.hex_version;
            Ok(format!(
                "CPython {}.{}.{}",
                v >> 24,
                (v >> 16) & 0xff,
                (v >> 8) & 0xff
            ))
        }
        Err(why) => Err(why.clone()),
    }
}
