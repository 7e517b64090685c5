//! `bench-parquet edges DUMP_DIR`: one dump whose export has the dictionary
//! columns' edge cases in one file, for tests/python/test_parquet.py to read back
//! through DuckDB against the dump's records: more kernel rows than a data page
//! holds (106,496), more distinct kernel names and dynamic shared memory sizes than
//! 16-bit indices reach, columns of one value, NULL among values (graph ids, NCCL
//! collectives), and kernels that finish after later-started ones.

use std::path::Path;

use cupmon_records::{
    ActivityKind, DumpWriter, KernelRecord, Layout, MetaFile, Record, RecordWriter,
};

use crate::fleet::{BUFFER, T0};

const PID: u32 = 4242;

/// Kernel `i` of `kernels`, named by one of `names` name pointers.
fn kernel(i: u32, names: u32) -> KernelRecord {
    let late = i % 97 == 50;
    // A second into the hour: the late starts stay in it (one file).
    let start = T0 + 1_000_000_000 + u64::from(i) * 4_000 - if late { 300_000 } else { 0 };
    KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end: start + 1_000 + u64::from(i % 13) * 10,
        completed: start + 2_000,
        device_id: 3,
        context_id: 1,
        stream_id: if late { 13 } else { 7 },
        grid_x: 1 << (i % 11),
        grid_y: 1,
        grid_z: 1,
        block_x: 128,
        block_y: 1,
        block_z: 1,
        registers_per_thread: 32 + (i % 3) as u16,
        dynamic_shared_memory: (i % 70_001) as i32,
        correlation_id: 1_000 + i * 2,
        grid_id: i64::from(i) + 1,
        name_ptr: name_ptr(i % names),
        graph_id: if i.is_multiple_of(5) { 0 } else { 11 },
        ..KernelRecord::default()
    }
}

fn name_ptr(k: u32) -> u64 {
    0x7fbb_0000_0000 + u64::from(k) * 0x40
}

/// Every thousandth name an NCCL kernel's (its collective column AllReduce).
fn name(k: u32) -> String {
    if k.is_multiple_of(1000) {
        format!("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<{k}ul>)")
    } else {
        format!("void kernel_{k}<float>(float*)")
    }
}

/// Write the dump; returns the kernel records written.
pub fn write(dir: &Path, kernels: u32, names: u32) -> Result<u64, cupmon_records::DumpError> {
    let mut meta = MetaFile::new();
    meta.set("activities", vec![10u32])
        .set("buffer_size", BUFFER as u64)
        .set("cupti_version", 130_001u32)
        .set("meta_version", 2)
        .set("pid", PID)
        .set("raw_buffer_dump", true)
        .set("session_start_unix_ns", T0 - 1_000_000_000)
        .set("timestamp_mode", "cupti_default")
        .set("cupmon_version", "bench-parquet")
        .set("hostname", "edges")
        .set("session_open", false)
        .set("dropped_records", 0);
    let mut writer = DumpWriter::create(dir, &meta)?;
    for k in 0..names {
        writer.add_kernel_name(name_ptr(k), &name(k))?;
    }
    let mut buffer = RecordWriter::with_capacity(Layout::cupti_13_0(), BUFFER);
    let (mut chunks, per_chunk) = (0u64, BUFFER / 216);
    let mut i = 0;
    let mut records = Vec::with_capacity(per_chunk);
    while i < kernels {
        records.clear();
        let n = per_chunk.min((kernels - i) as usize) as u32;
        records.extend((i..i + n).map(|k| Record::Kernel(kernel(k, names))));
        i += n;
        crate::write::write_buffer(&mut writer, &mut buffer, &records, None)?;
        chunks += 1;
    }
    meta.set("chunks_written", chunks);
    writer.update_meta(&meta)?;
    writer.finish()?;
    Ok(u64::from(kernels))
}
