//! A segmented dump's launch → stack pairs live a file per segment and go with it:
//! the dump keeps its budget however many launches it sees, and the records left (a
//! slice of the past included) still find their stacks.

use std::path::Path;
use std::time::Duration;

use cupmon_records::dump::{
    launch_stacks_file_name, parse_launch_stacks_file_name, BufferCompletion, FrameIndex,
    LaunchStack, SegmentPolicy, StackFrame, StackLine, StackTable, LAUNCH_STACKS_FILE,
    SEGMENTS_DIR,
};
use cupmon_records::{
    walk_slice, ActivityKind, Dump, DumpWriter, KernelRecord, Layout, MetaFile, Record,
    RecordWriter, TimeRange,
};

use crate::common::decode_all;

const T0: u64 = 1_764_567_890_000_000_000;

fn meta() -> MetaFile {
    let mut m = MetaFile::new();
    m.set("cupti_version", 130_000)
        .set("buffer_size", 1 << 20)
        .set("session_open", false)
        .set("dropped_records", 0)
        .set("chunks_written", 0);
    m
}

/// Kernel `i`: every 10 us, correlation id `i + 1`, launched by stack `stack_of(i + 1)`.
fn kernel(i: u64) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start: T0 + i * 10_000,
        end: T0 + i * 10_000 + 4_000,
        completed: T0 + i * 10_000 + 4_000,
        correlation_id: i as u32 + 1,
        stream_id: 7,
        grid_x: 128,
        block_x: 256,
        name_ptr: 0x1000,
        ..KernelRecord::default()
    })
}

fn stack_of(corr: u32) -> u32 {
    corr % 3 + 1
}

fn table_lines() -> Vec<StackLine> {
    let mut lines = vec![StackLine::Frame {
        frame: 1,
        at: StackFrame {
            file: "train.py".into(),
            function: "step".into(),
            line: 42,
            origin: None,
        },
    }];
    lines.extend((1..=3).map(|stack| StackLine::Stack {
        stack,
        frames: vec![1],
        truncated: false,
        backward: false,
    }));
    lines
}

fn dir_bytes(dir: &Path) -> u64 {
    [dir.to_path_buf(), dir.join(SEGMENTS_DIR)]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten())
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

