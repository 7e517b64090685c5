//! Traces built through the public API, decoded against Perfetto's protos,
//! compared by meaning: tracks, slices as trace processor pairs them, args,
//! flows, counters, the clock and interning.

use crate::common::{count_bytes, decode, get, has, model, msg, paired_slices, u64_of, A};
use cupmon_pftrace::{
    Arg, ArgValue, CounterUnit, Instant, PftraceError, PftraceWriter, Slice, WriterOptions,
};

const T0: u64 = 1_764_000_000_000_000_000; // 2025-11, ns since the epoch

fn opts() -> WriterOptions {
    WriterOptions {
        realtime_now_ns: Some(T0),
        ..WriterOptions::default()
    }
}

/// A small GPU trace shaped like cupmon's merge: a CPU process with one
/// thread launching two kernels, a GPU with one stream, flows between them.
fn gpu_trace() -> Vec<u8> {
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    w.process(4242, "python", &["CPU"], 4242).unwrap();
    let thread = w.thread(4242, 4243, "thread 4243", 4243).unwrap();
    w.process(0, "python", &["GPU 0"], 5_000_000).unwrap();
    let stream = w.thread(0, 7, "stream 7 ", 7).unwrap();
    for (i, corr) in [11u64, 12].into_iter().enumerate() {
        let t = T0 + 1_000 * i as u64;
        let cpu_args = [
            Arg::new("cbid", ArgValue::Int(211)),
            Arg::new("correlation", ArgValue::Int(corr as i64)),
        ];
        w.slice(
            thread,
            &Slice {
                category: "cuda_runtime",
                args: &cpu_args,
                flow_ids: &[corr],
                ..Slice::new(t, 300, "cudaLaunchKernel")
            },
        )
        .unwrap();
        let dims = [ArgValue::Int(128), ArgValue::Int(1), ArgValue::Int(1)];
        let annotation = [
            Arg::new("op", ArgValue::Str("aten::mm")),
            Arg::new("dims", ArgValue::Array(&dims)),
            Arg::new("ok", ArgValue::Bool(true)),
            Arg::new("ratio", ArgValue::Double(0.5)),
            Arg::new("bytes", ArgValue::Uint(u64::MAX)),
        ];
        let gpu_args = [
            Arg::new("device", ArgValue::Int(0)),
            Arg::new("stream", ArgValue::Int(7)),
            Arg::new("correlation", ArgValue::Int(corr as i64)),
            Arg::new("annotation", ArgValue::Dict(&annotation)),
            Arg::new("copy kind", ArgValue::Str("HtoD")),
            Arg::new("offset", ArgValue::Int(-3)),
        ];
        w.slice(
            stream,
            &Slice {
                category: "kernel",
                args: &gpu_args,
                terminating_flow_ids: &[corr],
                ..Slice::new(t + 500, 400, "ampere_sgemm_128x64_nn")
            },
        )
        .unwrap();
    }
    let global = w.track(None, "Global", 0).unwrap();
    w.instant(global, &Instant::new(T0 + 10_000, "window end"))
        .unwrap();
    w.instant(
        thread,
        &Instant {
            category: "marker",
            ..Instant::new(T0 + 20, "step")
        },
    )
    .unwrap();
    let mem = w
        .counter_track(Some(stream), "GPU 0 memory", CounterUnit::SizeBytes)
        .unwrap();
    w.counter(mem, T0, 0i64).unwrap();
    w.counter(mem, T0 + 600, 1i64 << 40).unwrap();
    let util = w
        .counter_track(None, "occupancy", CounterUnit::Named("%"))
        .unwrap();
    w.counter(util, T0 + 700, 37.5f64).unwrap();
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.bytes, bytes.len() as u64);
    assert_eq!(
        (summary.slices, summary.instants, summary.counter_values),
        (4, 2, 3)
    );
    assert_eq!(summary.overlap_slices, 0);
    bytes
}

