//! Stacks interned: each distinct stack is stored once and named by a number. A launch
//! looks its stack up in its thread's own cache (no lock: the per-launch path); only a
//! stack the thread has not seen takes the process-wide table's lock, resolves the
//! frames it has not seen (file, function, line) and records what is new for the
//! monitor to write ([`take_new`]).

use std::cell::RefCell;
use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;

use crate::runtime::Runtime;
use crate::walk::{self, RawFrame, MAX_DEPTH};

/// The stack of a thread that has no Python frames (a C++ thread, the autograd engine's
/// backward threads): interned stacks are numbered from 1.
pub const NO_PYTHON_FRAMES: u32 = 0;
/// A thread's cache is emptied past this many stacks (a program that makes stacks
/// without end must not grow it without end).
const THREAD_CACHE_STACKS: usize = 1 << 16;
/// Interned stacks at most; past it new stacks are not attributed (counted).
const MAX_STACKS: u32 = 1 << 24;

/// Whose code a frame is, so that views can hide library frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    User,
    Torch,
    Triton,
    Cupmon,
    /// Code with no source file of its own: `exec`'d text (`<string>`: Triton's
    /// launchers), torch.fx's `<eval_with_key>`, `<frozen ...>` modules.
    Generated,
}

impl Origin {
    /// By the file's path: a `torch`, `triton` or `cupmon` package directory.
    pub fn of_file(file: &str) -> Origin {
        // `/dir/` anywhere or `dir/` at the start: a path component other than the last
        // (the file's name). Compared without formatting a pattern: this runs at a
        // frame's first sight, under the process's stack table lock.
        let has = |dir: &str| {
            let mut parts = file.split('/');
            parts.next_back();
            parts.any(|part| part == dir)
        };
        if file.starts_with('<') {
            return Origin::Generated;
        }
        // Inductor writes its generated code under `torchinductor_<user>/` (in the
        // temporary directory, or TORCHINDUCTOR_CACHE_DIR): torch's code, not the
        // user's line that called the compiled function.
        let inductor = || {
            let mut parts = file.split('/');
            parts.next_back();
            parts.any(|part| part.starts_with("torchinductor_"))
        };
        if has("torch") || has("functorch") || inductor() {
            Origin::Torch
        } else if has("triton") {
            Origin::Triton
        } else if has("cupmon") {
            Origin::Cupmon
        } else {
            Origin::User
        }
    }

    /// The name the dump's stack table uses (`None` for the user's own code).
    pub fn label(self) -> Option<&'static str> {
        match self {
            Origin::User => None,
            Origin::Torch => Some("torch"),
            Origin::Triton => Some("triton"),
            Origin::Cupmon => Some("cupmon"),
            Origin::Generated => Some("generated"),
        }
    }
}

/// One source position.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    pub file: String,
    pub function: String,
    pub line: i32,
    pub origin: Origin,
}

/// One interned stack: its frames' numbers, innermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    pub id: u32,
    pub frames: Vec<u32>,
    /// Outer frames were left out (deeper than the walker keeps).
    pub truncated: bool,
    /// The backward of the forward op these frames launched: work of the autograd
    /// engine's threads, attributed by torch's sequence numbers ([`backward_of`]).
    pub backward: bool,
}

/// Frames and stacks interned since the last [`take_new`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewStacks {
    pub frames: Vec<(u32, Frame)>,
    pub stacks: Vec<Stack>,
    /// Stacks not interned because the table was full.
    pub refused: u64,
}

/// A stack's frames and whether it was cut (the frames shared with the reverse map).
type StackKey = (Arc<[u32]>, bool);

