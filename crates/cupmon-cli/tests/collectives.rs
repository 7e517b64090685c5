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
        (
            vec!["decode", "d", "--format", "chrome", "-o", "t.json"],
            true,
        ),
        (
            vec![
                "decode", "d", "--format", "chrome", "--exact", "-o", "t.json",
            ],
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

#[test]
fn merged_into_a_torch_trace_nccl_kernels_get_kinetos_collective_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let base: u64 = 1_795_979_000_000_000_000;
    // A torch.profiler CPU trace with ProcessGroupNCCL's record_param_comms op (args as
    // torch 2.x writes them) around the launch, External id 77.
    let cpu = serde_json::json!({
        "schemaVersion": 1,
        "baseTimeNanoseconds": base,
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 10, "tid": 10,
             "ts": 1000.0, "dur": 50.0,
             "args": {"External id": 77, "Record function id": 0, "Ev Idx": 5, "Rank": 0,
                      "Collective name": "allreduce", "dtype": "Float",
                      "In msg nelems": 1048576, "Out msg nelems": 1048576,
                      "In split size": "[]", "Out split size": "[]",
                      "Global rank start": 0, "Global rank stride": 1, "Group size": 2,
                      "Process Group Name": "0", "Process Group Description": "default_pg",
                      "Process Group Ranks": "[0, 1]"}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10,
             "ts": 2000.0, "dur": 50.0, "args": {"External id": 78}}
        ]
    });
    std::fs::write(tmp.path().join("cpu.json"), cpu.to_string()).unwrap();
    let kernel = |name: &str, correlation: u64, start_us: u64| {
        serde_json::json!({
            "kind": "kernel", "device_id": 0, "context_id": 1, "stream_id": 20,
            "correlation_id": correlation, "graph_node_id": 0, "graph_id": 0,
            "start_ns": base + start_us * 1000, "end_ns": base + start_us * 1000 + 800,
            "annotation": null, "name": name,
        })
    };
    let nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    let window = serde_json::json!({
        "events": [
            {"kind": "external_correlation", "external_kind": 3, "external_id": 77,
             "correlation_id": 5, "name": "external_correlation"},
            {"kind": "external_correlation", "external_kind": 3, "external_id": 78,
             "correlation_id": 6, "name": "external_correlation"},
            kernel(nccl, 5, 1010),
            kernel(GEMM, 6, 2010),
        ],
        "user_annotations": {}, "thread_resource_map": {},
    });
    std::fs::write(tmp.path().join("w.json"), window.to_string()).unwrap();
    for exact in [false, true] {
        let mut args = vec![
            "merge", "--cpu", "cpu.json", "--window", "w.json", "-o", "m.json",
        ];
        if exact {
            args.push("--exact");
        }
        assert_success(&cupmon(tmp.path(), &args));
        let trace = read_json(&tmp.path().join("m.json"));
        let events = trace["traceEvents"].as_array().unwrap();
        let find = |name: &str| {
            events
                .iter()
                .find(|e| e["cat"] == "kernel" && e["name"] == name)
                .unwrap_or_else(|| panic!("no {name}"))
        };
        let nccl_args = find(nccl)["args"].as_object().unwrap();
        if exact {
            // PyTorch's merge, exactly: none of this.
            assert!(!nccl_args.contains_key("collective"));
            assert!(!nccl_args.contains_key("Collective name"));
            continue;
        }
        // Kineto's order, then cupmon's, then PyTorch's merge's own args (the parsed
        // JSON sorts keys: look at the text).
        let text = std::fs::read_to_string(tmp.path().join("m.json")).unwrap();
        let event = &text[text.find(nccl).unwrap()..];
        let event = &event[..event.find('}').unwrap()];
        let at = |key: &str| {
            event
                .find(&format!("\"{key}\":"))
                .unwrap_or_else(|| panic!("no {key} in {event}"))
        };
        let order = [
            "External id",
            "Collective name",
            "In msg nelems",
            "Out msg nelems",
            "Group size",
            "dtype",
            "In split size",
            "Out split size",
            "Process Group Name",
            "Process Group Description",
            "Process Group Ranks",
            "in_msg_bytes",
            "out_msg_bytes",
            "collective",
            "correlation",
        ];
        assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{event}");
        assert!(!nccl_args.contains_key("algorithm") && !nccl_args.contains_key("protocol"));
        assert_eq!(nccl_args["External id"], 77);
        assert_eq!(nccl_args["Collective name"], "allreduce");
        assert_eq!(nccl_args["dtype"], "Float");
        assert_eq!(nccl_args["Process Group Name"], "0");
        assert_eq!(nccl_args["Process Group Ranks"], "[0, 1]");
        assert_eq!(nccl_args["in_msg_bytes"], 4_194_304);
        assert_eq!(nccl_args["collective"], "AllReduce");
        // The compute kernel under another op gets none of it.
        let gemm_args = find(GEMM)["args"].as_object().unwrap();
        assert_eq!(gemm_args["External id"], 78);
        assert!(
            !gemm_args.contains_key("Collective name") && !gemm_args.contains_key("collective")
        );
    }
}

#[test]
fn combine_prints_each_ranks_share_of_busy_time_in_collectives() {
    let tmp = tempfile::tempdir().unwrap();
    let nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    // Times in µs from the base. Rank 0: GEMM [0, 40), AllReduce [30, 50): busy 50,
    // NCCL 20 (40%), alone 10 (20%). Rank 1: AllReduce [10, 50) alone: 100%.
    let trace = |rank: i64, kernels: &[(&str, f64, f64)]| {
        let events: Vec<serde_json::Value> = kernels
            .iter()
            .map(|&(name, ts, dur)| {
                serde_json::json!({"ph": "X", "cat": "kernel", "name": name, "pid": 0,
                                   "tid": 7, "ts": ts, "dur": dur, "args": {}})
            })
            .collect();
        serde_json::json!({
            "schemaVersion": 1, "baseTimeNanoseconds": 1_795_979_000_000_000_000u64,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "traceEvents": events,
        })
    };
    let a = trace(0, &[(GEMM, 0.0, 40.0), (nccl, 30.0, 20.0)]);
    let b = trace(1, &[(nccl, 10.0, 40.0)]);
    std::fs::write(tmp.path().join("r0.json"), a.to_string()).unwrap();
    std::fs::write(tmp.path().join("r1.json"), b.to_string()).unwrap();
    let out = cupmon(
        tmp.path(),
        &["combine", "r0.json", "r1.json", "-o", "job.json"],
    );
    assert_success(&out);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "rank 0: waiting in collectives device 0 40.0% (20.0% with no other kernel)",
            "rank 1: waiting in collectives device 0 100.0% (100.0% with no other kernel)",
            "  (waiting in collectives: time with an NCCL kernel running / time with any kernel \
             running, per device (unions of kernel intervals: NCCL beside compute counts once))",
        ],
        "{text}"
    );
}