#[test]
fn slices_come_back_with_names_times_args_and_flows() {
    let bytes = gpu_trace();
    let m = model(&decode(&bytes));
    let slices = paired_slices(&m);
    assert_eq!(slices.len(), 4);
    let by_name = |n: &str| slices.iter().filter(|s| s.name == n).collect::<Vec<_>>();
    let launches = by_name("cudaLaunchKernel");
    let kernels = by_name("ampere_sgemm_128x64_nn");
    assert_eq!((launches.len(), kernels.len()), (2, 2));
    assert_eq!(
        (launches[1].start, launches[1].end),
        (T0 + 1_000, T0 + 1_300)
    );
    assert_eq!((kernels[0].start, kernels[0].end), (T0 + 500, T0 + 900));
    assert_eq!(launches[0].category.as_deref(), Some("cuda_runtime"));
    assert_eq!(kernels[0].category.as_deref(), Some("kernel"));
    assert_eq!(launches[0].flows, vec![11]);
    assert!(launches[0].terminating_flows.is_empty());
    assert_eq!(kernels[1].terminating_flows, vec![12]);
    assert_eq!(
        launches[0].args,
        vec![
            ("cbid".into(), A::Int(211)),
            ("correlation".into(), A::Int(11))
        ]
    );
    let annotation = A::Dict(vec![
        ("op".into(), A::Str("aten::mm".into())),
        (
            "dims".into(),
            A::Array(vec![A::Int(128), A::Int(1), A::Int(1)]),
        ),
        ("ok".into(), A::Bool(true)),
        ("ratio".into(), A::Double(0.5)),
        ("bytes".into(), A::Uint(u64::MAX)),
    ]);
    assert_eq!(
        kernels[0].args,
        vec![
            ("device".into(), A::Int(0)),
            ("stream".into(), A::Int(7)),
            ("correlation".into(), A::Int(11)),
            ("annotation".into(), annotation),
            ("copy kind".into(), A::Str("HtoD".into())),
            ("offset".into(), A::Int(-3)),
        ]
    );
    // The launch is on the CPU thread, the kernel on the stream.
    let thread = &m.tracks[&launches[0].track];
    assert_eq!((thread.pid, thread.tid), (Some(4242), Some(4243)));
    let stream = &m.tracks[&kernels[0].track];
    assert_eq!((stream.pid, stream.tid), (Some(0), Some(7)));
    assert_eq!(stream.thread_name.as_deref(), Some("stream 7 "));
}

#[test]
fn processes_threads_and_counters_are_described() {
    let m = model(&decode(&gpu_trace()));
    let root = &m.tracks[&0];
    assert!(root.pid.is_none() && root.name.is_none());
    let gpu = m.tracks.values().find(|t| t.labels == ["GPU 0"]).unwrap();
    assert_eq!(gpu.process_name.as_deref(), Some("python"));
    assert_eq!(
        (gpu.pid, gpu.rank, gpu.legacy_sort_index),
        (Some(0), Some(5_000_000), Some(5_000_000))
    );
    let thread = m.tracks.values().find(|t| t.tid == Some(4243)).unwrap();
    assert_eq!(thread.thread_name.as_deref(), Some("thread 4243"));
    assert_eq!(thread.rank, Some(4243));
    let mem = m
        .tracks
        .values()
        .find(|t| t.name.as_deref() == Some("GPU 0 memory"))
        .unwrap();
    assert_eq!(mem.counter_unit, Some(3), "UNIT_SIZE_BYTES");
    let occ = m
        .tracks
        .values()
        .find(|t| t.name.as_deref() == Some("occupancy"))
        .unwrap();
    assert_eq!(occ.counter_unit_name.as_deref(), Some("%"));
    let counters: Vec<_> = m.events.iter().filter(|e| e.ty == 4).collect();
    assert_eq!(counters.len(), 3);
    assert_eq!(counters[1].ts, T0 + 600);
    assert_eq!(
        counters[1].counter.as_ref().unwrap().as_i64(),
        Some(1 << 40)
    );
    assert_eq!(counters[2].counter.as_ref().unwrap().as_f64(), Some(37.5));
    let instants: Vec<_> = m.events.iter().filter(|e| e.ty == 3).collect();
    assert_eq!(instants.len(), 2);
    let global = &m.tracks[&instants[0].track];
    assert_eq!(
        (global.name.as_deref(), global.parent, global.pid),
        (Some("Global"), None, None)
    );
    assert_eq!(instants[1].category.as_deref(), Some("marker"));
    assert_eq!(m.tracks[&instants[1].track].tid, Some(4243));
}

