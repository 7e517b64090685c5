//! The `stacks` dataset and the `stack_id` / `source_line` columns: a dump whose
//! launches have Python stacks exports each kernel's stack and line, the stacks'
//! frames join on `stack_id`; a dump without stacks writes no `stacks` file and NULLs.

use std::path::Path;

use cupmon_records::dump::{BufferCompletion, FrameIndex, StackFrame, StackLine};
use cupmon_records::{ActivityKind, KernelRecord, Layout, Record, RecordWriter};
use parquet::record::Field;

use crate::common::*;

/// (stack_id, frame, file, line, origin, user_frame, truncated) of a `stacks` row.
type FrameRow = (i64, i64, String, i64, Option<String>, bool, bool);

const T0: u64 = 1_796_000_000_000_000_000;

fn frame(id: u32, file: &str, line: i32, origin: Option<&str>) -> StackLine {
    StackLine::Frame {
        frame: id,
        at: StackFrame {
            file: file.into(),
            function: format!("f{id}"),
            line,
            origin: origin.map(Into::into),
        },
    }
}

/// Kernels 1..=30; stack 1 (torch's frame under train.py:42) launched corr % 3 == 1,
/// stack 2 (the backward of model.py:7's forward op: the autograd engine's, tied by
/// torch's sequence number) corr % 3 == 2, a thread without Python frames the rest but
/// 30, which has no note.
fn write_dump(dir: &Path) {
    let layout = Layout::cupti_13_0();
    let mut w = segmented_writer(dir, 1 << 20);
    w.add_kernel_name(0x1000, "k").unwrap();
    let mut rw = RecordWriter::new(layout);
    let mut index = FrameIndex::default();
    for corr in 1..=30u32 {
        let t = T0 + u64::from(corr) * 10_000;
        let r = Record::Kernel(KernelRecord {
            kind: ActivityKind::CONCURRENT_KERNEL,
            start: t,
            end: t + 2_000,
            completed: t + 2_000,
            correlation_id: corr,
            stream_id: 7,
            name_ptr: 0x1000,
            ..KernelRecord::default()
        });
        rw.push(&r);
        index.add(&r);
    }
    let completion = BufferCompletion {
        stream_id: 0,
        context: 0,
        cupti_completed_ns: T0 + 1_000_000,
        unix_completed_ns: T0 + 1_000_000,
    };
    w.write_buffer(completion, rw.as_bytes(), Some(layout), &index, false)
        .unwrap();
    let lines = [
        frame(1, "/site/torch/nn/linear.py", 125, Some("torch")),
        frame(2, "train.py", 42, None),
        frame(3, "model.py", 7, None),
        StackLine::Stack {
            stack: 1,
            frames: vec![1, 2],
            truncated: false,
            backward: false,
        },
        StackLine::Stack {
            stack: 2,
            frames: vec![3],
            truncated: true,
            backward: true,
        },
    ];
    let pairs: Vec<(u32, u32)> = (1..30u32)
        .map(|c| (c, [0, 1, 2][(c % 3) as usize]))
        .collect();
    w.add_python_stacks(&lines, &pairs).unwrap();
    w.finish().unwrap();
}

#[test]
fn kernels_name_their_stack_and_line_and_the_stacks_rows_join_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (dump, out) = (tmp.path().join("dump"), tmp.path().join("out"));
    write_dump(&dump);
    let e = export(&dump, &options(&out)).unwrap();
    assert!(e.report.warnings.is_empty(), "{:?}", e.report.warnings);
    assert_eq!(rows_written(&e, "kernels"), 30);
    for row in rows(&out, "kernels") {
        let corr = int(&row, "correlation_id").unwrap();
        let (stack, line) = (int(&row, "stack_id"), text(&row, "source_line"));
        match (corr, corr % 3) {
            (30, _) => assert_eq!((stack, line), (None, None), "no note"),
            (_, 1) => assert_eq!((stack, line.as_deref()), (Some(1), Some("train.py:42"))),
            (_, 2) => assert_eq!(
                (stack, line.as_deref()),
                (Some(2), Some("backward of model.py:7"))
            ),
            _ => assert_eq!((stack, line), (Some(0), None), "no Python frames"),
        }
    }
    let mut frames: Vec<FrameRow> = rows(&out, "stacks")
        .iter()
        .map(|r| {
            let flag = |c: &str| matches!(r.get(c), Some(Field::Bool(true)));
            (
                int(r, "stack_id").unwrap(),
                int(r, "frame").unwrap(),
                text(r, "file").unwrap(),
                int(r, "line").unwrap(),
                text(r, "origin"),
                flag("user_frame"),
                flag("truncated"),
            )
        })
        .collect();
    frames.sort();
    assert_eq!(
        frames,
        vec![
            (
                1,
                0,
                "/site/torch/nn/linear.py".into(),
                125,
                Some("torch".into()),
                false,
                false
            ),
            (1, 1, "train.py".into(), 42, None, true, false),
            (2, 0, "model.py".into(), 7, None, true, true),
        ]
    );
    assert_eq!(rows_written(&e, "stacks"), 3);
}

#[test]
fn a_dump_without_stacks_writes_no_stacks_file_and_null_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let e = export(&fixture_dir("torch_mlp"), &options(tmp.path())).unwrap();
    assert!(rows_written(&e, "kernels") > 0);
    assert!(!tmp.path().join("stacks").exists());
    for row in rows(tmp.path(), "kernels").iter().take(50) {
        assert_eq!(
            (int(row, "stack_id"), text(row, "source_line")),
            (None, None)
        );
    }
}
