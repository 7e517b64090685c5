//! The words for CUPTI's copy and memory kinds (`CUpti_ActivityMemcpyKind`,
//! `CUpti_ActivityMemoryKind`) as the traces and tables show them. One table each; the
//! callers choose what an unknown value becomes (a number, `Unknown`, ...), as each
//! format they follow does.

/// `HtoD`, `DtoH`, ... as Kineto and PyTorch's merge write them.
pub fn copy_kind_word(kind: u64) -> Option<&'static str> {
    Some(match kind {
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
        _ => return None,
    })
}

/// `Pageable`, `Pinned`, `Device`, ... as Kineto names memory in an op's name
/// (`Memcpy HtoD (Pinned -> Device)`).
pub fn memory_kind_title(kind: u64) -> Option<&'static str> {
    Some(match kind {
        0 => "Unknown",
        1 => "Pageable",
        2 => "Pinned",
        3 => "Device",
        4 => "Array",
        5 => "Managed",
        6 => "Device Static",
        7 => "Managed Static",
        _ => return None,
    })
}

/// `pageable`, `pinned`, `device`, ... as PyTorch's merge writes the `src kind`,
/// `dst kind` and `memory kind` args.
pub fn memory_kind_word(kind: u64) -> Option<&'static str> {
    Some(match kind {
        0 => "unknown",
        1 => "pageable",
        2 => "pinned",
        3 => "device",
        4 => "array",
        5 => "managed",
        6 => "device_static",
        7 => "managed_static",
        _ => return None,
    })
}
