//! A slice of a dump with many annotations (20,000, as a long recording has) names the
//! annotations its records name, read through the log's index, and its window and
//! Chrome trace are byte for byte those of the same dump without the index (where the
//! whole log is read at open and filtered, as cupmon did before the index); so are the
//! whole dump's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use cupmon_records::dump::{BufferCompletion, FrameIndex, USER_ANNOTATIONS_INDEX_FILE};
use cupmon_records::{
    walk_slice, ActivityKind, ApiRecord, Dump, DumpWriter, ExternalCorrelationKind,
    ExternalCorrelationRecord, KernelRecord, Layout, MetaFile, Record, RecordWriter, Reorder,
    TimeRange,
};
use cupmon_trace::{decode_slice_to_window, DumpExport};

const T0: u64 = 1_796_135_520_000_000_000;
const MS: u64 = 1_000_000;
const STEPS: u64 = 40;
/// Annotations in the log; step s runs under the one of id `500 + s * 500`.
const ANNOTATIONS: u64 = 20_000;

fn step_id(step: u64) -> u64 {
    500 + step * 500
}

/// 40 steps of 100 ms, 20 launches each under the step's annotation, one buffer of API
/// records and one of kernels per step.
fn write_dump(dir: &Path) {
    let layout = Layout::cupti_13_0();
    let mut meta = MetaFile::new();
    meta.set("cupti_version", 130_000)
        .set("buffer_size", 1 << 20)
        .set("session_open", false)
        .set("dropped_records", 0)
        .set("chunks_written", STEPS * 2);
    let mut w = DumpWriter::create(dir, &meta).unwrap();
    w.add_kernel_name(0x1000, "_Z6kernelv").unwrap();
    for id in 500..500 + ANNOTATIONS {
        w.add_user_annotation(id, &format!("annotation {id}"))
            .unwrap();
    }
    let mut correlation = 0u32;
    for step in 0..STEPS {
        let t = T0 + step * 100 * MS;
        let (mut api, mut gpu) = (Vec::new(), Vec::new());
        for i in 0..20u64 {
            correlation += 1;
            let start = t + i * 4 * MS;
            api.push(Record::ExternalCorrelation(ExternalCorrelationRecord {
                kind: ActivityKind::EXTERNAL_CORRELATION,
                external_kind: ExternalCorrelationKind::CUSTOM1.0,
                external_id: step_id(step),
                correlation_id: correlation,
            }));
            api.push(Record::Api(ApiRecord {
                kind: ActivityKind::RUNTIME,
                cbid: 211,
                start,
                end: start + 5_000,
                process_id: 4242,
                thread_id: 4243,
                correlation_id: correlation,
                return_value: 0,
            }));
            gpu.push(Record::Kernel(KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                start: start + 100_000,
                end: start + 2 * MS,
                completed: start + 2 * MS,
                device_id: 0,
                context_id: 1,
                stream_id: 7,
                correlation_id: correlation,
                grid_x: 1,
                grid_y: 1,
                grid_z: 1,
                block_x: 32,
                block_y: 1,
                block_z: 1,
                name_ptr: 0x1000,
                ..KernelRecord::default()
            }));
        }
        for (done, records) in [(t + 101 * MS, &gpu), (t + 102 * MS, &api)] {
            let mut rw = RecordWriter::new(layout);
            let mut index = FrameIndex::default();
            for r in records {
                rw.push(r);
                index.add(r);
            }
            let completion = BufferCompletion {
                stream_id: 0,
                context: 1,
                cupti_completed_ns: done,
                unix_completed_ns: done,
            };
            w.write_buffer(completion, &rw.into_bytes(), Some(layout), &index, false)
                .unwrap();
        }
    }
    w.finish().unwrap();
}

/// The slice's window and Chrome trace, as bytes.
fn outputs(dump: &Dump, range: &TimeRange, out: &Path) -> (Vec<u8>, Vec<u8>) {
    let (window, _) = decode_slice_to_window(dump, range, |_| {}).unwrap();
    let export = DumpExport::survey(dump, range, Reorder::default(), false, |_| {}).unwrap();
    export.write(out, Some("t".into()), None, |_| {}).unwrap();
    (
        serde_json::to_vec(&window).unwrap(),
        std::fs::read(out).unwrap(),
    )
}

/// The CUSTOM1 ids the slice's records name.
fn named_ids(dump: &Dump, range: &TimeRange) -> BTreeSet<u64> {
    let mut ids = BTreeSet::new();
    walk_slice(
        dump,
        range,
        |_| {},
        |_, _, r| {
            if let Record::ExternalCorrelation(x) = r {
                ids.insert(x.external_id);
            }
        },
    )
    .unwrap();
    ids
}

#[test]
fn a_slice_keeps_the_annotations_it_names_and_the_trace_it_had_before_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let (indexed, plain) = (tmp.path().join("indexed"), tmp.path().join("plain"));
    write_dump(&indexed);
    write_dump(&plain);
    assert!(indexed.join(USER_ANNOTATIONS_INDEX_FILE).exists());
    std::fs::remove_file(plain.join(USER_ANNOTATIONS_INDEX_FILE)).unwrap();
    let out = tmp.path().join("t.json");
    let steps = |a: u64, b: u64| TimeRange {
        from_ns: Some(T0 + a * 100 * MS + 50 * MS),
        to_ns: Some(T0 + b * 100 * MS + 50 * MS),
    };
    for range in [
        steps(7, 8),
        steps(0, 3),
        steps(38, 45),
        TimeRange::default(),
    ] {
        let a = Dump::open(&indexed).unwrap();
        let b = Dump::open(&plain).unwrap();
        let ids = named_ids(&a, &range);
        let want: BTreeMap<u64, String> = b
            .user_annotations()
            .unwrap()
            .iter()
            .filter(|(id, _)| range.is_all() || ids.contains(id))
            .map(|(&id, name)| (id, name.clone()))
            .collect();
        let (window, _) = decode_slice_to_window(&a, &range, |_| {}).unwrap();
        assert_eq!(window.user_annotations, want, "{range:?}");
        let expected = if range.is_all() {
            ANNOTATIONS
        } else {
            ids.len() as u64
        };
        assert_eq!(want.len() as u64, expected, "{range:?}");
        let (window_a, trace_a) = outputs(&a, &range, &out);
        let (window_b, trace_b) = outputs(&b, &range, &out);
        assert!(window_a == window_b, "{range:?}: windows differ");
        assert!(trace_a == trace_b, "{range:?}: Chrome traces differ");
    }
    // The second half of step 7 and the first of step 8.
    let ids = named_ids(&Dump::open(&indexed).unwrap(), &steps(7, 8));
    assert_eq!(ids, [step_id(7), step_id(8)].into());
}
