//! Reading kernel names from a completed buffer's own kernel records.
//!
//! A kernel record holds CUPTI's `const char *name`. Dereferencing a number is
//! only sound if CUPTI wrote it as a name pointer, so names are read only from
//! pointers found by decoding this very buffer (which safe code cannot modify)
//! with `cupmon-records`' layout for the CUPTI version that wrote it, and only
//! while the buffer is alive in the process whose CUPTI filled it.

use std::ffi::{c_char, CStr};

use cupmon_records::{Layout, Record, RecordIter};

use crate::buffer::CompletedBuffer;

impl CompletedBuffer {
    /// `(pointer, name)` for each kernel record of this buffer whose non-null name
    /// pointer `is_new` accepts (ask once per pointer: e.g. insert into a set of
    /// pointers already written and return whether it was new). Decoding stops at
    /// the first record the layout cannot decode; a buffer from a CUPTI version
    /// without a layout table, or a [`CompletedBuffer::detached`] one, yields nothing.
    pub fn kernel_names<'a>(
        &'a self,
        mut is_new: impl FnMut(u64) -> bool + 'a,
    ) -> impl Iterator<Item = (u64, String)> + 'a {
        let layout = Layout::for_api_version(self.cupti_version())
            .ok()
            .filter(|_| self.names_are_live());
        let records = layout.map(|layout| RecordIter::new(self.bytes(), layout));
        records
            .into_iter()
            .flatten()
            .map_while(Result::ok)
            .filter_map(move |record| {
                let Record::Kernel(kernel) = record else {
                    return None;
                };
                let ptr = kernel.name_ptr;
                if ptr == 0 || !is_new(ptr) {
                    return None;
                }
                // SAFETY: `ptr` is the `name` field of a kernel record that CUPTI wrote
                // into this buffer in this process (`names_are_live`; the bytes are
                // immutable since), decoded with the layout of the CUPTI that wrote it.
                // CUPTI keeps kernel names alive at least while the buffer is held and
                // NUL-terminates them.
                let name = unsafe { CStr::from_ptr(ptr as usize as *const c_char) };
                Some((ptr, name.to_string_lossy().into_owned()))
            })
    }
}
