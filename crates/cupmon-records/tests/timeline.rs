//! `Timeline::from_dump`: busy time, kernels and copy bytes per bin on a dump with
//! known busy periods (exact values), and on many overlapping kernels against a brute
//! force union per bin.

use std::time::Duration;

use cupmon_records::{
    ActivityKind, Dump, DumpWriter, Layout, MemcpyRecord, Record, TimeRange, Timeline,
    TimelineError,
};

use crate::time_span::{completion, encode, index_of, kernel, meta, policy};

const T0: u64 = 1_796_135_520_000_000_000;
const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

fn copy(start: u64, end: u64, bytes: u64) -> Record {
    Record::Memcpy(MemcpyRecord {
        kind: ActivityKind::MEMCPY,
        copy_kind: 1,
        bytes,
        start,
        end,
        stream_id: 9,
        ..MemcpyRecord::default()
    })
}

/// A segmented dump of `buffers` (one frame each).
fn dump_of(buffers: &[Vec<Record>]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = DumpWriter::create_segmented(tmp.path(), &meta(), policy(4 << 10)).unwrap();
    for (i, b) in buffers.iter().enumerate() {
        let data = encode(b);
        w.write_buffer(
            completion(T0 + i as u64, T0 + i as u64),
            &data,
            Some(Layout::cupti_13_0()),
            &index_of(&data),
            false,
        )
        .unwrap();
    }
    w.finish().unwrap();
    tmp
}

/// The dump of the CLI's timeline test too: device 0 busy 0.5 s in bin 0, 0.6 s in bin
/// 2 (two overlapping kernels), 0.1 s in bins 3 and 4 (one kernel across the edge);
/// device 1 busy from 0.25 s to 1.25 s, and a kernel without end at 4.5 s; a 1 MB copy
/// over 0.5-1.5 s and a 7-byte one without duration at 3 s.
pub fn known_busy_records() -> Vec<Vec<Record>> {
    vec![
        vec![
            kernel(T0, T0 + S / 2, 0, 1),
            kernel(T0 + S / 4, T0 + 5 * S / 4, 1, 2),
            copy(T0 + S / 2, T0 + 3 * S / 2, 1_000_000),
        ],
        vec![
            kernel(T0 + 2 * S, T0 + 2300 * MS, 0, 3),
            kernel(T0 + 2200 * MS, T0 + 2600 * MS, 0, 4),
            copy(T0 + 3 * S, T0 + 3 * S, 7),
        ],
        vec![
            kernel(T0 + 3900 * MS, T0 + 4100 * MS, 0, 5),
            kernel(T0 + 4500 * MS, 0, 1, 6),
        ],
    ]
}

#[test]
fn known_busy_periods_give_exact_bins() {
    let tmp = dump_of(&known_busy_records());
    let dump = Dump::open(tmp.path()).unwrap();
    let range = TimeRange::new(Some(T0), Some(T0 + 5 * S));
    let (t, report) =
        Timeline::from_dump(&dump, &range, Some(Duration::from_secs(1)), |_| {}).unwrap();
    assert_eq!(report.records, 8);
    assert_eq!((t.from_ns, t.to_ns, t.bin_ns), (T0, T0 + 5 * S, S));
    assert_eq!(t.devices, vec![0, 1]);
    let busy: Vec<Vec<u64>> = t.bins.iter().map(|b| b.busy_ns.clone()).collect();
    assert_eq!(
        busy,
        vec![
            vec![500 * MS, 750 * MS],
            vec![0, 250 * MS],
            vec![600 * MS, 0],
            vec![100 * MS, 0],
            vec![100 * MS, 0],
        ]
    );
    let kernels: Vec<u64> = t.bins.iter().map(|b| b.kernels).collect();
    assert_eq!(kernels, vec![2, 0, 2, 1, 1]);
    let bytes: Vec<u64> = t.bins.iter().map(|b| b.copy_bytes).collect();
    assert_eq!(bytes, vec![500_000, 500_000, 0, 7, 0]);
    assert_eq!(t.bins[0].busy_fraction(), 0.625);
    assert_eq!(t.bins[2].device_busy_fraction(0), 0.6);
    assert_eq!(t.bins[0].kernels_per_s(), 2.0);
    assert_eq!(t.busy_over_ns, 0);
    assert_eq!(t.dropped_records, Some(0));

    // Bins of 2 s over the same range: the last one is 1 s long.
    let (t, _) = Timeline::from_dump(&dump, &range, Some(Duration::from_secs(2)), |_| {}).unwrap();
    let busy: Vec<Vec<u64>> = t.bins.iter().map(|b| b.busy_ns.clone()).collect();
    assert_eq!(
        busy,
        vec![vec![500 * MS, S], vec![700 * MS, 0], vec![100 * MS, 0]]
    );
    assert_eq!(t.bins[2].len_ns, S);
    assert_eq!(t.bins[2].busy_fraction(), 0.05);
}

