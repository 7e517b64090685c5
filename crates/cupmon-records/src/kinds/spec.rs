//! What each kind file declares, as data: the structs CUPTI writes per version, the
//! fields cupmon reads, and which of them are timestamps. Layout tests, the decoder's
//! size table and the CUPTI multiplexer's clock conversion all read these.

use crate::ActivityKind;

/// The struct CUPTI writes for a kind from one API version on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructVersion {
    /// First `cuptiGetVersion` API version that writes it.
    pub since_api: u32,
    /// Its name in CUPTI's headers (the newest the headers declare).
    pub name: &'static str,
    pub size: usize,
}

/// One C field of a CUPTI activity struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The Rust field of the record type.
    pub name: &'static str,
    /// The field's name in CUPTI's header (`memoryPoolConfig.address` for nested ones).
    pub c_name: &'static str,
    pub offset: usize,
    pub size: usize,
    /// First API version whose struct holds the field at this offset (0: always; a
    /// later version when the bytes were padding before).
    pub since_api: u32,
}

/// A family of activity kinds sharing one record type.
#[derive(Debug, Clone, Copy)]
pub struct KindSpec {
    /// Short name: the key of `tools/cupti-tables/cupti_layouts.json` (`kernel`, `memcpy`).
    pub key: &'static str,
    /// The CUPTI kinds written with this struct (KERNEL and CONCURRENT_KERNEL, ...).
    pub kinds: &'static [ActivityKind],
    /// Oldest first.
    pub structs: &'static [StructVersion],
    pub fields: &'static [Field],
    /// Byte offsets of the `u64` timestamps (CUPTI's clock) of a record.
    pub timestamps: &'static [usize],
}

impl KindSpec {
    /// The struct API version `api` writes; `None` before this kind existed.
    pub fn struct_for(&self, api: u32) -> Option<&'static StructVersion> {
        self.structs.iter().rev().find(|s| s.since_api <= api)
    }

    /// Bytes of the oldest struct: a record shorter than this cannot be decoded.
    pub fn min_size(&self) -> usize {
        self.structs.first().map_or(0, |s| s.size)
    }

    /// The fields API version `api`'s struct holds.
    pub fn fields_for(&self, api: u32) -> impl Iterator<Item = &'static Field> + '_ {
        let size = self.struct_for(api).map_or(0, |s| s.size);
        self.fields
            .iter()
            .filter(move |f| f.offset + f.size <= size && api >= f.since_api)
    }

    pub fn has_kind(&self, kind: ActivityKind) -> bool {
        self.kinds.contains(&kind)
    }
}

/// Whether API version `api` has a field that exists from `since_api` on (a function
/// rather than `>=` in the macro, which would warn for the many fields that are always
/// there).
#[inline(always)]
pub fn since(api: u32, since_api: u32) -> bool {
    api >= since_api
}
