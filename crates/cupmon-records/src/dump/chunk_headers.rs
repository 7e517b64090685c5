//! The chunk headers of a raw-buffer file without its data: the clock samples a dump's
//! chunks carry (their completion times on CUPTI's and the Unix clock).

use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::chunk::{ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC};
use super::chunk_resync::read_full;
use super::{ChunkReader, RAW_BUFFERS_FILE};

/// The headers of the complete chunks of the raw-buffer file at `path`, read by seeking
/// past each chunk's data (fast on any size of file). Damage is stepped over as
/// [`ChunkReader`] does, quietly: the decode itself reports it.
pub fn chunk_headers(path: &Path) -> io::Result<Vec<ChunkHeader>> {
    let (file, len) = cupmon_files::open_regular(path).map_err(cupmon_files::FileError::into_io)?;
    let mut file = BufReader::with_capacity(64 << 10, file);
    let mut headers = Vec::new();
    let mut pos = 0u64;
    let mut next_index = 0u32;
    let mut raw = [0u8; CHUNK_HEADER_LEN];
    while pos < len {
        let got = read_full(&mut |b| file.read(b), &mut raw)?;
        let (magic, version, header) = ChunkHeader::parse(&raw);
        let end = pos + CHUNK_HEADER_LEN as u64 + u64::from(header.valid_size);
        if got < CHUNK_HEADER_LEN
            || magic != CHUNK_MAGIC
            || !super::chunk::known_version(version)
            || end > len
        {
            // Damage: let the reader find what survives after it.
            file.seek(SeekFrom::Start(pos))?;
            let mut rest = ChunkReader::new(file, RAW_BUFFERS_FILE, Some(len - pos))
                .with_first_index(next_index);
            while let Ok(Some(chunk)) = rest.next_chunk() {
                headers.push(chunk.header);
            }
            break;
        }
        file.seek(SeekFrom::Start(end))?;
        pos = end;
        next_index = header.index.wrapping_add(1);
        headers.push(header);
    }
    Ok(headers)
}
