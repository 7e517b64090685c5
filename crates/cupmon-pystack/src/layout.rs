//! Where CPython keeps what the frame walker reads, per version. Offsets were printed
//! with `offsetof` against each version's own headers (`Py_BUILD_CORE`, the internal
//! `pycore_frame.h`): 3.11.7, 3.12.1 and 3.13.0 here; the test
//! `the_offsets_are_the_headers` (crate tests, `tests/offsets.rs`) prints them again
//! where a compiler and the headers are found, and compares.

/// The byte offsets of one CPython minor version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// `(major, minor)`.
    pub version: (u8, u8),
    /// `PyThreadState` → the current frame: through `cframe` (3.11, 3.12) or directly
    /// (3.13: `current_frame`).
    pub tstate_frame: FramePath,
    /// `_PyInterpreterFrame.f_code` (`f_executable` in 3.13: then it may be a non-code
    /// object, which the walker recognises by its type).
    pub frame_code: usize,
    /// `frame_code` may hold something other than a code object (3.13), so the walker
    /// reads each one's type. 3.11 and 3.12 declare it a `PyCodeObject *`: their walks
    /// skip that read, a cache line of each code object that the names do not share
    /// (the type is at offset 8, the names at 112 and 128).
    pub frame_code_may_not_be_code: bool,
    pub frame_previous: usize,
    /// `prev_instr` (3.11, 3.12) or `instr_ptr` (3.13); either way Python's own line of
    /// the frame is that of `(ptr - co_code_adaptive)` bytes.
    pub frame_instr: usize,
    /// `owner` (a `char`).
    pub frame_owner: usize,
    /// `FRAME_OWNED_BY_CSTACK`: an entry shim, not a Python frame (3.12+).
    pub owner_cstack: Option<u8>,
    pub code_filename: usize,
    pub code_qualname: usize,
    pub code_firstlineno: usize,
    pub code_adaptive: usize,
    /// `sizeof(PyASCIIObject)` and `sizeof(PyCompactUnicodeObject)`: where compact
    /// strings' characters begin.
    pub ascii_size: usize,
    pub compact_size: usize,
}

/// How a thread state leads to its innermost frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramePath {
    /// `*(tstate + cframe)` is a `_PyCFrame`; its `current_frame` is at this offset.
    CFrame { cframe: usize, current_frame: usize },
    /// `*(tstate + offset)` is the frame.
    Direct(usize),
}

/// Common to all three: `PyObject.ob_type`, `PyASCIIObject.length` and `.state`.
pub const OBJECT_TYPE: usize = 8;
pub const UNICODE_LENGTH: usize = 16;
pub const UNICODE_STATE: usize = 32;

pub const PY311: Layout = Layout {
    version: (3, 11),
    tstate_frame: FramePath::CFrame {
        cframe: 56,
        current_frame: 8,
    },
    frame_code: 32,
    frame_code_may_not_be_code: false,
    frame_previous: 48,
    frame_instr: 56,
    frame_owner: 69,
    owner_cstack: None,
    code_filename: 112,
    code_qualname: 128,
    code_firstlineno: 72,
    code_adaptive: 184,
    ascii_size: 48,
    compact_size: 72,
};

pub const PY312: Layout = Layout {
    version: (3, 12),
    tstate_frame: FramePath::CFrame {
        cframe: 56,
        current_frame: 0,
    },
    frame_code: 0,
    frame_code_may_not_be_code: false,
    frame_previous: 8,
    frame_instr: 56,
    frame_owner: 70,
    owner_cstack: Some(3),
    code_filename: 112,
    code_qualname: 128,
    code_firstlineno: 68,
    code_adaptive: 192,
    ascii_size: 40,
    compact_size: 56,
};

pub const PY313: Layout = Layout {
    version: (3, 13),
    tstate_frame: FramePath::Direct(72),
    frame_code: 0,
    frame_code_may_not_be_code: true,
    frame_previous: 8,
    frame_instr: 56,
    frame_owner: 70,
    owner_cstack: Some(3),
    code_filename: 112,
    code_qualname: 128,
    code_firstlineno: 68,
    code_adaptive: 200,
    ascii_size: 40,
    compact_size: 56,
};

/// The layout of CPython `major.minor`, if the walker knows it. Only release builds
/// (a debug build's `Py_DEBUG` objects have two more pointers in their header) and the
/// default build (not free-threaded) have these layouts; `runtime.rs` refuses others.
pub fn for_version(major: u8, minor: u8) -> Option<Layout> {
    [PY311, PY312, PY313]
        .into_iter()
        .find(|l| l.version == (major, minor))
}
