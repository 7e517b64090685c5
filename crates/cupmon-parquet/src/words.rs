//! CUPTI's enum values as the words the Chrome trace shows them with (PyTorch's
//! merge: `copy kind`, `src kind`, `dst kind`, `memory kind`); a value these tables do
//! not know is written as its number.

use std::borrow::Cow;

/// `CUpti_ActivityMemcpyKind`.
pub fn copy_kind(kind: u8) -> Cow<'static, str> {
    Cow::Borrowed(match kind {
        1 => "HtoD",
        2 => "DtoH",
        3 => "HtoA",
        4 => "AtoH",
        5 => "AtoA",
        6 => "AtoD",
        7 => "DtoA",
        8 => "DtoD",
        9 => "HtoH",
        10 => "PtoP",
        _ => return Cow::Owned(kind.to_string()),
    })
}

/// `CUpti_ActivityMemoryKind`.
pub fn memory_kind(kind: u16) -> Cow<'static, str> {
    Cow::Borrowed(match kind {
        0 => "unknown",
        1 => "pageable",
        2 => "pinned",
        3 => "device",
        4 => "array",
        5 => "managed",
        6 => "device_static",
        7 => "managed_static",
        _ => return Cow::Owned(kind.to_string()),
    })
}
