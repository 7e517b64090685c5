//! The raw-buffer chunk reader (with and without a known file length and a maximum
//! chunk size), then the record decoder over every chunk it returns: any bytes give
//! chunks, a truncation warning or an error, never a panic.
#![no_main]

use cupmon_records::{ChunkReader, Layout, RecordIter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, file)) = data.split_first() else { return };
    let len = (mode & 1 == 0).then_some(file.len() as u64);
    let max = (mode & 2 == 0).then_some(1 << 20);
    let layout = Layout::for_api_version(130_001).unwrap();
    let mut reader = ChunkReader::new(file, "fuzz.bin", len).with_max_chunk_size(max);
    let mut chunks = 0u64;
    loop {
        match reader.next_chunk() {
            Ok(Some(chunk)) => {
                assert!(chunk.data.len() <= file.len());
                chunks += 1;
                for record in RecordIter::new(chunk.data, layout) {
                    if record.is_err() {
                        break;
                    }
                }
            }
            Ok(None) => break,
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        }
    }
    assert_eq!(reader.chunks_read(), chunks);
    if let Some(t) = reader.truncation() {
        assert!(t.available < t.needed);
    }
});
