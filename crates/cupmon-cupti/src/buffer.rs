//! Activity buffers: owned, page-aligned blocks that cupmon lends to CUPTI,
//! and the completed buffers CUPTI hands back.
//!
//! Each buffer is its own anonymous mapping rather than a heap block: a
//! buffer freed after a burst goes back to the kernel at once (glibc keeps
//! large freed heap blocks once its mmap threshold has risen), so the
//! monitor's memory falls back when CUPTI stops holding many buffers.

use std::fmt;
use std::ptr::NonNull;

/// An owned, zero-initialised, page-aligned block of memory for CUPTI to fill
/// with activity records. Unmapped on drop.
pub struct ActivityBuffer {
    ptr: NonNull<u8>,
    capacity: usize,
}

// SAFETY: the buffer owns its allocation exclusively (like a `Box<[u8]>`); nothing
// else points into it while an `ActivityBuffer` exists (CUPTI only holds the
// pointer between `into_raw` and `from_raw`).
unsafe impl Send for ActivityBuffer {}
// SAFETY: shared access only reads the bytes.
unsafe impl Sync for ActivityBuffer {}

impl ActivityBuffer {
    /// CUPTI requires 8-byte-aligned buffers; records are 8-byte aligned inside.
    pub const ALIGN: usize = 8;

    /// A buffer of at least `capacity` bytes (rounded up to a multiple of 8, at
    /// least 8). `None` when the allocation fails.
    pub fn try_new(capacity: usize) -> Option<Self> {
        let capacity = Self::rounded(capacity)?;
        // SAFETY: an anonymous private mapping of a non-zero length at an address
        // the kernel chooses touches no existing memory. Its pages read as zero,
        // so every byte is initialised and `as_slice` never exposes uninitialised
        // memory; they are page-aligned, above CUPTI's 8 bytes.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                capacity,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(ActivityBuffer {
            ptr: NonNull::new(ptr.cast())?,
            capacity,
        })
    }

    /// Like [`ActivityBuffer::try_new`]; panics if the mapping fails (the system
    /// is out of memory). For tests and examples; the monitor uses `try_new`.
    pub fn new(capacity: usize) -> Self {
        match Self::try_new(capacity) {
            Some(buffer) => buffer,
            None => panic!("cannot map an activity buffer of {capacity} bytes"),
        }
    }

    fn rounded(capacity: usize) -> Option<usize> {
        let size = capacity
            .max(Self::ALIGN)
            .checked_next_multiple_of(Self::ALIGN)?;
        (size <= isize::MAX as usize).then_some(size)
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the allocation is `capacity` bytes, all initialised (zeroed at
        // allocation, later written by CUPTI), and owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.capacity) }
    }

    /// Gives up ownership: the caller (CUPTI) may write the memory until it comes
    /// back through [`ActivityBuffer::from_raw`].
    pub(crate) fn into_raw(self) -> (NonNull<u8>, usize) {
        let raw = (self.ptr, self.capacity);
        std::mem::forget(self);
        raw
    }

    /// Takes ownership back.
    ///
    /// # Safety
    /// `ptr` and `capacity` must come from one earlier [`ActivityBuffer::into_raw`]
    /// whose buffer has not been rebuilt since, and nothing else may use the memory
    /// afterwards.
    pub(crate) unsafe fn from_raw(ptr: NonNull<u8>, capacity: usize) -> Self {
        ActivityBuffer { ptr, capacity }
    }
}

impl Drop for ActivityBuffer {
    fn drop(&mut self) {
        // SAFETY: mapped in `try_new` with this address and length, owned by
        // `self` and not used after this. munmap cannot fail for such a range.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.capacity) };
    }
}

impl fmt::Debug for ActivityBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActivityBuffer")
            .field("ptr", &self.ptr)
            .field("capacity", &self.capacity)
            .finish()
    }
}