#[derive(Default)]
struct Table {
    by_raw: FxHashMap<RawFrame, u32>,
    by_frame: FxHashMap<Frame, u32>,
    stacks: FxHashMap<StackKey, u32>,
    /// Stack id → its frames (for [`backward_of`], which copies a stack's frames).
    by_id: FxHashMap<u32, StackKey>,
    /// Forward stack → its backward twin.
    backward: FxHashMap<u32, u32>,
    next_frame: u32,
    next_stack: u32,
    new: NewStacks,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn table() -> MutexGuard<'static, Option<Table>> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

struct ThreadCache {
    walked: [RawFrame; MAX_DEPTH],
    /// Hash of a walk → the walk and its stack.
    stacks: FxHashMap<u64, (Box<[RawFrame]>, bool, u32)>,
}

thread_local! {
    static CACHE: RefCell<ThreadCache> = RefCell::new(ThreadCache {
        walked: [RawFrame::default(); MAX_DEPTH],
        stacks: FxHashMap::default(),
    });
}

/// The calling thread's stack, interned. `None` when it cannot be had (the cache is in
/// use by an outer call on this thread, or the table is full).
///
/// # Safety
/// As `walk::walk`: `rt` is this process's CPython and the thread is inside a C call.
pub(crate) unsafe fn this_thread(rt: &Runtime) -> Option<u32> {
    CACHE.with(|cache| {
        let mut cache = cache.try_borrow_mut().ok()?;
        let cache = &mut *cache;
        // SAFETY: the caller's contract.
        let walk = unsafe { walk::walk(rt, &mut cache.walked) };
        if walk.frames == 0 {
            return Some(NO_PYTHON_FRAMES);
        }
        let key = &cache.walked[..walk.frames];
        let hash = walk.hash ^ u64::from(walk.truncated);
        if let Some((seen, truncated, id)) = cache.stacks.get(&hash) {
            if walk::same_frames(seen, key) && *truncated == walk.truncated {
                return Some(*id);
            }
        }
        // SAFETY: the caller's contract; `key` is this walk's.
        let id = unsafe { intern(rt, key, walk.truncated) }?;
        if cache.stacks.len() >= THREAD_CACHE_STACKS {
            cache.stacks.clear();
        }
        cache.stacks.insert(hash, (key.into(), walk.truncated, id));
        Some(id)
    })
}

/// # Safety
/// As [`this_thread`], `raw` being this call's walk.
unsafe fn intern(rt: &Runtime, raw: &[RawFrame], truncated: bool) -> Option<u32> {
    let mut guard = table();
    let t = guard.get_or_insert_with(|| Table {
        next_frame: 1,
        next_stack: 1,
        ..Table::default()
    });
    let mut frames = Vec::with_capacity(raw.len());
    for &r in raw {
        let id = match t.by_raw.get(&r) {
            Some(&id) => id,
            None => {
                // SAFETY: the caller's contract.
                let resolved = unsafe { walk::resolve(rt, r) };
                let frame = Frame {
                    origin: Origin::of_file(&resolved.file),
                    file: resolved.file,
                    function: resolved.function,
                    line: resolved.line,
                };
                let id = match t.by_frame.get(&frame) {
                    Some(&id) => id,
                    None => {
                        let id = t.next_frame;
                        t.next_frame += 1;
                        t.by_frame.insert(frame.clone(), id);
                        t.new.frames.push((id, frame));
                        id
                    }
                };
                t.by_raw.insert(r, id);
                id
            }
        };
        frames.push(id);
    }
    let key: StackKey = (frames.into(), truncated);
    if let Some(&id) = t.stacks.get(&key) {
        return Some(id);
    }
    let id = t.new_id()?;
    t.new.stacks.push(Stack {
        id,
        frames: key.0.to_vec(),
        truncated,
        backward: false,
    });
    t.by_id.insert(id, key.clone());
    t.stacks.insert(key, id);
    Some(id)
}

impl Table {
    /// The next stack id; `None` (counted) past [`MAX_STACKS`].
    fn new_id(&mut self) -> Option<u32> {
        if self.next_stack >= MAX_STACKS {
            self.new.refused += 1;
            return None;
        }
        let id = self.next_stack;
        self.next_stack += 1;
        Some(id)
    }
}

/// The stack that stands for "the backward of the op `forward` launched": the same
/// frames, marked backward, interned once per forward stack. The autograd engine runs
/// backward ops on threads without Python frames; torch's sequence numbers tie each to
/// the forward op that made it (cupmon-inject's NVTX side reads them). `None` for a
/// stack this process never interned, or when the table is full (counted).
pub fn backward_of(forward: u32) -> Option<u32> {
    let mut guard = table();
    let t = guard.as_mut()?;
    if let Some(&id) = t.backward.get(&forward) {
        return Some(id);
    }
    let (frames, truncated) = t.by_id.get(&forward)?.clone();
    let id = t.new_id()?;
    t.new.stacks.push(Stack {
        id,
        frames: frames.to_vec(),
        truncated,
        backward: true,
    });
    t.backward.insert(forward, id);
    Some(id)
}

/// What was interned since the last call (the monitor writes it to the dump before the
/// launches that use it).
pub fn take_new() -> NewStacks {
    table()
        .as_mut()
        .map(|t| std::mem::take(&mut t.new))
        .unwrap_or_default()
}

/// Every frame and stack interned so far (a new dump in the same process starts with
/// them: ids are the process's).
pub fn all() -> NewStacks {
    let guard = table();
    let Some(t) = guard.as_ref() else {
        return NewStacks::default();
    };
    let mut frames: Vec<(u32, Frame)> = t.by_frame.iter().map(|(f, &id)| (id, f.clone())).collect();
    frames.sort_by_key(|(id, _)| *id);
    let mut stacks: Vec<Stack> = t
        .stacks
        .iter()
        .map(|((frames, truncated), &id)| Stack {
            id,
            frames: frames.to_vec(),
            truncated: *truncated,
            backward: false,
        })
        .collect();
    stacks.extend(t.backward.iter().filter_map(|(forward, &id)| {
        let (frames, truncated) = t.by_id.get(forward)?;
        Some(Stack {
            id,
            frames: frames.to_vec(),
            truncated: *truncated,
            backward: true,
        })
    }));
    stacks.sort_by_key(|s| s.id);
    NewStacks {
        frames,
        stacks,
        refused: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backward_twin_has_its_forwards_frames_and_is_interned_once() {
        let forward = {
            let mut guard = table();
            let t = guard.get_or_insert_with(|| Table {
                next_frame: 1,
                next_stack: 1,
                ..Table::default()
            });
            let key: StackKey = (Arc::from(vec![3u32, 1]), true);
            let id = t.new_id().unwrap();
            t.by_id.insert(id, key.clone());
            t.stacks.insert(key, id);
            id
        };
        let _ = take_new();
        let twin = backward_of(forward).expect("a twin");
        assert_ne!(twin, forward);
        assert_eq!(backward_of(forward), Some(twin), "interned once");
        let new = take_new();
        assert_eq!(
            new.stacks,
            vec![Stack {
                id: twin,
                frames: vec![3, 1],
                truncated: true,
                backward: true,
            }]
        );
        assert!(all().stacks.iter().any(|s| s.id == twin && s.backward));
        assert_eq!(backward_of(999_999), None, "a stack never interned");
    }

    #[test]
    fn library_frames_are_told_by_their_package() {
        let o = Origin::of_file;
        assert_eq!(
            o("/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py"),
            Origin::Torch
        );
        assert_eq!(
            o("/venv/site-packages/triton/runtime/jit.py"),
            Origin::Triton
        );
        assert_eq!(o("/x/python/cupmon/__init__.py"), Origin::Cupmon);
        assert_eq!(o("/home/me/train.py"), Origin::User);
        assert_eq!(o("/home/me/torchvision_demo.py"), Origin::User);
        // torch.compile's code, as seen on the H200 (tests/gpu/stacks.sh part 3).
        assert_eq!(
            o("/tmp/torchinductor_root/64/c642kqemx5rozj2jmwfijstvjdchfww7iceavnbpklo3lslgsdba.py"),
            Origin::Torch
        );
        assert_eq!(o("<string>"), Origin::Generated);
        assert_eq!(o("<eval_with_key>.3"), Origin::Generated);
    }
}
