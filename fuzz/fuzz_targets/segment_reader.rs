//! A segment file from arbitrary bytes, read as the dump reader reads one: the chunk
//! reader in frame mode (a damaged start is a warning there, not an error), each
//! frame's time index and seal (its checksum checked), then its compact buffer
//! decompressed and its records walked. Never a panic; every frame returned fits the
//! bytes given.
#![no_main]

use cupmon_records::dump::compact::Frame;
use cupmon_records::dump::{ChunkDecompressor, FrameIndex, FrameSeal};
use cupmon_records::{ChunkReader, Layout, RecordIter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, file)) = data.split_first() else {
        return;
    };
    let len = (mode & 1 == 0).then_some(file.len() as u64);
    let layout = Layout::for_api_version(130_001).unwrap();
    let mut reader = ChunkReader::new(file, "seg-000001.cupmr", len)
        .with_frames()
        .with_max_chunk_size(Some(1 << 21));
    let mut decompressor = ChunkDecompressor::new(layout);
    let mut out = Vec::new();
    let mut chunks = 0u64;
    loop {
        let chunk = match reader.next_chunk() {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        };
        chunks += 1;
        assert!(chunk.data.len() <= file.len());
        let header = chunk.header;
        let body_at = header.frame_body_at();
        let Some(index) = FrameIndex::parse(chunk.data) else {
            continue;
        };
        if chunk.data.len() < body_at {
            continue;
        }
        let _ = (index.records, index.native.get(), index.foreign.get());
        if header.sealed {
            let seal = FrameSeal::parse(chunk.data).expect("long enough for its seal");
            if !seal.matches(&header.to_bytes(), chunk.data) && mode & 2 == 0 {
                // As the reader does: a frame that fails its checksum is not decoded.
                continue;
            }
        }
        match decompressor.frame(&chunk.data[body_at..], 1 << 20, &mut out) {
            Ok(Frame::Bytes(bytes)) => {
                for record in RecordIter::new(bytes, layout) {
                    if record.is_err() {
                        break;
                    }
                }
            }
            Ok(Frame::Records(records)) => {
                let _ = records.each(|_, r| {
                    let _ = r.interval();
                });
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    assert_eq!(reader.chunks_read(), chunks);
    for w in reader.warnings() {
        let _ = w.to_string();
    }
});
