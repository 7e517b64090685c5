//! Buffers kept from one export to the next on the same thread: a row group's
//! column buffers (about 150 MB for a million kernel rows) and the scratch
//! buffers. Fresh memory costs a page fault per 4 KiB on first touch, which was
//! the largest single cost of writing a million rows after the encodings
//! (bench/parquet/RESULTS.md); `cupmon export-parquet RUN_DIR` exports one dump
//! after another, so each after the first reuses what the last one grew. One
//! buffer of each type is kept (the largest), emptied; [`release_buffers`] drops
//! them.

use std::any::{Any, TypeId};
use std::cell::RefCell;

use rustc_hash::FxHashMap;

/// A buffer that can be emptied and says how much it holds.
pub trait Reusable: Default + 'static {
    fn clear(&mut self);
    /// Rows (or bytes) it has room for: the larger buffer is kept.
    fn room(&self) -> usize;
}

thread_local! {
    static SPARE: RefCell<FxHashMap<TypeId, Box<dyn Any>>> = RefCell::default();
}

/// A kept buffer of type `T`, or a new one.
pub fn take<T: Reusable>() -> T {
    SPARE
        .with(|s| s.borrow_mut().remove(&TypeId::of::<T>()))
        .and_then(|b| b.downcast::<T>().ok())
        .map_or_else(T::default, |b| *b)
}

/// Keep `buffer` (emptied) for the next [`take`], unless a larger one is kept.
pub fn give<T: Reusable>(mut buffer: T) {
    buffer.clear();
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        let kept = s
            .get(&TypeId::of::<T>())
            .and_then(|b| b.downcast_ref::<T>());
        if kept.is_none_or(|k| k.room() < buffer.room()) {
            s.insert(TypeId::of::<T>(), Box::new(buffer));
        }
    });
}

/// Drop the buffers this thread keeps (a long-running caller done exporting).
pub fn release_buffers() {
    SPARE.with(|s| s.borrow_mut().clear());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Buf(Vec<u8>);

    impl Reusable for Buf {
        fn clear(&mut self) {
            self.0.clear();
        }
        fn room(&self) -> usize {
            self.0.capacity()
        }
    }

    #[test]
    fn the_largest_buffer_is_kept_emptied() {
        release_buffers();
        give(Buf(Vec::with_capacity(10)));
        give(Buf(vec![1; 1000]));
        give(Buf(Vec::with_capacity(5)));
        let b: Buf = take();
        assert!(b.0.is_empty() && b.0.capacity() >= 1000);
        let again: Buf = take();
        assert_eq!(again.0.capacity(), 0);
        give(b);
        release_buffers();
        assert_eq!(take::<Buf>().0.capacity(), 0);
    }
}