fn stack_files(dir: &Path) -> Vec<u32> {
    let mut v: Vec<u32> = std::fs::read_dir(dir.join(SEGMENTS_DIR))
        .unwrap()
        .flatten()
        .filter_map(|e| parse_launch_stacks_file_name(e.file_name().to_str()?))
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn a_dump_whose_segments_are_retired_keeps_its_stacks_file_within_the_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let keep = 256 << 10;
    let policy = SegmentPolicy {
        segment_size: 32 << 10,
        segment_period: Duration::from_secs(3600),
        keep,
        keep_for: None,
    };
    let layout = Layout::cupti_13_0();
    let mut w = DumpWriter::create_segmented(tmp.path(), &meta(), policy).unwrap();
    let (buffers, per) = (200u64, 2000u64);
    let mut most = 0;
    for b in 0..buffers {
        let mut rw = RecordWriter::new(layout);
        let mut index = FrameIndex::default();
        for i in b * per..(b + 1) * per {
            rw.push(&kernel(i));
            index.add(&kernel(i));
        }
        let completion = BufferCompletion {
            stream_id: 0,
            context: 0,
            cupti_completed_ns: T0 + b * 20_000_000,
            unix_completed_ns: T0 + b * 20_000_000,
        };
        w.write_buffer(completion, rw.as_bytes(), Some(layout), &index, false)
            .unwrap();
        // Compressed, these kernels take far fewer bytes than their 8-byte pairs:
        // the pairs alone are 3.2 MB, twelve times the budget.
        let pairs: Vec<(u32, u32)> = (b * per..(b + 1) * per)
            .map(|i| (i as u32 + 1, stack_of(i as u32 + 1)))
            .collect();
        let lines = if b == 0 { table_lines() } else { Vec::new() };
        w.add_python_stacks(&lines, &pairs).unwrap();
        w.flush().unwrap();
        most = most.max(dir_bytes(tmp.path()));
    }
    let retired = w.finish().unwrap();
    assert!(retired.segments > 0, "{retired:?}");
    // Over by at most a segment and one buffer's pairs (appended after the frame that
    // filled the segment; the next frame closes it).
    assert!(
        most <= keep + policy.roll_size() + per * 8,
        "the dump reached {most} bytes, budget {keep}"
    );
    assert!(!tmp.path().join(LAUNCH_STACKS_FILE).exists());
    // A stack file per live segment, none for a retired one.
    let live: Vec<u32> = cupmon_records::dump::list_segments(tmp.path())
        .unwrap()
        .unwrap()
        .live
        .iter()
        .filter_map(|f| f.summary.as_ref().map(|s| s.segment))
        .collect();
    assert_eq!(stack_files(tmp.path()), live);
    assert!(!tmp
        .path()
        .join(SEGMENTS_DIR)
        .join(launch_stacks_file_name(1))
        .exists());

    // Every record kept finds its stack; the retired ones' pairs are gone.
    let table = StackTable::read(tmp.path());
    assert!(table.warnings().is_empty(), "{:?}", table.warnings());
    let (records, _) = decode_all(tmp.path()).unwrap();
    assert!(!records.is_empty());
    for r in &records {
        let corr = r.correlation_id();
        assert_eq!(table.launch(corr), Some(LaunchStack::Stack(stack_of(corr))));
    }
    assert_eq!(table.launch(1), None, "retired with its segment");

    // A slice of the past (the oldest kept second's first half) finds them too.
    let dump = Dump::open(tmp.path()).unwrap();
    let first = records.iter().filter_map(Record::time).min().unwrap();
    let range = TimeRange::new(Some(first), Some(first + 5_000_000));
    let mut sliced = 0;
    walk_slice(
        &dump,
        &range,
        |_| {},
        |_, _, r| {
            sliced += 1;
            let corr = r.correlation_id();
            assert_eq!(
                dump.python_stacks().launch(corr),
                Some(LaunchStack::Stack(stack_of(corr)))
            );
        },
    )
    .unwrap();
    assert!(sliced > 0);
}

#[test]
fn a_raw_dumps_budget_counts_its_launch_stacks() {
    let tmp = tempfile::tempdir().unwrap();
    let layout = Layout::cupti_13_0();
    let per = 1000u64;
    // Ten buffers' chunks exactly: without their pairs counted, all ten would fit.
    let mut one = RecordWriter::new(layout);
    for i in 0..per {
        one.push(&kernel(i));
    }
    let budget = 10 * (cupmon_records::dump::CHUNK_HEADER_LEN + one.as_bytes().len()) as u64;
    let mut w = DumpWriter::create_raw(tmp.path(), &meta(), Some(budget)).unwrap();
    let mut refused = false;
    for b in 0..100u64 {
        let mut rw = RecordWriter::new(layout);
        for i in b * per..(b + 1) * per {
            rw.push(&kernel(i));
        }
        let completion = BufferCompletion {
            stream_id: 0,
            context: 0,
            cupti_completed_ns: T0 + b,
            unix_completed_ns: T0 + b,
        };
        let written = w
            .write_buffer(
                completion,
                rw.as_bytes(),
                None,
                &FrameIndex::default(),
                false,
            )
            .unwrap();
        if matches!(written, cupmon_records::dump::BufferWritten::OverBudget) {
            refused = true;
        }
        let pairs: Vec<(u32, u32)> = (b * per..(b + 1) * per)
            .map(|i| (i as u32 + 1, 1))
            .collect();
        let lines = if b == 0 { table_lines() } else { Vec::new() };
        w.add_python_stacks(&lines, &pairs).unwrap();
    }
    w.finish().unwrap();
    assert!(refused, "the budget was reached");
    let size = |name: &str| std::fs::metadata(tmp.path().join(name)).unwrap().len();
    let held = size(cupmon_records::dump::RAW_BUFFERS_FILE) + size(LAUNCH_STACKS_FILE);
    // Over by at most the last buffer's pairs (written after its buffer).
    assert!(
        held <= budget + per * 8,
        "{held} bytes held, budget {budget}"
    );
    assert!(size(LAUNCH_STACKS_FILE) > 0);
}