#[test]
fn the_clock_is_realtime_for_every_event() {
    let packets = decode(&gpu_trace());
    let first = &packets[0];
    assert_eq!(
        u64_of(first, "sequence_flags"),
        1,
        "SEQ_INCREMENTAL_STATE_CLEARED"
    );
    assert_eq!(u64_of(first, "trusted_packet_sequence_id"), 1);
    let defaults = msg(first, "trace_packet_defaults");
    assert_eq!(
        u64_of(&defaults, "timestamp_clock_id"),
        1,
        "BUILTIN_CLOCK_REALTIME"
    );
    let snapshot = msg(first, "clock_snapshot");
    assert_eq!(u64_of(&snapshot, "primary_trace_clock"), 1);
    let clocks = get(&snapshot, "clocks");
    let clock = clocks.as_list().unwrap()[0].as_message().unwrap();
    assert_eq!(
        (u64_of(clock, "clock_id"), u64_of(clock, "timestamp")),
        (1, T0)
    );
    for (i, p) in packets.iter().enumerate().skip(1) {
        assert_eq!(
            u64_of(p, "sequence_flags"),
            2,
            "packet {i}: SEQ_NEEDS_INCREMENTAL_STATE"
        );
        assert_eq!(u64_of(p, "trusted_packet_sequence_id"), 1);
        assert!(!has(p, "timestamp_clock_id"));
    }
}

#[test]
fn a_name_used_a_million_times_is_in_the_file_once() {
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    let stream = w.thread(0, 7, "stream 7 ", 7).unwrap();
    let name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>";
    let n = 1_000_000u64;
    for i in 0..n {
        let args = [Arg::new("kind", ArgValue::Str("memset-ish"))];
        w.slice(
            stream,
            &Slice {
                category: "kernel",
                args: &args,
                ..Slice::new(T0 + 10 * i, 5, name)
            },
        )
        .unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.slices, n);
    assert_eq!(summary.interned, [1, 1, 1, 1]);
    assert_eq!(count_bytes(&bytes, name.as_bytes()), 1);
    assert_eq!(count_bytes(&bytes, b"memset-ish"), 1);
    assert_eq!(
        count_bytes(&bytes, b"kernel"),
        2,
        "the category, and inside the name"
    );
    // Two small packets per slice, whatever the name's length.
    let per_slice = bytes.len() as f64 / n as f64;
    assert!(per_slice < 60.0, "{per_slice} bytes per slice");
}

#[test]
fn an_overlapping_pair_on_one_stream_lands_on_two_tracks() {
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    w.process(0, "python", &["GPU 0"], 5_000_000).unwrap();
    let stream = w.thread(0, 7, "stream 7 ", 7).unwrap();
    w.slice(stream, &Slice::new(T0, 1_000, "a")).unwrap();
    w.slice(stream, &Slice::new(T0 + 500, 1_000, "b")).unwrap();
    w.slice(stream, &Slice::new(T0 + 2_000, 100, "c")).unwrap();
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(
        (
            summary.overlap_tracks,
            summary.overlap_slices,
            summary.forced_slices
        ),
        (1, 1, 0)
    );
    let m = model(&decode(&bytes));
    let s = paired_slices(&m);
    assert_eq!(
        s.iter()
            .map(|s| (s.name.as_str(), s.start - T0, s.end - T0))
            .collect::<Vec<_>>(),
        vec![("a", 0, 1_000), ("b", 500, 1_500), ("c", 2_000, 2_100)]
    );
    assert_eq!(s[0].track, s[2].track);
    assert_ne!(s[0].track, s[1].track);
    let lane = &m.tracks[&s[1].track];
    assert_eq!(lane.name.as_deref(), Some("stream 7 (overlap)"));
    assert_eq!(lane.parent, Some(s[0].track));
    assert_eq!(lane.merge_behavior, Some(2), "SIBLING_MERGE_BEHAVIOR_NONE");
    assert_eq!(lane.rank, Some(7));
}

#[test]
fn a_child_recorded_before_its_parent_still_nests() {
    // CUPTI hands over the driver call (inside) before the runtime call.
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    let thread = w.thread(1, 2, "thread 2", 2).unwrap();
    w.slice(thread, &Slice::new(T0 + 10, 50, "cuLaunchKernel"))
        .unwrap();
    w.slice(thread, &Slice::new(T0, 100, "cudaLaunchKernel"))
        .unwrap();
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.overlap_slices, 0);
    let s = paired_slices(&model(&decode(&bytes)));
    assert_eq!(
        s.iter()
            .map(|s| (s.name.as_str(), s.depth))
            .collect::<Vec<_>>(),
        vec![("cudaLaunchKernel", 0), ("cuLaunchKernel", 1)]
    );
}

#[test]
fn a_gzipped_trace_is_the_same_stream() {
    use std::io::Read;
    let plain = gpu_trace();
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let w = PftraceWriter::with_options(gz, opts()).unwrap();
    let (gz, _) = w.finish().unwrap();
    let mut empty = Vec::new();
    flate2::read::GzDecoder::new(&gz.finish().unwrap()[..])
        .read_to_end(&mut empty)
        .unwrap();
    assert!(plain.starts_with(&empty), "the preamble is the same");
    assert_eq!(decode(&empty).len(), 2);
}

