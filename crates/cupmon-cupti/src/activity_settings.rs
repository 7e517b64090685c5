//! CUPTI's own activity settings that cupmon can change (`CUPMON_CUPTI_*`): its
//! periodic flush, its device buffers' size and how many of them a context may have.
//! Measured on the GPU to find settings that keep CUPTI delivering at high rates.

use std::ffi::c_void;

use crate::cupti::Cupti;
use crate::error::CuptiError;

/// `CUpti_ActivityAttribute` values (`size_t` values).
const ATTR_DEVICE_BUFFER_SIZE: u32 = 0;
const ATTR_DEVICE_BUFFER_POOL_LIMIT: u32 = 2;

impl Cupti {
    /// `cuptiActivityFlushPeriod(ms)`: CUPTI flushes its buffers by itself this often
    /// (0 turns it off).
    pub fn set_flush_period(&self, ms: u32) -> Result<(), CuptiError> {
        let Some(function) = self.raw().activity_flush_period else {
            return Err(self.missing("cuptiActivityFlushPeriod", Some(ms.to_string())));
        };
        // SAFETY: a plain value.
        let status = unsafe { function(ms) };
        self.check(status, "cuptiActivityFlushPeriod", Some(ms.to_string()))
    }

    /// `cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE)`: bytes of
    /// each device buffer CUPTI fills on the GPU.
    pub fn set_device_buffer_size(&self, bytes: u64) -> Result<(), CuptiError> {
        self.set_size_attribute(
            ATTR_DEVICE_BUFFER_SIZE,
            "CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE",
            bytes,
        )
    }

    /// `cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT)`: device
    /// buffers a context may have.
    pub fn set_device_buffer_pool_limit(&self, buffers: u64) -> Result<(), CuptiError> {
        self.set_size_attribute(
            ATTR_DEVICE_BUFFER_POOL_LIMIT,
            "CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT",
            buffers,
        )
    }

    fn set_size_attribute(&self, attr: u32, name: &str, value: u64) -> Result<(), CuptiError> {
        let argument = Some(format!("{name}, {value}"));
        let Some(function) = self.raw().activity_set_attribute else {
            return Err(self.missing("cuptiActivitySetAttribute", argument));
        };
        let mut value = usize::try_from(value).unwrap_or(usize::MAX);
        let mut size = size_of::<usize>();
        // SAFETY: CUPTI reads a size_t of `size` bytes at `value`; both pointers are
        // valid for the call.
        let status =
            unsafe { function(attr, &mut size, (&mut value as *mut usize).cast::<c_void>()) };
        self.check(status, "cuptiActivitySetAttribute", argument)
    }
}
