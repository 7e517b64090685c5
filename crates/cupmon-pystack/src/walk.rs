//! Reading the calling thread's interpreter frames without the GIL. The thread is inside
//! a C call (a CUDA launch) made from Python, so its own frames are frozen while it reads
//! them: no other thread runs this thread's frames, and the ones it reads live on its own
//! frame stack (or in a generator that it is running). What other threads may change
//! (other code objects being freed) is not read here: strings and lines are taken only at
//! the first sight of a frame (`resolve`), and the per-frame key also holds the code
//! object's file and name pointers, so that a code object freed and another allocated at
//! its address is told apart unless both pointers repeat too.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::layout::{FramePath, Layout, OBJECT_TYPE, UNICODE_LENGTH, UNICODE_STATE};
use crate::runtime::Runtime;

/// Frames kept per stack at most, innermost first; deeper stacks lose their outermost
/// frames. [`set_max_frames`] keeps fewer.
pub const MAX_DEPTH: usize = 96;

/// Frames kept per stack now (1 to [`MAX_DEPTH`]).
static MAX_FRAMES: AtomicUsize = AtomicUsize::new(MAX_DEPTH);

/// Keeps at most `frames` frames of each stack from now on, innermost first (clamped to
/// 1..=[`MAX_DEPTH`]). Each frame read costs a launch a few loads, which a deep stack
/// pays per frame (CUPMON_PYTHON_STACK_DEPTH). A stack cut shorter is another stack:
/// the thread caches key walks by their frames and whether they were cut.
pub fn set_max_frames(frames: usize) {
    MAX_FRAMES.store(frames.clamp(1, MAX_DEPTH), Ordering::Relaxed);
}
/// Frame links followed at most (a corrupt chain must not loop forever).
const MAX_LINKS: usize = 4096;
/// Characters read of a file or function name at most.
const MAX_TEXT: usize = 1024;

/// One frame as the walker keys it: the code object, its file and name pointers mixed
/// into one word, and the instruction's byte offset in the code. Three whole words, no
/// padding (`repr(C)`), so that a walk compares with a cached one as words
/// ([`same_frames`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub(crate) struct RawFrame {
    pub code: usize,
    pub names: usize,
    pub offset: i64,
}

const _: () = assert!(
    size_of::<RawFrame>() == 3 * size_of::<u64>() && align_of::<RawFrame>() == align_of::<u64>()
);

/// Whether two walks have the same frames: one comparison of their words (`memcmp`),
/// where comparing frame by frame, field by field, took a fifth of a cached stack's
/// lookup.
#[inline]
pub(crate) fn same_frames(a: &[RawFrame], b: &[RawFrame]) -> bool {
    let words = |f: &[RawFrame]| -> &[u64] {
        // SAFETY: `RawFrame` is `repr(C)` of three 8-byte integers with no padding
        // and `u64`'s alignment (asserted above), so a slice of them is a slice of
        // 3 * len initialised `u64`s, borrowed as long.
        unsafe { std::slice::from_raw_parts(f.as_ptr().cast::<u64>(), f.len() * 3) }
    };
    words(a) == words(b)
}

/// What one walk found.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Walk {
    pub frames: usize,
    /// Frames left out past the frames kept ([`set_max_frames`]).
    pub truncated: bool,
    /// A hash of the frames walked (all of each [`RawFrame`]), for the thread's cache,
    /// which compares the frames themselves on a hit: a collision costs a lookup in the
    /// process's table, never a wrong stack.
    pub hash: u64,
}

/// rustc-hash's multiplier (odd, with well-spread bits).
const MIX: u64 = 0xf135_7aea_2e62_a9c5;

/// The hash of a walk so far with one more frame. Computed during the walk, where its
/// chain of one rotate, xor and multiply per frame runs beside the chain of frame loads
/// (hashing the frames after the walk, with FxHasher over each field in turn, was the
/// larger part of the cost of a stack 30 frames deep: bench/results/
/// 2026-12-03-vm-stacks-paired-cost).
#[inline(always)]
pub(crate) fn mix(hash: u64, frame: &RawFrame) -> u64 {
    let word =
        frame.code as u64 ^ (frame.names as u64).rotate_left(32) ^ ((frame.offset as u64) << 48);
    (hash.rotate_left(26) ^ word).wrapping_mul(MIX)
}

/// # Safety
/// `addr` must be readable for a `T` (a field of a live CPython object).
#[inline]
unsafe fn read<T: Copy>(addr: usize) -> T {
    // SAFETY: the caller's contract; unaligned reads cost nothing on x86 and keep a
    // wrong layout from being undefined behaviour through misalignment alone.
    unsafe { (addr as *const T).read_unaligned() }
}