#[test]
fn bad_events_are_refused_with_what_was_wrong() {
    let mut w = PftraceWriter::new(Vec::new()).unwrap();
    let t = w.thread(1, 1, "t", 0).unwrap();
    let e = w
        .slice(
            t,
            &Slice {
                flow_ids: &[0],
                ..Slice::new(5, 1, "k")
            },
        )
        .unwrap_err();
    assert!(matches!(e, PftraceError::ZeroFlowId { .. }), "{e}");
    assert!(e.to_string().contains("\"k\""), "{e}");
    let e = w.slice(t, &Slice::new(u64::MAX, 1, "late")).unwrap_err();
    assert!(e.to_string().contains("18446744073709551615"), "{e}");
    let mut other = PftraceWriter::new(Vec::new()).unwrap();
    let (a, b) = (
        other.thread(1, 1, "a", 0).unwrap(),
        other.thread(1, 2, "b", 0).unwrap(),
    );
    let _ = a;
    let e = w.slice(b, &Slice::new(5, 1, "k")).unwrap_err();
    assert!(
        e.to_string()
            .contains("track 1 was not made by this writer"),
        "{e}"
    );
    let e = PftraceWriter::with_options(
        Vec::new(),
        WriterOptions {
            sequence_id: 0,
            ..opts()
        },
    )
    .unwrap_err();
    assert!(matches!(e, PftraceError::ZeroSequenceId));
}

#[test]
fn names_past_the_intern_cap_are_written_inline() {
    let mut w = PftraceWriter::with_options(
        Vec::new(),
        WriterOptions {
            intern_cap: 2,
            ..opts()
        },
    )
    .unwrap();
    let t = w.thread(1, 1, "t", 0).unwrap();
    for i in 0..5u64 {
        let name = format!("step {i}");
        w.slice(t, &Slice::new(T0 + 10 * i, 5, &name)).unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.interned[0], 2);
    assert_eq!(summary.inline_strings, 3);
    let names: Vec<_> = paired_slices(&model(&decode(&bytes)))
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        (0..5).map(|i| format!("step {i}")).collect::<Vec<_>>()
    );
}

#[test]
fn process_and_thread_are_declared_once() {
    let mut w = PftraceWriter::new(Vec::new()).unwrap();
    let a = w.thread(1, 1, "t", 0).unwrap();
    let b = w.thread(1, 1, "t", 0).unwrap();
    let p = w.process(1, "p", &[], 0).unwrap();
    assert_eq!((a, p), (b, w.process(1, "p", &[], 0).unwrap()));
    let (_, summary) = w.finish().unwrap();
    assert_eq!(summary.tracks, 2);
}

#[test]
fn extra_clocks_and_the_uuid_base_are_written() {
    let opts = WriterOptions {
        extra_clocks: vec![(6, 123_456)],
        uuid_base: 1 << 40,
        ..opts()
    };
    let mut w = PftraceWriter::with_options(Vec::new(), opts).unwrap();
    let t = w.thread(1, 1, "t", 0).unwrap();
    w.slice(t, &Slice::new(T0, 5, "k")).unwrap();
    let (bytes, _) = w.finish().unwrap();
    let packets = decode(&bytes);
    let snapshot = msg(&packets[0], "clock_snapshot");
    let clocks: Vec<_> = get(&snapshot, "clocks")
        .as_list()
        .unwrap()
        .iter()
        .map(|c| {
            let c = c.as_message().unwrap();
            (u64_of(c, "clock_id"), u64_of(c, "timestamp"))
        })
        .collect();
    assert_eq!(clocks, vec![(1, T0), (6, 123_456)], "REALTIME, BOOTTIME");
    let s = paired_slices(&model(&packets));
    assert_eq!(s[0].track, (1 << 40) + 1);
}

#[test]
fn a_name_given_after_the_events_describes_the_track_again() {
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    let t = w.thread(1, 2, "", 2).unwrap();
    w.slice(t, &Slice::new(T0, 5, "k")).unwrap();
    assert_eq!(w.thread(1, 2, "worker", 2).unwrap(), t);
    assert_eq!(
        w.thread(1, 2, "worker", 2).unwrap(),
        t,
        "no change, no packet"
    );
    let p = w.process(1, "", &[], 1).unwrap();
    assert_eq!(w.process(1, "python", &["CPU"], 1).unwrap(), p);
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.tracks, 2);
    let m = model(&decode(&bytes));
    assert_eq!(m.redescribed, 2);
    let thread = m.tracks.values().find(|t| t.tid == Some(2)).unwrap();
    assert_eq!(thread.thread_name.as_deref(), Some("worker"));
    let process = m
        .tracks
        .values()
        .find(|t| t.tid.is_none() && t.pid == Some(1))
        .unwrap();
    assert_eq!(
        (process.process_name.as_deref(), process.labels.clone()),
        (Some("python"), vec!["CPU".to_owned()])
    );
}

