//! CUPTI's enum values as the words the Chrome trace shows them with (PyTorch's
//! merge: `copy kind`, `src kind`, `dst kind`, `memory kind`; the tables are
//! cupmon-records'); a value those tables do not know is written as its number.

use std::borrow::Cow;

use cupmon_records::{copy_kind_word, memory_kind_word};

/// `CUpti_ActivityMemcpyKind` (a `u8` in the record; `u16` as
/// [`crate::encode::Strings::word`] passes it).
pub fn copy_kind(kind: u16) -> Cow<'static, str> {
    copy_kind_word(kind.into()).map_or_else(|| Cow::Owned(kind.to_string()), Cow::Borrowed)
}

/// `CUpti_ActivityMemoryKind`.
pub fn memory_kind(kind: u16) -> Cow<'static, str> {
    memory_kind_word(kind.into()).map_or_else(|| Cow::Owned(kind.to_string()), Cow::Borrowed)
}

/// [`crate::encode::Strings::word`]'s tables.
pub const COPY_KIND: u8 = 0;
pub const MEMORY_KIND: u8 = 1;