/// A buffer CUPTI has finished with, as its completion callback reported it.
///
/// The bytes cannot be changed through this type, so the kernel-name pointers in
/// it are the ones CUPTI wrote; [`CompletedBuffer::kernel_names`] reads them.
#[derive(Debug)]
pub struct CompletedBuffer {
    buffer: ActivityBuffer,
    valid_size: usize,
    stream_id: u32,
    context: u64,
    dropped: u64,
    cupti_version: u32,
    /// Whether the records came from CUPTI in this process (so their name
    /// pointers are live). False for [`CompletedBuffer::detached`].
    from_cupti: bool,
}

impl CompletedBuffer {
    /// Built by the completion trampoline from a buffer CUPTI filled.
    pub(crate) fn from_cupti(
        buffer: ActivityBuffer,
        valid_size: usize,
        stream_id: u32,
        context: u64,
        dropped: u64,
        cupti_version: u32,
    ) -> Self {
        let valid_size = valid_size.min(buffer.capacity());
        CompletedBuffer {
            buffer,
            valid_size,
            stream_id,
            context,
            dropped,
            cupti_version,
            from_cupti: true,
        }
    }

    /// A completed buffer made without CUPTI, e.g. from recorded bytes in a test of
    /// the monitor. Its kernel names cannot be read (the pointers in it are not
    /// this process's), so [`CompletedBuffer::kernel_names`] yields nothing.
    pub fn detached(
        buffer: ActivityBuffer,
        valid_size: usize,
        stream_id: u32,
        dropped: u64,
        cupti_version: u32,
    ) -> Self {
        CompletedBuffer {
            from_cupti: false,
            ..Self::from_cupti(buffer, valid_size, stream_id, 0, dropped, cupti_version)
        }
    }

    /// The records: the first `valid_size` bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buffer.as_slice()[..self.valid_size]
    }

    pub fn valid_size(&self) -> usize {
        self.valid_size
    }

    /// The stream id CUPTI passed (deprecated by CUPTI: always 0 since CUDA 6).
    pub fn stream_id(&self) -> u32 {
        self.stream_id
    }

    /// The context pointer CUPTI passed, as a number (always 0 since CUDA 6).
    pub fn context(&self) -> u64 {
        self.context
    }

    /// `cuptiActivityGetNumDroppedRecords` for this buffer's context and stream,
    /// read when it completed: records CUPTI dropped since the previous buffer.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The `cuptiGetVersion` of the CUPTI that wrote the records (selects the layouts).
    pub fn cupti_version(&self) -> u32 {
        self.cupti_version
    }

    pub(crate) fn names_are_live(&self) -> bool {
        self.from_cupti
    }

    /// The underlying buffer, e.g. to give it back to a pool. Kernel names must be
    /// read before this.
    pub fn into_buffer(self) -> ActivityBuffer {
        self.buffer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_aligns_and_zeroes() {
        let buffer = ActivityBuffer::new(13);
        assert_eq!(buffer.capacity(), 16);
        assert_eq!(
            buffer.as_slice().as_ptr() as usize % ActivityBuffer::ALIGN,
            0
        );
        assert!(buffer.as_slice().iter().all(|&b| b == 0));
        assert_eq!(ActivityBuffer::new(0).capacity(), 8);
        assert!(ActivityBuffer::try_new(usize::MAX - 3).is_none());
    }

    #[test]
    fn raw_round_trip_keeps_the_allocation() {
        let buffer = ActivityBuffer::new(64);
        let (ptr, capacity) = buffer.into_raw();
        // SAFETY: straight from `into_raw`, rebuilt once.
        let buffer = unsafe { ActivityBuffer::from_raw(ptr, capacity) };
        assert_eq!(buffer.as_slice().as_ptr(), ptr.as_ptr().cast_const());
        let completed = CompletedBuffer::detached(buffer, 100, 0, 2, 130001);
        assert_eq!(completed.valid_size(), 64);
        assert_eq!(completed.dropped(), 2);
        assert_eq!(completed.into_buffer().capacity(), 64);
    }
}