#[test]
fn flows_bind_to_the_enclosing_held_slice() {
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    let cpu = w.thread(1, 1, "cpu", 1).unwrap();
    let gpu = w.thread(0, 7, "stream 7 ", 7).unwrap();
    w.slice(cpu, &Slice::new(T0, 100, "op")).unwrap();
    w.slice(cpu, &Slice::new(T0 + 10, 20, "cudaLaunchKernel"))
        .unwrap();
    assert!(w.bind_flow(cpu, T0 + 10, 5, false).unwrap());
    w.slice(gpu, &Slice::new(T0 + 50, 10, "gemm")).unwrap();
    assert!(w.bind_flow(gpu, T0 + 50, 5, true).unwrap());
    assert!(
        !w.bind_flow(gpu, T0 + 70, 6, true).unwrap(),
        "no slice there"
    );
    assert!(w.bind_flow(gpu, T0 + 50, 0, true).is_err());
    let (bytes, _) = w.finish().unwrap();
    let s = paired_slices(&model(&decode(&bytes)));
    let by_name = |n: &str| s.iter().find(|x| x.name == n).unwrap();
    assert_eq!(by_name("cudaLaunchKernel").flows, vec![5]);
    assert!(
        by_name("op").flows.is_empty(),
        "the innermost slice takes it"
    );
    assert_eq!(by_name("gemm").terminating_flows, vec![5]);
}

#[derive(Debug)]
struct Nested;

impl cupmon_pftrace::WriteArgs for Nested {
    fn write_args(&self, out: &mut cupmon_pftrace::ArgsOut<'_>) {
        use cupmon_pftrace::Container;
        out.value("n", ArgValue::Int(1));
        out.begin("dims", Container::Array);
        out.begin("", Container::Array);
        out.value("", ArgValue::Int(2));
        out.value("", ArgValue::Int(3));
        out.end();
        out.begin("", Container::Array);
        out.end();
        out.end();
        out.begin("d", Container::Dict);
        out.value("s", ArgValue::Str("x"));
        out.value("none", ArgValue::Json("null"));
        out.end();
        out.begin("empty", Container::Dict);
        // Left open: closed when the args end.
    }
}

#[test]
fn args_written_one_by_one_nest_like_json() {
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    let t = w.thread(1, 1, "t", 1).unwrap();
    let first = [Arg::new("first", ArgValue::Bool(true))];
    w.slice(
        t,
        &Slice {
            args: &first,
            more_args: Some(&Nested),
            ..Slice::new(T0, 5, "op")
        },
    )
    .unwrap();
    let (bytes, _) = w.finish().unwrap();
    let s = paired_slices(&model(&decode(&bytes)));
    assert_eq!(
        s[0].args,
        vec![
            ("first".into(), A::Bool(true)),
            ("n".into(), A::Int(1)),
            (
                "dims".into(),
                A::Array(vec![
                    A::Array(vec![A::Int(2), A::Int(3)]),
                    A::Json("[]".into())
                ])
            ),
            (
                "d".into(),
                A::Dict(vec![
                    ("s".into(), A::Str("x".into())),
                    ("none".into(), A::Json("null".into()))
                ])
            ),
            ("empty".into(), A::Json("{}".into())),
        ]
    );
}

#[test]
fn top_level_members_become_one_metadata_bundle() {
    use cupmon_pftrace::MetadataValue as M;
    let mut w = PftraceWriter::with_options(Vec::new(), opts()).unwrap();
    w.chrome_metadata(&[
        ("traceName", M::Str("t.pftrace")),
        ("baseTimeNanoseconds", M::Int(1 << 60)),
        ("exact", M::Bool(false)),
        ("cupmon", M::Json(r#"{"dropped_records":0}"#)),
    ])
    .unwrap();
    let (bytes, _) = w.finish().unwrap();
    let m = model(&decode(&bytes));
    assert_eq!(m.bundles, 1);
    assert_eq!(
        m.metadata,
        vec![
            ("traceName".into(), A::Str("t.pftrace".into())),
            ("baseTimeNanoseconds".into(), A::Int(1 << 60)),
            ("exact".into(), A::Bool(false)),
            ("cupmon".into(), A::Json(r#"{"dropped_records":0}"#.into())),
        ]
    );
}
