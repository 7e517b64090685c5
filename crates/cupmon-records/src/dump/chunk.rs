//! One chunk of `cupti_monitor_raw_buffers.bin`: a 48-byte little-endian header
//! `<8sIIIIQQQ>` (`b"CUPMRBUF"`, version 2, chunk index, CUPTI stream id, valid size,
//! context pointer, CUPTI timestamp at completion, Unix ns at completion) followed by
//! `valid size` bytes: the activity buffer exactly as CUPTI completed it.
//!
//! Version 3 (cupmon's segments, `segment.rs`) is the same header over a *frame*: the
//! buffer's time index and its compact encoding (`frame.rs`); `valid size` is then the
//! frame's length. Version 4 is a *sealed* frame: the time index, a 24-byte seal (the
//! dump's id, the segment number, a checksum: `seal.rs`), then the compact buffer.
//! PyTorch's raw-buffer file only ever holds version 2.

pub const CHUNK_MAGIC: [u8; 8] = *b"CUPMRBUF";
pub const CHUNK_VERSION: u32 = 2;
/// A chunk whose data is a frame (time index + compact buffer).
pub const CHUNK_VERSION_FRAME: u32 = 3;
/// A frame with a seal (what cupmon writes since the seal).
pub const CHUNK_VERSION_SEALED: u32 = 4;

/// A version a reader knows.
pub(crate) fn known_version(version: u32) -> bool {
    version == CHUNK_VERSION || is_frame_version(version)
}

/// Whether a chunk of `found` version belongs in a file of `expected` chunks: the same,
/// or both frames (a segment may hold frames of either, old and sealed).
pub(crate) fn version_fits(expected: u32, found: u32) -> bool {
    found == expected || (is_frame_version(expected) && is_frame_version(found))
}

/// A version whose data is a frame.
pub(crate) fn is_frame_version(version: u32) -> bool {
    version == CHUNK_VERSION_FRAME || version == CHUNK_VERSION_SEALED
}
pub const CHUNK_HEADER_LEN: usize = 48;

/// Where and when CUPTI completed a buffer: the header fields other than the index and
/// size, which the writer fills in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferCompletion {
    /// `streamId` passed to the buffer-completed callback.
    pub stream_id: u32,
    /// `CUcontext` passed to the buffer-completed callback (0 for the global queue).
    pub context: u64,
    /// `cuptiGetTimestamp()` when the buffer completed.
    pub cupti_completed_ns: u64,
    /// Unix-epoch ns when the buffer completed.
    pub unix_completed_ns: u64,
}

/// A chunk header as stored on disk (magic and version are implied).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkHeader {
    pub index: u32,
    /// The data is a frame (version 3 or 4), not the buffer itself (version 2).
    pub frame: bool,
    /// The frame has a seal (version 4).
    pub sealed: bool,
    pub valid_size: u32,
    pub completion: BufferCompletion,
}

impl ChunkHeader {
    /// Where a frame's compact buffer starts in the chunk's data (after its time index
    /// and, when sealed, its seal).
    pub fn frame_body_at(&self) -> usize {
        super::FRAME_INDEX_LEN + if self.sealed { super::SEAL_LEN } else { 0 }
    }

    pub fn to_bytes(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut b = [0u8; CHUNK_HEADER_LEN];
        let c = &self.completion;
        b[0..8].copy_from_slice(&CHUNK_MAGIC);
        let version = match (self.frame, self.sealed) {
            (true, true) => CHUNK_VERSION_SEALED,
            (true, false) => CHUNK_VERSION_FRAME,
            (false, _) => CHUNK_VERSION,
        };
        b[8..12].copy_from_slice(&version.to_le_bytes());
        b[12..16].copy_from_slice(&self.index.to_le_bytes());
        b[16..20].copy_from_slice(&c.stream_id.to_le_bytes());
        b[20..24].copy_from_slice(&self.valid_size.to_le_bytes());
        b[24..32].copy_from_slice(&c.context.to_le_bytes());
        b[32..40].copy_from_slice(&c.cupti_completed_ns.to_le_bytes());
        b[40..48].copy_from_slice(&c.unix_completed_ns.to_le_bytes());
        b
    }

    /// The magic, the version and the header (the caller checks magic and version).
    pub(crate) fn parse(b: &[u8; CHUNK_HEADER_LEN]) -> ([u8; 8], u32, Self) {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&b[..8]);
        let header = Self {
            index: u32_at(12),
            frame: is_frame_version(u32_at(8)),
            sealed: u32_at(8) == CHUNK_VERSION_SEALED,
            valid_size: u32_at(20),
            completion: BufferCompletion {
                stream_id: u32_at(16),
                context: u64_at(24),
                cupti_completed_ns: u64_at(32),
                unix_completed_ns: u64_at(40),
            },
        };
        (magic, u32_at(8), header)
    }
}

/// One chunk read from the file; `data` borrows the reader's reused buffer.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    pub header: ChunkHeader,
    /// Position of the chunk in the file, from 0 (the header's `index` is the writer's
    /// own count, normally equal).
    pub number: u64,
    /// File offset of the chunk's header.
    pub file_offset: u64,
    /// The activity buffer's valid bytes.
    pub data: &'a [u8],
}

impl Chunk<'_> {
    /// File offset of the buffer's first byte (header offset + 48).
    pub fn data_offset(&self) -> u64 {
        self.file_offset + CHUNK_HEADER_LEN as u64
    }
}
