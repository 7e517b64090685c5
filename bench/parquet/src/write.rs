//! A fleet as a `cupmon run` output directory: one dump per rank
//! (`rank<R>-<pid>/`), each with its meta (rank, distributedInfo, hostname),
//! kernel names and its buffers, as cupmon's monitor writes them: PyTorch's single
//! raw-buffer file (`--raw`) or cupmon's compressed segments (the monitor's default).

use std::path::Path;

use std::time::Duration;

use cupmon_records::dump::{FrameIndex, SegmentPolicy};
use cupmon_records::{BufferCompletion, DumpWriter, Layout, MetaFile, Record, RecordWriter};
use serde_json::json;

use crate::fleet::{functions, Fleet, RankStream, BUFFER, T0};

/// The pid of a rank's process.
pub fn pid_of(rank: u32) -> u32 {
    10_000 + rank
}

/// The host a rank ran on (`node00`, `node01`, ...).
pub fn host_of(fleet: &Fleet, rank: u32) -> String {
    format!("node{:02}", rank / fleet.ranks_per_host)
}

/// How a rank's buffers are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpLayout {
    /// PyTorch's raw-buffer file: 216 bytes per kernel record.
    Raw,
    /// cupmon's segments (frames of the compact encoding, zstd, per-segment digests),
    /// rolled at the monitor's default 64 MiB, no budget reached.
    Segments,
}

/// Write every rank's dump under `run`; returns the records written.
pub fn write_run(run: &Path, fleet: &Fleet, layout: DumpLayout) -> std::io::Result<u64> {
    let mut records = 0;
    for rank in 0..fleet.ranks {
        records += write_rank(run, fleet, rank, layout)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
    }
    Ok(records)
}

fn write_rank(
    run: &Path,
    fleet: &Fleet,
    rank: u32,
    dump_layout: DumpLayout,
) -> Result<u64, cupmon_records::DumpError> {
    // The layout of the meta's CUPTI version (segments' frames record it and are
    // read only with the same one).
    const CUPTI_VERSION: u32 = 130_001;
    let layout = Layout::for_api_version(CUPTI_VERSION).expect("a known CUPTI version");
    let pid = pid_of(rank);
    let dir = run.join(format!("rank{rank}-{pid}"));
    let mut meta = MetaFile::new();
    meta.set("activities", vec![10u32, 1, 2])
        .set("buffer_size", BUFFER as u64)
        .set("cupti_version", CUPTI_VERSION)
        .set("meta_version", 2)
        .set("pid", pid)
        .set("raw_buffer_dump", true)
        .set(
            "layout",
            match dump_layout {
                DumpLayout::Raw => "raw",
                DumpLayout::Segments => "segments",
            },
        )
        .set("session_start_cupti_ns", T0 - 1_000_000_000)
        .set("session_start_monotonic_ns", 5_000_000_000u64)
        .set("session_start_unix_ns", T0 - 1_000_000_000)
        .set("timestamp_mode", "cupti_default")
        .set("cupmon_version", "bench-parquet")
        .set("hostname", host_of(fleet, rank))
        .set("rank", rank.to_string())
        .set(
            "distributedInfo",
            json!({
                "backend": "nccl",
                "rank": rank,
                "local_rank": rank % fleet.ranks_per_host,
                "world_size": fleet.ranks,
                "local_world_size": fleet.ranks_per_host,
            }),
        )
        .set("command", json!(["python", "train.py", "--synthetic"]))
        .set("session_open", false)
        .set("dropped_records", 0);
    let mut writer = match dump_layout {
        DumpLayout::Raw => DumpWriter::create(&dir, &meta)?,
        DumpLayout::Segments => {
            let policy = SegmentPolicy {
                segment_size: 64 << 20,
                segment_period: Duration::from_secs(3600),
                keep: u64::MAX / 4,
                keep_for: None,
            };
            DumpWriter::create_segmented(&dir, &meta, policy)?
        }
    };
    for f in functions(fleet.seed) {
        writer.add_kernel_name(f.ptr, &f.name)?;
    }
    let mut stream = RankStream::new(fleet, rank);
    let mut buffer = RecordWriter::with_capacity(layout, BUFFER);
    let (mut chunks, mut records) = (0u64, 0u64);
    while let Some(chunk) = stream.next_chunk() {
        let frame = (dump_layout == DumpLayout::Segments).then_some(layout);
        write_buffer(&mut writer, &mut buffer, &chunk, frame)?;
        chunks += 1;
        records += chunk.len() as u64;
    }
    meta.set("chunks_written", chunks);
    writer.update_meta(&meta)?;
    writer.finish()?;
    Ok(records)
}

/// `records` as one activity buffer of `writer`'s dump, completed 1 ms after its
/// last record ended (as CUPTI hands buffers over a little after): a raw chunk, or
/// with `frame` (the dump's layout) a frame of the active segment with its time
/// index and digest, as the monitor's dump writer adds a completed buffer.
pub fn write_buffer(
    writer: &mut DumpWriter,
    buffer: &mut RecordWriter,
    records: &[Record],
    frame: Option<Layout>,
) -> Result<(), cupmon_records::DumpError> {
    buffer.clear();
    let mut index = FrameIndex::default();
    let mut last = 0;
    for r in records {
        buffer.push(r);
        last = last.max(r.span().map_or(0, |s| s.1));
        if frame.is_some() {
            index.add(r);
            writer.digest_record(r);
        }
    }
    let completion = completed_after(last);
    match frame {
        None => {
            writer.write_chunk(completion, buffer.as_bytes())?;
        }
        Some(layout) => {
            writer.write_buffer(completion, buffer.as_bytes(), Some(layout), &index, false)?;
        }
    }
    Ok(())
}

/// A buffer handed over 1 ms after its last record ended.
fn completed_after(last: u64) -> BufferCompletion {
    BufferCompletion {
        stream_id: 0,
        context: 0,
        cupti_completed_ns: last + 1_000_000,
        unix_completed_ns: last + 1_000_000,
    }
}

/// `planted.json`: the slow rank of each minute, for the tests.
pub fn write_planted(run: &Path, fleet: &Fleet) -> std::io::Result<()> {
    let minutes: Vec<_> = (0..fleet.minutes() + 2)
        .map(|m| json!({"minute_ns": T0 + m * 60_000_000_000, "rank": fleet.planted(m)}))
        .collect();
    let text = json!({"ranks": fleet.ranks, "slow": fleet.slow, "minutes": minutes}).to_string();
    std::fs::write(run.join("planted.json"), text)
}