#[test]
fn open_ends_are_the_dumps_first_and_last_record_and_a_slice_is_clipped() {
    let tmp = dump_of(&known_busy_records());
    let dump = Dump::open(tmp.path()).unwrap();
    let (t, _) = Timeline::from_dump(&dump, &TimeRange::default(), None, |_| {}).unwrap();
    // The span is [T0, T0 + 4.5 s] (the kernel without end counts at its start).
    assert_eq!((t.from_ns, t.to_ns), (T0, T0 + 4500 * MS + 1));
    assert_eq!(t.bin_ns, 100 * MS, "about 60 bins: 45 of 100 ms");
    assert_eq!(t.bins.len(), 46);
    assert_eq!(t.bins.iter().map(|b| b.kernels).sum::<u64>(), 6);
    assert_eq!(t.bins.iter().map(|b| b.copy_bytes).sum::<u64>(), 1_000_007);
    // A slice from 0.3 s to 2.25 s: only the parts inside count.
    let range = TimeRange::new(Some(T0 + 300 * MS), Some(T0 + 2250 * MS));
    let (t, _) =
        Timeline::from_dump(&dump, &range, Some(Duration::from_millis(1000)), |_| {}).unwrap();
    let busy: Vec<Vec<u64>> = t.bins.iter().map(|b| b.busy_ns.clone()).collect();
    assert_eq!(busy, vec![vec![200 * MS, 950 * MS], vec![250 * MS, 0]]);
    assert_eq!(t.bins[1].len_ns, 950 * MS);
    // Kernels that started before the slice are not counted in it; the copy's share is.
    let kernels: Vec<u64> = t.bins.iter().map(|b| b.kernels).collect();
    assert_eq!(kernels, vec![0, 2]);
    let bytes: Vec<u64> = t.bins.iter().map(|b| b.copy_bytes).collect();
    assert_eq!(bytes, vec![800_000, 200_000]);
}

#[test]
fn a_bin_far_too_small_is_an_error() {
    let tmp = dump_of(&known_busy_records());
    let dump = Dump::open(tmp.path()).unwrap();
    let err = Timeline::from_dump(
        &dump,
        &TimeRange::default(),
        Some(Duration::from_nanos(10)),
        |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, TimelineError::TooManyBins { .. }), "{err}");
    assert!(err.to_string().contains("use a longer bin"));
}

#[test]
fn many_overlapping_kernels_match_a_brute_force_union_per_bin() {
    // 150,000 kernels on 2 devices, 4 streams each: overlapping, slightly out of order
    // within a buffer, enough stretches to make the busy union settle many times.
    let mut x: u64 = 99;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut all = Vec::new();
    let mut buffers = Vec::new();
    for b in 0..150u64 {
        let mut buf = Vec::new();
        for i in 0..1000u64 {
            let n = b * 1000 + i;
            let device = (n % 2) as u32;
            let start = T0 + n * 20_000 + next() % 15_000;
            let end = start + 1_000 + next() % 30_000;
            buf.push(kernel(start, end, device, n as u32));
            all.push((device, start, end));
        }
        buf.swap(10, 500);
        buffers.push(buf);
    }
    let tmp = dump_of(&buffers);
    let dump = Dump::open(tmp.path()).unwrap();
    let range = TimeRange::new(Some(T0), Some(T0 + 3 * S + 7));
    let bin = Duration::from_micros(20_011);
    let (t, _) = Timeline::from_dump(&dump, &range, Some(bin), |_| {}).unwrap();
    assert_eq!(t.busy_over_ns, 0);
    let bin_ns = bin.as_nanos() as u64;
    for (d, device) in [0u32, 1].into_iter().enumerate() {
        let mut iv: Vec<(u64, u64)> = all
            .iter()
            .filter(|k| k.0 == device)
            .map(|k| (k.1, k.2))
            .collect();
        iv.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (s, e) in iv {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        let mut want = vec![0u64; t.bins.len()];
        for (s, e) in merged {
            let (s, e) = (s.max(range.from_ns.unwrap()), e.min(range.to_ns.unwrap()));
            for (i, w) in want.iter_mut().enumerate() {
                let (bs, be) = (
                    T0 + i as u64 * bin_ns,
                    (T0 + (i as u64 + 1) * bin_ns).min(T0 + 3 * S + 7),
                );
                if s < be && e > bs {
                    *w += e.min(be) - s.max(bs);
                }
            }
        }
        let got: Vec<u64> = t.bins.iter().map(|b| b.busy_ns[d]).collect();
        assert_eq!(got, want, "device {device}");
    }
    assert_eq!(t.bins.iter().map(|b| b.kernels).sum::<u64>(), 150_000);
}
