//! The kernel dataset's dictionary (and delta) columns, written by cupmon's own
//! pages, read back with the parquet crate's reader and compared, every value of
//! every row, with the records given: more than 65536 distinct names in one chunk
//! (17-bit indices), columns of one value, NULL and non-NULL mixed (collectives,
//! graph ids, external ids and annotations from external correlation records),
//! rows across page boundaries (106,496 rows a page) and out of time order.

use std::collections::BTreeMap;

use cupmon_parquet::{Kinds, RecordExport, RunInfo};
use cupmon_records::{
    ActivityKind, ExternalCorrelationKind, ExternalCorrelationRecord, KernelNameTable,
    KernelRecord, Record,
};
use parquet::record::Field;

use crate::common::*;

const ROWS: u32 = 250_000;
const NAMES: u32 = 70_000;
const T0: u64 = 1_796_090_400_000_000_000;

fn kernel(i: u32) -> KernelRecord {
    // Completion order: every 97th kernel started long before its neighbours.
    let start = T0 + u64::from(i) * 4_000 - if i % 97 == 50 { 300_000 } else { 0 };
    KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end: start + 1_000 + u64::from(i % 13) * 10,
        completed: start + 2_000,
        device_id: 3,
        context_id: 1,
        stream_id: if i % 97 == 50 { 13 } else { 7 },
        grid_x: 1 << (i % 11),
        grid_y: 1,
        grid_z: 1,
        block_x: 128,
        block_y: 1,
        block_z: 1,
        registers_per_thread: 32 + (i % 3) as u16,
        static_shared_memory: 0,
        dynamic_shared_memory: (i % 70_001) as i32,
        correlation_id: 1_000 + i * 2,
        grid_id: i64::from(i) + 1,
        name_ptr: 0x7fbb_0000_0000 + u64::from(i % NAMES) * 0x40,
        graph_id: if i.is_multiple_of(5) { 0 } else { 11 },
        graph_node_id: 0,
        queued: 0,
        ..KernelRecord::default()
    }
}

fn name(k: u32) -> String {
    if k.is_multiple_of(1000) {
        format!("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<{k}ul>)")
    } else {
        format!("void kernel_{k}<float>(float*)")
    }
}

#[test]
fn dictionary_columns_read_back_as_the_records_gave_them() {
    let out = tempfile::tempdir().unwrap();
    let mut names = KernelNameTable::new();
    for k in 0..NAMES {
        names.insert(0x7fbb_0000_0000 + u64::from(k) * 0x40, name(k));
    }
    let annotations: BTreeMap<u64, String> = [(7u64, "step 7".to_owned())].into();
    let run = RunInfo {
        job: None,
        host: "h".to_owned(),
        rank: Some(2),
        local_rank: None,
        pid: 99,
    };
    let mut export = RecordExport::new(
        out.path(),
        &run,
        "0",
        Kinds::default(),
        (None, None),
        &names,
        &annotations,
        Vec::new(),
    );
    for i in 0..ROWS {
        export.record(0, &Record::Kernel(kernel(i))).unwrap();
        // An op id on every third launch, an annotation on every tenth.
        let correlate = |external_kind: ExternalCorrelationKind, external_id: u64| {
            Record::ExternalCorrelation(ExternalCorrelationRecord {
                kind: ActivityKind::EXTERNAL_CORRELATION,
                external_kind: external_kind.0,
                external_id,
                correlation_id: 1_000 + i * 2,
            })
        };
        if i % 3 == 0 {
            let r = correlate(ExternalCorrelationKind::CUSTOM0, u64::from(i) + 5);
            export.record(0, &r).unwrap();
        }
        if i % 10 == 0 {
            export
                .record(0, &correlate(ExternalCorrelationKind::CUSTOM1, 7))
                .unwrap();
        }
    }
    let totals = export.finish(None).unwrap();
    assert_eq!(totals.rows("kernels"), u64::from(ROWS));

    // The rows in time order, ties in the order they came.
    let mut want: Vec<KernelRecord> = (0..ROWS).map(kernel).collect();
    want.sort_by_key(|k| k.start);
    let got = rows(out.path(), "kernels");
    assert_eq!(got.len(), want.len());
    for (row, k) in got.iter().zip(&want) {
        let i = ((k.correlation_id - 1_000) / 2) as u64;
        let kname = (k.name_ptr - 0x7fbb_0000_0000) as u32 / 0x40;
        let at = format!("row of kernel {i}");
        assert_eq!(text(row, "job"), None, "{at}");
        assert_eq!(text(row, "host").as_deref(), Some("h"), "{at}");
        assert_eq!(int(row, "rank"), Some(2), "{at}");
        assert_eq!(int(row, "local_rank"), None, "{at}");
        assert_eq!(int(row, "pid"), Some(99), "{at}");
        assert_eq!(int(row, "start_ns"), Some(k.start as i64), "{at}");
        assert_eq!(
            int(row, "duration_ns"),
            Some((k.end - k.start) as i64),
            "{at}"
        );
        assert_eq!(text(row, "name"), Some(name(kname)), "{at}");
        assert_eq!(int(row, "device"), Some(3), "{at}");
        assert_eq!(int(row, "context"), Some(1), "{at}");
        assert_eq!(int(row, "stream"), Some(i64::from(k.stream_id)), "{at}");
        assert_eq!(
            int(row, "correlation_id"),
            Some(i64::from(k.correlation_id)),
            "{at}"
        );
        assert_eq!(
            int(row, "external_id"),
            i.is_multiple_of(3).then_some(i as i64 + 5),
            "{at}"
        );
        let note = i.is_multiple_of(10).then(|| "step 7".to_owned());
        assert_eq!(text(row, "user_annotation"), note, "{at}");
        for (col, v) in [
            ("grid_x", k.grid_x),
            ("grid_y", k.grid_y),
            ("grid_z", k.grid_z),
            ("block_x", k.block_x),
            ("block_y", k.block_y),
            ("block_z", k.block_z),
            ("registers_per_thread", i32::from(k.registers_per_thread)),
            ("static_shared_memory", k.static_shared_memory),
            ("dynamic_shared_memory", k.dynamic_shared_memory),
        ] {
            assert_eq!(row.get(col), Some(&Field::Int(v)), "{at}: {col}");
        }
        let graph = (k.graph_id != 0).then_some(i64::from(k.graph_id));
        assert_eq!(int(row, "graph_id"), graph, "{at}");
        assert_eq!(int(row, "graph_node_id"), None, "{at}");
        assert_eq!(int(row, "queued_ns"), None, "{at}");
        assert_eq!(int(row, "grid_id"), Some(k.grid_id), "{at}");
        let collective = kname.is_multiple_of(1000).then(|| "AllReduce".to_owned());
        assert_eq!(text(row, "collective"), collective, "{at}");
    }
}