/// The calling thread's frames, innermost first, into `out`. Nothing when the thread has
/// no Python thread state, or Python is not (or no longer) initialised.
///
/// # Safety
/// `rt` must describe this process's CPython (found by `runtime()`); the calling thread
/// must not be running Python code now (it is inside a C call, with or without the GIL).
pub(crate) unsafe fn walk(rt: &Runtime, out: &mut [RawFrame; MAX_DEPTH]) -> Walk {
    let mut walk = Walk::default();
    // SAFETY: CPython's own functions, safe to call without the GIL: the first reads a
    // global flag, the second a thread-specific key.
    let tstate = unsafe {
        if (rt.is_initialized)() == 0 {
            return walk;
        }
        (rt.this_thread_state)() as usize
    };
    if tstate == 0 {
        return walk;
    }
    let l = &rt.layout;
    let max_frames = MAX_FRAMES.load(Ordering::Relaxed).min(MAX_DEPTH);
    // SAFETY: `tstate` is this thread's live `PyThreadState`; the layout is its version's.
    let mut frame: usize = unsafe {
        match l.tstate_frame {
            FramePath::CFrame {
                cframe,
                current_frame,
            } => {
                let cf: usize = read(tstate + cframe);
                if cf == 0 {
                    return walk;
                }
                read(cf + current_frame)
            }
            FramePath::Direct(offset) => read(tstate + offset),
        }
    };
    for _ in 0..MAX_LINKS {
        if frame == 0 {
            break;
        }
        // SAFETY: a frame of this thread's chain (see the module comment), read with its
        // version's layout.
        let (code, previous, instr, owner) = unsafe {
            (
                read::<usize>(frame + l.frame_code),
                read::<usize>(frame + l.frame_previous),
                read::<usize>(frame + l.frame_instr),
                read::<u8>(frame + l.frame_owner),
            )
        };
        frame = previous;
        if Some(owner) == l.owner_cstack || code == 0 {
            continue;
        }
        // SAFETY: a non-null object pointer of a live frame: its header is readable.
        if l.frame_code_may_not_be_code
            && unsafe { read::<usize>(code + OBJECT_TYPE) } != rt.code_type
        {
            continue; // not a code object (3.13's executables that are not code)
        }
        if walk.frames == max_frames {
            walk.truncated = true;
            break;
        }
        // SAFETY: a live code object of this version.
        let names = unsafe {
            read::<usize>(code + l.code_filename)
                ^ read::<usize>(code + l.code_qualname).rotate_left(17)
        };
        let offset = (instr as isize).wrapping_sub((code + l.code_adaptive) as isize);
        let raw = RawFrame {
            code,
            names,
            offset: offset as i64,
        };
        walk.hash = mix(walk.hash, &raw);
        out[walk.frames] = raw;
        walk.frames += 1;
    }
    walk
}

/// A frame's file, function and line, read at its first sight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub file: String,
    pub function: String,
    pub line: i32,
}

/// # Safety
/// As [`walk`], and `raw` must come from a walk of this thread that is still current
/// (the same launch call).
pub(crate) unsafe fn resolve(rt: &Runtime, raw: RawFrame) -> Resolved {
    let l = &rt.layout;
    // SAFETY: `raw.code` is a live code object of this version (its frames hold only
    // code objects there, or `walk` checked the type); `PyCode_Addr2Line` reads only
    // the immutable line table (no allocation, no GIL needed), and gets an offset
    // inside the code (else -1: the first line).
    unsafe {
        let units: isize = read(raw.code + 16); // `ob_size`: code units
        let offset = match i32::try_from(raw.offset) {
            Ok(offset) if offset >= 0 && (offset as isize) < units.saturating_mul(2) => offset,
            _ => -1,
        };
        let line = (rt.addr2line)(raw.code as *mut _, offset);
        Resolved {
            file: text(l, read(raw.code + l.code_filename)),
            function: text(l, read(raw.code + l.code_qualname)),
            line,
        }
    }
}

/// A `str` object's text, read from its compact representation (a code object's names
/// always are); `"?"` for anything else.
///
/// # Safety
/// `obj` must be null or a live `str` object of this version.
unsafe fn text(l: &Layout, obj: usize) -> String {
    if obj == 0 {
        return "?".to_owned();
    }
    // SAFETY: the caller's contract: a `PyASCIIObject` header is readable, and a compact
    // string's `length` characters of `kind` bytes follow its struct.
    unsafe {
        let state: u32 = read(obj + UNICODE_STATE);
        let length: isize = read(obj + UNICODE_LENGTH);
        let kind = (state >> 2) & 7;
        let compact = state & (1 << 5) != 0;
        let ascii = state & (1 << 6) != 0;
        if !compact || length < 0 {
            return "?".to_owned();
        }
        let n = (length as usize).min(MAX_TEXT);
        let data = obj + if ascii { l.ascii_size } else { l.compact_size };
        let char_at = |i: usize| -> Option<char> {
            match kind {
                1 => Some(char::from(read::<u8>(data + i))),
                2 => char::from_u32(u32::from(read::<u16>(data + 2 * i))),
                4 => char::from_u32(read::<u32>(data + 4 * i)),
                _ => None,
            }
        };
        let mut s = String::with_capacity(n);
        for i in 0..n {
            s.push(char_at(i).unwrap_or('\u{fffd}'));
        }
        s
    }
}
