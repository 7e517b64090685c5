//! Dump -> Parquet -> rows read back: the counts and sums `cupmon stats` gives, and
//! every field of every kernel, copy and memset equal to its record's.

use std::collections::{BTreeMap, HashMap};

use cupmon_records::{dump_stats, walk_records, ActivityKind, Dump, KernelNames, Record};

use crate::common::*;

#[test]
fn fixture_exports_match_cupmon_stats_exactly() {
    for fixture in FIXTURES {
        let out = tempfile::tempdir().unwrap();
        let dir = fixture_dir(fixture);
        let e = export(&dir, &options(out.path())).unwrap();
        let stats = dump_stats(&dir, usize::MAX, |_| {}).unwrap();
        let by_kind = |k: ActivityKind| stats.report.records_by_kind.get(&k).copied().unwrap_or(0);
        let kernels = rows(out.path(), "kernels");
        // GPU ops CUPTI did not time (start 0) are counted, not rows.
        let untimed = |d: &str| e.untimed_gpu_ops.get(d).copied().unwrap_or(0);
        assert_eq!(
            kernels.len() as u64 + untimed("kernels"),
            by_kind(ActivityKind::CONCURRENT_KERNEL) + by_kind(ActivityKind::KERNEL),
            "{fixture}: kernel rows"
        );
        assert_eq!(rows_written(&e, "kernels"), kernels.len() as u64);
        // Per kernel name: launches, timed launches and total time as `cupmon stats`.
        let mut by_name: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
        for r in &kernels {
            let s = by_name.entry(text(r, "name").unwrap()).or_default();
            s.0 += 1;
            if let Some(d) = int(r, "duration_ns") {
                s.1 += 1;
                s.2 += d as u64;
            }
        }
        // A kernel launched only before collection began has no row.
        let distinct_timed = stats.top_kernels.iter().filter(|k| k.timed > 0).count();
        assert!(
            (distinct_timed..=stats.distinct_kernels).contains(&by_name.len()),
            "{fixture}: distinct kernels"
        );
        if untimed("kernels") == 0 {
            assert_eq!(by_name.len(), stats.distinct_kernels, "{fixture}");
        }
        for k in &stats.top_kernels {
            // Launches without a start are no rows: the timed ones all are.
            let (launches, timed, total) = by_name.get(&k.name).copied().unwrap_or_default();
            assert_eq!(
                (timed, total),
                (k.timed, k.total_ns),
                "{fixture}: {}",
                k.name
            );
            assert!(launches <= k.launches, "{fixture}: {}", k.name);
        }
        let memcpy = rows(out.path(), "memcpy");
        assert_eq!(
            memcpy.len() as u64 + untimed("memcpy"),
            by_kind(ActivityKind::MEMCPY)
        );
        let bytes: i64 = memcpy.iter().map(|r| int(r, "bytes").unwrap()).sum();
        let mut timed_bytes = 0;
        walk_records(
            &Dump::open(&dir).unwrap(),
            |_| {},
            |_, _, r| {
                if let Record::Memcpy(m) = r {
                    timed_bytes += if m.start != 0 { m.bytes } else { 0 };
                }
            },
        )
        .unwrap();
        assert_eq!(bytes as u64, timed_bytes, "{fixture}: memcpy bytes");
        assert_eq!(
            rows(out.path(), "memset").len() as u64 + untimed("memset"),
            by_kind(ActivityKind::MEMSET)
        );
        assert_eq!(
            rows(out.path(), "api").len() as u64,
            by_kind(ActivityKind::RUNTIME) + by_kind(ActivityKind::DRIVER)
        );
        let dumps = rows(out.path(), "dumps");
        assert_eq!(dumps.len(), 1);
        let d = &dumps[0];
        assert_eq!(int(d, "kernels"), Some(kernels.len() as i64));
        assert_eq!(int(d, "records"), Some(stats.report.records as i64));
        // The first start and the last end of the rows written (stats also counts
        // overhead and synchronization records, which are not exported).
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for dataset in ["kernels", "memcpy", "memset", "api"] {
            for r in rows(out.path(), dataset) {
                let start = int(&r, "start_ns").unwrap();
                if start != 0 {
                    first = first.min(start);
                }
                if let Some(d) = int(&r, "duration_ns") {
                    last = last.max(start + d);
                }
            }
        }
        assert_eq!(int(d, "first_ns"), Some(first));
        assert_eq!(int(d, "last_ns"), Some(last));
        assert_eq!(int(d, "cupti_version"), Some(130_001));
        assert_eq!(
            int(d, "dropped_records"),
            None,
            "the fixtures' meta has no count"
        );
        assert!(text(d, "dropped_records_note")
            .unwrap()
            .contains("dropped_records"));
    }
}

