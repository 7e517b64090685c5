//! A fleet as a `cupmon run` output directory: one dump per rank
//! (`rank<R>-<pid>/`), each with its meta (rank, distributedInfo, hostname),
//! kernel names and raw buffers, as cupmon's monitor writes them.

use std::path::Path;

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

/// Write every rank's dump under `run`; returns the records written.
pub fn write_run(run: &Path, fleet: &Fleet) -> std::io::Result<u64> {
    let mut records = 0;
    for rank in 0..fleet.ranks {
        records +=
            write_rank(run, fleet, rank).map_err(|e| std::io::Error::other(e.to_string()))?;
    }
    Ok(records)
}

fn write_rank(run: &Path, fleet: &Fleet, rank: u32) -> Result<u64, cupmon_records::DumpError> {
    let layout = Layout::cupti_13_0();
    let pid = pid_of(rank);
    let dir = run.join(format!("rank{rank}-{pid}"));
    let mut meta = MetaFile::new();
    meta.set("activities", vec![10u32, 1, 2])
        .set("buffer_size", BUFFER as u64)
        .set("cupti_version", 130_001u32)
        .set("meta_version", 2)
        .set("pid", pid)
        .set("raw_buffer_dump", true)
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
    let mut writer = DumpWriter::create(&dir, &meta)?;
    for f in functions(fleet.seed) {
        writer.add_kernel_name(f.ptr, &f.name)?;
    }
    let mut stream = RankStream::new(fleet, rank);
    let mut buffer = RecordWriter::with_capacity(layout, BUFFER);
    let (mut chunks, mut records) = (0u64, 0u64);
    while let Some(chunk) = stream.next_chunk() {
        write_buffer(&mut writer, &mut buffer, &chunk)?;
        chunks += 1;
        records += chunk.len() as u64;
    }
    meta.set("chunks_written", chunks);
    writer.update_meta(&meta)?;
    writer.finish()?;
    Ok(records)
}

/// `records` as one activity buffer of `writer`'s dump, completed 1 ms after its
/// last record ended (as CUPTI hands buffers over a little after).
pub fn write_buffer(
    writer: &mut DumpWriter,
    buffer: &mut RecordWriter,
    records: &[Record],
) -> Result<(), cupmon_records::DumpError> {
    buffer.clear();
    let mut last = 0;
    for r in records {
        buffer.push(r);
        last = last.max(r.span().map_or(0, |s| s.1));
    }
    let completion = BufferCompletion {
        stream_id: 0,
        context: 0,
        cupti_completed_ns: last + 1_000_000,
        unix_completed_ns: last + 1_000_000,
    };
    writer.write_chunk(completion, buffer.as_bytes())?;
    Ok(())
}

/// `planted.json`: the slow rank of each minute, for the tests.
pub fn write_planted(run: &Path, fleet: &Fleet) -> std::io::Result<()> {
    let minutes: Vec<_> = (0..fleet.minutes() + 2)
        .map(|m| json!({"minute_ns": T0 + m * 60_000_000_000, "rank": fleet.planted(m)}))
        .collect();
    let text = json!({"ranks": fleet.ranks, "slow": fleet.slow, "minutes": minutes}).to_string();
    std::fs::write(run.join("planted.json"), text)
}
