//! NCCL collectives end to end: `cupmon stats` reports each device's share of busy time
//! with an NCCL kernel running, and traces label NCCL kernels with what their names
//! say, on a dump made with known overlaps of NCCL and compute kernels.

use std::path::Path;

use cupmon_records::dump::META_FILE;
use cupmon_records::{
    ActivityKind, BufferCompletion, DumpWriter, KernelRecord, Layout, MetaFile, Record,
    RecordWriter,
};

use super::util::{assert_success, cupmon, fixture, read_json, stdout};

const T0: u64 = 1_795_979_258_000_000_000;
const ALL_REDUCE: &str =
    "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE";
const ALL_GATHER: &str = "_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE";
const GEMM: &str = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn";

/// Device 0, times in µs from T0: GEMM [1, 5) and [8, 10) on stream 7, AllReduce
/// [3, 9) and AllGather [12, 13) on stream 20, in one chunk out of time order.
fn write_dump(dir: &Path, rank: Option<&str>) {
    let mut meta = MetaFile::read(fixture("cuda_workload").join(META_FILE)).unwrap();
    if let Some(r) = rank {
        meta.set("rank", r);
    }
    let mut w = DumpWriter::create(dir, &meta).unwrap();
    for (ptr, name) in [(1, GEMM), (2, ALL_REDUCE), (3, ALL_GATHER)] {
        w.add_kernel_name(ptr, name).unwrap();
    }
    let mut buf = RecordWriter::new(Layout::cupti_13_0());
    for (stream, ptr, start_us, end_us, correlation) in [
        (20, 2, 3, 9, 11),
        (7, 1, 1, 5, 10),
        (7, 1, 8, 10, 12),
        (20, 3, 12, 13, 13),
    ] {
        buf.push(&Record::Kernel(KernelRecord {
            kind: ActivityKind::CONCURRENT_KERNEL,
            device_id: 0,
            stream_id: stream,
            name_ptr: ptr,
            correlation_id: correlation,
            start: T0 + start_us * 1000,
            end: T0 + end_us * 1000,
            ..KernelRecord::default()
        }));
    }
    let completion = BufferCompletion {
        stream_id: 0,
        context: 1,
        cupti_completed_ns: T0 + 20_000,
        unix_completed_ns: T0 + 20_000,
    };
    w.write_chunk(completion, buf.as_bytes()).unwrap();
    w.finish().unwrap();
}

#[test]
fn stats_reports_the_share_of_busy_time_waiting_in_collectives() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("rank3-4242");
    write_dump(&dump, Some("3"));
    let out = cupmon(tmp.path(), &["stats", "rank3-4242"]);
    assert_success(&out);
    let text = stdout(&out);
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("collectives:"))
        .take(7)
        .collect();
    assert_eq!(
        section,
        [
            "collectives:     2 NCCL kernels, rank 3",
            "  waiting in collectives: time with an NCCL kernel running / time with any kernel \
             running, per device (unions of kernel intervals: NCCL beside compute counts once)",
            "  device 0:  70.0% (0.007 of 0.010 ms busy); NCCL alone, no other kernel: 40.0% \
             (0.004 ms)",
            "  top collectives by NCCL kernel time (sum of durations, all devices):",
            "    total ms  launches  collective",
            "       0.006         1  AllReduce bf16",
            "       0.001         1  AllGather",
        ],
        "{text}"
    );
}

#[test]
fn stats_of_a_dump_without_nccl_kernels_says_so_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = cupmon(
        tmp.path(),
        &["stats", &fixture("cuda_workload").display().to_string()],
    );
    assert_success(&out);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("NCCL")).collect();
    assert_eq!(lines, ["collectives:     no NCCL kernels"], "{text}");
}

#[test]
fn traces_label_nccl_kernels_with_what_their_names_say_about_the_launch() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(&tmp.path().join("d"), None);
    for (args, labelled) in [
        (vec!["decode", "d", "--format", "chrome", "-o", "t.json"], true),
        (
            vec!["decode", "d", "--format", "chrome", "--exact", "-o", "t.json"],
            false,
        ),
    ] {
        assert_success(&cupmon(tmp.path(), &args));
        let trace = read_json(&tmp.path().join("t.json"));
        let kernels: Vec<&serde_json::Value> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "kernel")
            .collect();
        assert_eq!(kernels.len(), 4);
        for k in kernels {
            let name = k["name"].as_str().unwrap();
            let args = &k["args"];
            let keys = ["collective", "reduce_op", "dtype", "algorithm", "protocol"];
            let got: Vec<Option<&str>> = keys.iter().map(|key| args[key].as_str()).collect();
            let want: [Option<&str>; 5] = match name {
                // Kineto's name, demangled, kept as it is.
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                    if labelled =>
                {
                    [Some("AllReduce"), None, Some("bf16"), None, None]
                }
                "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)" if labelled => {
                    [Some("AllGather"), None, None, None, None]
                }
                _ => [None; 5],
            };
            assert_eq!(got, want, "{name} {args} exact={}", !labelled);
        }
    }
}