/// (start, duration, name, device, context, stream, correlation, grid, block,
/// registers, shared memory, graph, queued, grid id) of a kernel.
type KernelKey = (
    i64,
    Option<i64>,
    String,
    [i64; 4],
    [i64; 6],
    [i64; 3],
    [Option<i64>; 3],
    i64,
);

#[test]
fn every_kernel_row_holds_its_records_fields() {
    for fixture in FIXTURES {
        let out = tempfile::tempdir().unwrap();
        let dir = fixture_dir(fixture);
        export(&dir, &options(out.path())).unwrap();
        let dump = Dump::open(&dir).unwrap();
        let mut names = KernelNames::new(dump.kernel_names());
        let mut want: Vec<KernelKey> = Vec::new();
        walk_records(
            &dump,
            |_| {},
            |_, _, r| {
                // Launches CUPTI did not time (start 0) are not rows.
                if let Record::Kernel(k) = r.clone() {
                    if k.start == 0 {
                        return;
                    }
                    let nz = |v: i64| (v != 0).then_some(v);
                    want.push((
                        k.start as i64,
                        (k.start != 0 && k.end >= k.start).then(|| (k.end - k.start) as i64),
                        names.name(k.name_ptr).0.to_owned(),
                        [
                            k.device_id.into(),
                            k.context_id.into(),
                            k.stream_id.into(),
                            k.correlation_id.into(),
                        ],
                        [
                            k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
                        ]
                        .map(i64::from),
                        [
                            k.registers_per_thread.into(),
                            k.static_shared_memory.into(),
                            k.dynamic_shared_memory.into(),
                        ],
                        [
                            nz(k.graph_id.into()),
                            nz(k.graph_node_id as i64),
                            nz(k.queued as i64),
                        ],
                        k.grid_id,
                    ));
                }
            },
        )
        .unwrap();
        let i = |r: &Row, c: &str| int(r, c).unwrap();
        let mut got: Vec<KernelKey> = rows(out.path(), "kernels")
            .iter()
            .map(|r| {
                (
                    i(r, "start_ns"),
                    int(r, "duration_ns"),
                    text(r, "name").unwrap(),
                    ["device", "context", "stream", "correlation_id"].map(|c| i(r, c)),
                    [
                        "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                    ]
                    .map(|c| i(r, c)),
                    [
                        "registers_per_thread",
                        "static_shared_memory",
                        "dynamic_shared_memory",
                    ]
                    .map(|c| i(r, c)),
                    ["graph_id", "graph_node_id", "queued_ns"].map(|c| int(r, c)),
                    i(r, "grid_id"),
                )
            })
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{fixture}");
    }
}

#[test]
fn copies_name_their_kinds_in_words() {
    let out = tempfile::tempdir().unwrap();
    export(&fixture_dir("cuda_workload"), &options(out.path())).unwrap();
    let memcpy = rows(out.path(), "memcpy");
    let kinds: std::collections::BTreeSet<String> = memcpy
        .iter()
        .map(|r| text(r, "copy_kind").unwrap())
        .collect();
    // The workload copies HtoD (pinned and pageable), DtoD and DtoH.
    for k in ["HtoD", "DtoH", "DtoD"] {
        assert!(kinds.contains(k), "{kinds:?}");
    }
    let src: std::collections::BTreeSet<String> = memcpy
        .iter()
        .map(|r| text(r, "src_kind").unwrap())
        .collect();
    assert!(
        src.contains("pinned") && src.contains("pageable") && src.contains("device"),
        "{src:?}"
    );
}

#[test]
fn external_ids_join_kernels_and_calls_to_torch_ops() {
    let out = tempfile::tempdir().unwrap();
    let dir = fixture_dir("torch_mlp");
    export(&dir, &options(out.path())).unwrap();
    // CUSTOM0 (Kineto's ops) correlation -> external id, from the records.
    let mut want: HashMap<i64, i64> = HashMap::new();
    walk_records(
        &Dump::open(&dir).unwrap(),
        |_| {},
        |_, _, r| {
            if let Record::ExternalCorrelation(x) = r {
                if x.external_kind == 3 && x.correlation_id != 0 {
                    want.insert(x.correlation_id.into(), x.external_id as i64);
                }
            }
        },
    )
    .unwrap();
    assert!(!want.is_empty());
    let mut joined = 0;
    for dataset in ["kernels", "api", "memcpy", "memset"] {
        for r in rows(out.path(), dataset) {
            let c = int(&r, "correlation_id").unwrap();
            assert_eq!(
                int(&r, "external_id"),
                want.get(&c).copied(),
                "{dataset} correlation {c}"
            );
            joined += usize::from(want.contains_key(&c));
        }
    }
    assert!(joined > 100, "{joined} rows with an external id");
}

#[test]
fn kernels_carry_the_user_annotation_they_ran_under() {
    let out = tempfile::tempdir().unwrap();
    export(&fixture_dir("cuda_workload"), &options(out.path())).unwrap();
    let names: std::collections::BTreeSet<String> = rows(out.path(), "kernels")
        .iter()
        .filter_map(|r| text(r, "user_annotation"))
        .collect();
    // The workload pushes CUSTOM1 ids 1000..1002 around its iterations, named in
    // its user_annotations.json.
    assert!(names.contains("iteration 0"), "{names:?}");
}

#[test]
fn nccl_kernels_carry_their_collective_and_others_null() {
    use cupmon_parquet::{RecordExport, RunInfo};
    use cupmon_records::{KernelNameTable, KernelRecord};
    let out = tempfile::tempdir().unwrap();
    let names = [
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE",
        "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
        "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
        // `nccl` in the name, but no NCCL kernel: compute.
        "void my_ncclish_pack_kernel<float>(float*, int)",
        "ampere_sgemm_128x64_nn",
    ];
    let mut table = KernelNameTable::new();
    for (i, n) in names.iter().enumerate() {
        table.insert(0x1000 + 0x40 * i as u64, n.to_string());
    }
    let run = RunInfo {
        job: None,
        host: "h".to_owned(),
        rank: Some(0),
        local_rank: Some(0),
        pid: 1,
    };
    let annotations = BTreeMap::new();
    let mut e = RecordExport::new(
        out.path(),
        &run,
        "0",
        cupmon_parquet::Kinds::default(),
        (None, None),
        &table,
        &annotations,
        Vec::new(),
    );
    for i in 0..names.len() as u64 * 3 {
        let r = KernelRecord {
            kind: ActivityKind::CONCURRENT_KERNEL,
            start: 1_796_000_000_000_000_000 + i * 1000,
            end: 1_796_000_000_000_000_000 + i * 1000 + 500,
            correlation_id: i as u32 + 1,
            name_ptr: 0x1000 + 0x40 * (i % names.len() as u64),
            ..KernelRecord::default()
        };
        e.record(0, &Record::Kernel(r)).unwrap();
    }
    e.finish(None).unwrap();
    let want = [
        Some("AllReduce"),
        Some("SendRecv"),
        Some("AllGather"),
        Some("unknown"),
        None,
        None,
    ];
    let kernels = rows(out.path(), "kernels");
    assert_eq!(kernels.len(), names.len() * 3);
    for r in &kernels {
        // The name as the row shows it (demangled); which one by the correlation id.
        let i = (int(r, "correlation_id").unwrap() as usize - 1) % names.len();
        let name = text(r, "name").unwrap();
        assert_eq!(text(r, "collective").as_deref(), want[i], "{name}");
    }
}
