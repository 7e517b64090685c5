//! Generated merge inputs that cover every rule of the seed's merge: API
//! name tables and blocklists, flows, thread mapping, annotations, memcpy
//! kinds, overhead, user-annotation spans, odd value types and bad inputs.

use serde_json::{json, Value};

pub struct Case {
    pub label: String,
    pub cpu: String,
    pub window: String,
    pub cpu_gz: bool,
    pub out_gz: bool,
    pub trace_name: Option<String>,
}

/// xorshift64*: deterministic cases without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }
}

const BASE: i64 = 1_790_857_026_000_000_000;
const DEVICES: [i64; 3] = [0, 1, 3];
const STREAMS: [i64; 4] = [7, 13, -2, 0];
const PIDS: [i64; 2] = [4242, 99];
const THREADS: [i64; 5] = [12345, 3_182_186_496, -5, 0, 498];
const RUNTIME_CBIDS: [i64; 10] = [17, 133, 20, 31, 41, 51, 131, 211, 311, 999_999];
const DRIVER_CBIDS: [i64; 7] = [1, 304, 307, 549, 551, 652, 999_999];
const EXTERNAL_IDS: [i64; 6] = [1000, 1001, 513, 514, 0, 77];

/// Usually the plain value; sometimes the types the seed converts anyway.
fn odd_int(rng: &mut Rng, v: i64) -> Value {
    match rng.below(40) {
        0 => json!(v.to_string()),
        1 => json!(v as f64 + 0.75),
        2 => json!(format!(" {v} ")),
        3 => json!(null),
        4 => json!(true),
        5 => json!("not a number"),
        _ => json!(v),
    }
}

fn odd_pick(rng: &mut Rng, items: &[i64]) -> Value {
    let v = rng.pick(items);
    odd_int(rng, v)
}

fn time(rng: &mut Rng) -> i64 {
    if rng.chance(5) {
        0
    } else {
        BASE + 5_000_000_000 + rng.below(2_000_000_000) as i64
    }
}

fn annotation(rng: &mut Rng) -> Option<Value> {
    Some(match rng.below(16) {
        0 => json!(null),
        1 => json!(r#"{"step": 3, "device": "moved", "nested": {"a": [1, 2.5]}}"#),
        2 => json!(r#"[1, 2.50, "x", null, true, {"k": 1e16}]"#),
        3 => json!("not json"),
        4 => json!("\"a string\""),
        5 => json!("5"),
        6 => json!("null"),
        7 => json!("[]"),
        8 => json!({"as": "object", "device": 9}),
        9 => json!([1, "list", 0.00001]),
        10 => json!(12.5),
        11 => json!("[\"é\", \"\\u0001\", 1e-7]"),
        12 => json!("{\"a\": 1, \"a\": 2}"),
        _ => return None,
    })
}

fn gpu_event(rng: &mut Rng, kind: &str, corr: i64) -> Value {
    let start = time(rng);
    let end = if rng.chance(5) {
        start - 10
    } else {
        start + rng.below(100_000) as i64
    };
    let mut e = json!({
        "kind": kind,
        "device_id": odd_pick(rng, &DEVICES),
        "context_id": 1,
        "stream_id": odd_pick(rng, &STREAMS),
        "correlation_id": odd_int(rng, corr),
        "graph_node_id": rng.pick(&[0i64, 0, 5, 1 << 40]),
        "graph_id": rng.pick(&[0, 0, 2]),
        "start_ns": start,
        "end_ns": end,
        "name": if kind == "kernel" { json!(rng.pick(&["void k<float>(float*)", "gemm", "x"])) } else if kind == "gpu_memcpy" { json!("Memcpy") } else { json!("Memset") },
    });
    let o = e.as_object_mut().expect("object");
    if let Some(a) = annotation(rng) {
        o.insert("annotation".into(), a);
    }
    if rng.chance(3) {
        o.insert(
            "name".into(),
            rng.pick(&[json!(5), json!(["a", 1.5, null]), json!({"k": "it's"})]),
        );
    }
    if rng.chance(3) {
        o.remove("graph_id");
    }
    match kind {
        "gpu_memcpy" => {
            o.insert("bytes".into(), json!(4096));
            o.insert("copy_kind".into(), json!(rng.pick(&[1, 2, 8, 10, 9, 0])));
            o.insert("src_kind".into(), json!(rng.pick(&[1, 2, 3, 7, 11])));
            o.insert("dst_kind".into(), json!(rng.pick(&[3, 0, 5, 12])));
            o.insert("flags".into(), json!(rng.pick(&[0, 1])));
            o.insert("runtime_correlation_id".into(), json!(0));
        }
        "gpu_memset" => {
            o.insert("bytes".into(), json!(1024));
            o.insert("value".into(), json!(rng.pick(&[0, 255])));
            o.insert("memory_kind".into(), json!(rng.pick(&[3, 2])));
            o.insert("flags".into(), json!(1));
        }
        _ => {}
    }
    e
}

fn api_event(rng: &mut Rng, kind: &str, corr: i64) -> Value {
    let cbids: &[i64] = if kind == "cuda_runtime" {
        &RUNTIME_CBIDS
    } else {
        &DRIVER_CBIDS
    };
    let cbid = rng.pick(cbids);
    let start = time(rng);
    json!({
        "kind": kind,
        "cbid": odd_int(rng, cbid),
        "start_ns": start,
        "end_ns": start + rng.below(50_000) as i64,
        "process_id": rng.pick(&PIDS),
        "thread_id": odd_pick(rng, &THREADS),
        "correlation_id": corr,
        "return_value": 0,
        "name": format!("cbid_{cbid}"),
    })
}

fn window(rng: &mut Rng) -> Value {
    let n = rng.below(60);
    let mut events = Vec::new();
    for _ in 0..n {
        let corr = rng.below(12) as i64;
        let e = match rng.below(20) {
            0..=4 => gpu_event(rng, "kernel", corr),
            5 | 6 => gpu_event(rng, "gpu_memcpy", corr),
            7 => gpu_event(rng, "gpu_memset", corr),
            8..=11 => api_event(rng, "cuda_runtime", corr),
            12 | 13 => api_event(rng, "cuda_driver", corr),
            14 | 15 => json!({
                "kind": "external_correlation",
                "external_kind": rng.pick(&[3, 4, 4, 0]),
                "external_id": rng.pick(&EXTERNAL_IDS),
                "correlation_id": corr,
                "name": "external_correlation",
            }),
            16 => {
                let buffer_request = rng.chance(60);
                let start = if rng.chance(50) {
                    BASE + 9_000_000_000
                } else {
                    time(rng)
                };
                json!({
                    "kind": "overhead",
                    "overhead_kind": 458752,
                    "object_kind": 2,
                    "object_id": 0,
                    "start_ns": start,
                    "end_ns": start + 1000,
                    "correlation_id": 0,
                    "name": if buffer_request { "Activity Buffer Request" } else { "Lazy Function Loading" },
                })
            }
            17 => {
                json!({"kind": "cuda_event", "device_id": 0, "event_id": 1, "correlation_id": corr, "name": "cuda_event"})
            }
            18 => {
                json!({"kind": "cuda_sync", "sync_type": 2, "start_ns": time(rng), "end_ns": BASE + 8_000_000_000, "correlation_id": corr, "name": "sync_2"})
            }
            _ => {
                json!({"kind": rng.pick(&[json!("mystery"), json!(5), json!(null)]), "end_ns": time(rng)})
            }
        };
        events.push(e);
    }
    let mut w = json!({
        "events": events,
        "extra_activities": [],
        "user_annotations": {},
        "thread_resource_map": {},
        "start_ns": 0,
    });
    if rng.chance(60) {
        w["user_annotations"] =
            json!({"1000": "iteration 0", "1001": 5, "513": "ann 513", "77": "seventy-seven"});
    }
    if rng.chance(50) {
        w["thread_resource_map"] =
            json!({"4242": {"12345": 777, "-5": 778, "-1112780800": 779}, "99": {}});
    }
    w
}

fn cpu_trace(rng: &mut Rng) -> Value {
    let mut events = Vec::new();
    let leading_m = rng.below(4);
    for i in 0..leading_m {
        events.push(json!({"ph": "M", "name": "process_name", "pid": 4242, "tid": 0, "ts": i, "args": {"name": "python"}}));
    }
    let n = rng.below(30);
    for i in 0..n {
        let ts = 5_000_000.0 + (rng.below(2_000_000_000) as f64) / 1000.0;
        let e = match rng.below(14) {
            0..=6 => json!({
                "ph": "X", "cat": rng.pick(&["cpu_op", "user_annotation", "python_function"]),
                "name": format!("aten::op{i}"),
                "pid": rng.pick(&[json!(4242), json!(99), json!(4242.0)]),
                "tid": rng.pick(&[json!(498), json!(-7), json!("498")]),
                "ts": ts, "dur": rng.below(500) as f64 / 3.0,
                "args": if rng.chance(10) { json!("no dict") } else {
                    json!({"External id": rng.pick(&[json!(1000), json!(513), json!(514), json!("1001"), json!(77.9), json!(null), json!([1])]), "Ev Idx": i})
                },
            }),
            7 => {
                json!({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": ts, "dur": 10.0, "args": {"Op count": 0}})
            }
            8 => {
                json!({"ph": "i", "s": "g", "name": rng.pick(&["Iteration Start: PyTorch Profiler", "Record Window End"]), "pid": "", "tid": "", "ts": ts})
            }
            9 => {
                json!({"ph": "f", "id": 1, "pid": 4242, "tid": 498, "ts": ts, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
            }
            10 => {
                json!({"ph": "M", "name": "thread_name", "pid": 4242, "tid": 498, "args": {"name": "main"}})
            }
            11 => {
                json!({"ph": "X", "cat": "cpu_op", "name": "odd ts", "pid": 1, "tid": 1, "ts": rng.pick(&[json!("5000001.5"), json!(null), json!("x")]), "dur": rng.pick(&[json!(-4.0), json!("2"), json!(1)])})
            }
            12 => {
                json!({"ph": "X", "cat": "kernel", "name": "kineto kernel", "pid": 0, "tid": 7, "ts": ts, "dur": 3.25})
            }
            _ => json!({"ph": "C", "name": "counter", "pid": 4242, "ts": ts, "args": {"v": 1}}),
        };
        events.push(e);
    }
    let mut doc = serde_json::Map::new();
    doc.insert("schemaVersion".into(), json!(1));
    if rng.chance(30) {
        doc.insert("traceName".into(), json!("old name"));
    }
    match rng.below(10) {
        0 => {}
        1 => {
            doc.insert("baseTimeNanoseconds".into(), json!(BASE.to_string()));
        }
        2 => {
            doc.insert("baseTimeNanoseconds".into(), json!(BASE as f64));
        }
        _ => {
            doc.insert("baseTimeNanoseconds".into(), json!(BASE));
        }
    }
    doc.insert("traceEvents".into(), Value::Array(events));
    if rng.chance(50) {
        doc.insert(
            "deviceProperties".into(),
            json!([{"id": 0, "name": "NVIDIA H200"}]),
        );
    }
    Value::Object(doc)
}

/// Generated case number `seed`.
pub fn case(seed: u64) -> Case {
    let mut rng = Rng::new(seed + 1);
    let pretty = rng.chance(30);
    let cpu = cpu_trace(&mut rng);
    let window = window(&mut rng);
    Case {
        label: format!("generated #{seed}"),
        cpu: if pretty {
            serde_json::to_string_pretty(&cpu).expect("json")
        } else {
            cpu.to_string()
        },
        window: window.to_string(),
        cpu_gz: rng.chance(20),
        out_gz: rng.chance(20),
        trace_name: if rng.chance(80) {
            Some(format!("case {seed}"))
        } else {
            None
        },
    }
}

fn raw(label: &str, cpu: &str, window: &str) -> Case {
    Case {
        label: label.to_owned(),
        cpu: cpu.to_owned(),
        window: window.to_owned(),
        cpu_gz: false,
        out_gz: false,
        trace_name: Some(label.to_owned()),
    }
}

const CPU: &str = r#"{"baseTimeNanoseconds":1790857026000000000,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1.25,"args":{"External id":7}}]}"#;
const KERNEL: &str = r#"{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}"#;

/// Inputs at the edges of what the seed accepts.
pub fn edge_cases() -> Vec<Case> {
    let w = |events: &str| {
        format!(r#"{{"events":[{events}],"user_annotations":{{}},"thread_resource_map":{{}}}}"#)
    };
    vec![
        raw("empty window", CPU, &w("")),
        raw("events as empty object", CPU, r#"{"events":{}}"#),
        raw("events as empty string", CPU, r#"{"events":""}"#),
        raw("events as non-empty object", CPU, r#"{"events":{"a":1}}"#),
        raw("events missing", CPU, r#"{"user_annotations":{}}"#),
        raw("events not a list", CPU, r#"{"events":5}"#),
        raw("event not an object", CPU, &w("5")),
        raw("event without kind", CPU, &w(r#"{"start_ns":1}"#)),
        raw("kind is a list", CPU, &w(r#"{"kind":["kernel"]}"#)),
        raw("kind is a number", CPU, &w(r#"{"kind":3,"end_ns":5}"#)),
        raw(
            "kernel without stream",
            CPU,
            &w(
                r#"{"kind":"kernel","device_id":0,"context_id":1,"correlation_id":3,"start_ns":1,"end_ns":2,"name":"k"}"#,
            ),
        ),
        raw(
            "blocklisted runtime without times",
            CPU,
            &w(
                r#"{"kind":"cuda_runtime","cbid":17,"process_id":1,"thread_id":2,"correlation_id":3}"#,
            ),
        ),
        raw(
            "registered runtime without start",
            CPU,
            &w(
                r#"{"kind":"cuda_runtime","cbid":211,"process_id":1,"thread_id":2,"correlation_id":3,"end_ns":5}"#,
            ),
        ),
        raw(
            "runtime without thread",
            CPU,
            &w(r#"{"kind":"cuda_runtime","cbid":17,"process_id":1,"correlation_id":3}"#),
        ),
        raw(
            "unregistered driver without times",
            CPU,
            &w(
                r#"{"kind":"cuda_driver","cbid":1,"process_id":1,"thread_id":2,"correlation_id":3}"#,
            ),
        ),
        raw(
            "overhead without name",
            CPU,
            &w(&format!(
                r#"{KERNEL},{{"kind":"overhead","start_ns":1790857026000000001,"end_ns":1790857026000000002}}"#
            )),
        ),
        raw(
            "trailing buffer request without end",
            CPU,
            &w(&format!(
                r#"{KERNEL},{{"kind":"overhead","name":"Activity Buffer Request","start_ns":1790857026000009000}}"#
            )),
        ),
        raw(
            "trailing buffer request with bad start",
            CPU,
            &w(&format!(
                r#"{KERNEL},{{"kind":"overhead","name":"Activity Buffer Request","start_ns":Infinity}}"#
            )),
        ),
        raw(
            "buffer request in an empty window",
            CPU,
            &w(
                r#"{"kind":"overhead","name":"Activity Buffer Request","start_ns":1790857026000009000,"end_ns":1790857026000009100}"#,
            ),
        ),
        raw(
            "end_ns infinity on any event",
            CPU,
            &w(r#"{"kind":"cuda_event","end_ns":Infinity}"#),
        ),
        raw(
            "end_ns NaN on any event",
            CPU,
            &w(r#"{"kind":"cuda_event","end_ns":NaN}"#),
        ),
        raw(
            "device id as float string",
            CPU,
            &w(
                r#"{"kind":"kernel","device_id":"1.5","context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}"#,
            ),
        ),
        raw(
            "huge external id",
            r#"{"baseTimeNanoseconds":1790857026000000000,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1.25,"args":{"External id":18446744073709551615}}]}"#,
            &w(&format!(
                r#"{KERNEL},{{"kind":"external_correlation","external_kind":3,"external_id":18446744073709551615,"correlation_id":9}},{{"kind":"cuda_runtime","cbid":211,"process_id":1,"thread_id":5,"correlation_id":9,"start_ns":1790857026000004000,"end_ns":1790857026000004500}}"#
            )),
        ),
        raw(
            "external id infinity in the CPU trace",
            r#"{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1,"args":{"External id":Infinity}}]}"#,
            &w(KERNEL),
        ),
        raw(
            "external id infinity outside an op",
            r#"{"traceEvents":[{"ph":"X","cat":"python_function","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1,"args":{"External id":Infinity}}]}"#,
            &w(KERNEL),
        ),
        raw("cpu trace not JSON", "{not json", &w(KERNEL)),
        raw(
            "cpu trace truncated",
            r#"{"traceEvents":[{"ph":"X","ts":1"#,
            &w(KERNEL),
        ),
        raw("cpu trace is a list", "[1,2]", &w(KERNEL)),
        raw(
            "traceEvents non-empty object",
            r#"{"traceEvents":{"a":1}}"#,
            &w(KERNEL),
        ),
        raw(
            "traceEvents empty object",
            r#"{"traceEvents":{}}"#,
            &w(KERNEL),
        ),
        raw("traceEvents a number", r#"{"traceEvents":5}"#, &w(KERNEL)),
        raw(
            "no traceEvents at all",
            r#"{"schemaVersion":1}"#,
            &w(KERNEL),
        ),
        raw(
            "cpu event not an object",
            r#"{"traceEvents":[1]}"#,
            &w(KERNEL),
        ),
        raw(
            "cpu event name is a list",
            r#"{"traceEvents":[{"ph":"X","name":["a"],"ts":1,"dur":1}]}"#,
            &w(KERNEL),
        ),
        raw(
            "cpu X event cat is a dict",
            r#"{"traceEvents":[{"ph":"X","cat":{},"ts":1,"dur":1}]}"#,
            &w(KERNEL),
        ),
        raw(
            "cpu instant cat is a dict",
            r#"{"traceEvents":[{"ph":"i","cat":{},"ts":1}]}"#,
            &w(KERNEL),
        ),
        raw(
            "escaped ph and name",
            r#"{"traceEvents":[{"ph":"\u004d","name":"n"},{"ph":"X","cat":"Trace","name":"PyTorch Profiler \u0028\u0030)","ts":1,"dur":1},{"ph":"\u0058","cat":"x","ts":3,"dur":2}]}"#,
            &w(KERNEL),
        ),
        raw(
            "duplicate keys",
            r#"{"traceEvents":[{"ph":"M","ph":"X","cat":"c","ts":1,"dur":2,"ts":4}],"traceName":"a","traceEvents":[{"ph":"X","cat":"c","ts":2,"dur":1}],"x":1,"x":2}"#,
            &w(KERNEL),
        ),
        raw(
            "NaN and infinite times",
            r#"{"traceEvents":[{"ph":"X","cat":"c","ts":NaN,"dur":1},{"ph":"X","cat":"c","ts":1,"dur":Infinity},{"ph":"X","cat":"c","ts":-Infinity,"dur":NaN}]}"#,
            &w(""),
        ),
        raw(
            "no duration events",
            r#"{"traceEvents":[{"ph":"i","ts":1}]}"#,
            &w(""),
        ),
        raw(
            "extra data after JSON",
            r#"{"traceEvents":[]} x"#,
            &w(KERNEL),
        ),
        raw(
            "byte order mark",
            "\u{feff}{\"traceEvents\":[]}",
            &w(KERNEL),
        ),
        raw(
            "big integers pass through",
            r#"{"traceEvents":[{"ph":"X","cat":"c","ts":1,"dur":2,"args":{"big":123456789012345678901234567890}}],"baseTimeNanoseconds":0}"#,
            &w(KERNEL),
        ),
        raw(
            "base time as float",
            r#"{"baseTimeNanoseconds":1.5e18,"traceEvents":[]}"#,
            &w(KERNEL),
        ),
        raw(
            "base time null",
            r#"{"baseTimeNanoseconds":null,"traceEvents":[]}"#,
            &w(KERNEL),
        ),
        raw(
            "base time bad string",
            r#"{"baseTimeNanoseconds":"soon","traceEvents":[]}"#,
            &w(KERNEL),
        ),
        raw("window not JSON", CPU, "{\"events\": ["),
        raw(
            "user_annotations not an object",
            CPU,
            r#"{"events":[],"user_annotations":[]}"#,
        ),
        raw(
            "thread map with bad value",
            CPU,
            r#"{"events":[],"thread_resource_map":{"1":{"2":null}}}"#,
        ),
        raw(
            "thread map with float value",
            CPU,
            r#"{"events":[{"kind":"cuda_runtime","cbid":20,"process_id":1,"thread_id":2,"correlation_id":3,"start_ns":1790857026000004000,"end_ns":1790857026000004500}],"thread_resource_map":{"1":{"2":77.9}}}"#,
        ),
        raw(
            "user annotation key not an integer",
            CPU,
            r#"{"events":[],"user_annotations":{"x":"a"}}"#,
        ),
        raw(
            "external_kind infinity with annotations",
            CPU,
            &format!(
                r#"{{"events":[{KERNEL},{{"kind":"external_correlation","external_kind":Infinity,"external_id":5,"correlation_id":3}}],"user_annotations":{{"5":"five"}}}}"#
            ),
        ),
        raw(
            "external_kind infinity without annotations",
            CPU,
            &format!(
                r#"{{"events":[{KERNEL},{{"kind":"external_correlation","external_kind":Infinity,"external_id":5,"correlation_id":3}}],"user_annotations":{{}}}}"#
            ),
        ),
        raw(
            "tid of int64 min",
            CPU,
            &w(
                r#"{"kind":"kernel","device_id":0,"context_id":1,"stream_id":-9223372036854775808,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}"#,
            ),
        ),
        raw(
            "deep nesting in args",
            &format!(
                r#"{{"traceEvents":[{{"ph":"X","cat":"c","ts":1,"dur":2,"args":{}1{}}}]}}"#,
                "[".repeat(100),
                "]".repeat(100)
            ),
            &w(KERNEL),
        ),
        // cupmon's NVTX ranges and marks (its own member, and a non-event that is not
        // one, and a range ending after everything else): PyTorch's merge writes
        // none of them and no args beyond `External id` on the GPU span.
        raw(
            "cpu_annotations member",
            CPU,
            &format!(
                r##"{{"events":[{KERNEL},{{"kind":"external_correlation","external_kind":4,"external_id":9,"correlation_id":3}}],"user_annotations":{{"9":"forward"}},"thread_resource_map":{{}},"cpu_annotations":[{{"type":"range","name":"forward","process_id":1,"thread_id":2,"start_ns":1790857026000004000,"end_ns":1790857026900000000,"depth":0,"domain":"d","category":"c","color":"#00ff00","external_id":9,"open_at_window_end":true}},{{"type":"mark","name":"m","process_id":1,"thread_id":2,"start_ns":1790857026000005000,"end_ns":1790857026000005000,"depth":1}},5]}}"##
            ),
        ),
    ]
}

/// A window with `n` user annotations (a few of them repeated, one as "05"
/// for 5, so that Python's last-value rule shows), every tenth used by the
/// CUSTOM1 correlation of one kernel.
pub fn many_annotations(n: u64) -> Case {
    let mut events = Vec::new();
    for corr in 1..=n / 10 {
        let start = BASE + 5_000 + corr as i64 * 3_000;
        events.push(format!(
            r#"{{"kind":"external_correlation","external_kind":4,"external_id":{},"correlation_id":{corr}}}"#,
            corr * 10
        ));
        events.push(format!(
            r#"{{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":{corr},"start_ns":{start},"end_ns":{},"name":"k{}"}}"#,
            start + 2_000,
            corr % 13
        ));
    }
    let mut annotations: Vec<String> = (0..n).map(|i| format!(r#""{i}":"step {i}""#)).collect();
    annotations.push(r#""10":"step 10, again""#.to_owned());
    annotations.push(r#""05":"five as 05""#.to_owned());
    annotations.push(format!(r#""{}":"last, again""#, n - 10));
    Case {
        label: format!("{n} user annotations"),
        cpu: CPU.to_owned(),
        window: format!(
            r#"{{"events":[{}],"user_annotations":{{{}}},"thread_resource_map":{{}}}}"#,
            events.join(","),
            annotations.join(",")
        ),
        cpu_gz: false,
        out_gz: false,
        trace_name: Some("annotations".to_owned()),
    }
}

/// A CPU trace with `n` top-level keys besides traceEvents, some repeated
/// after traceEvents (plainly and escaped) so that their last value wins in
/// their first place.
pub fn many_top_level_keys(n: u64) -> Case {
    let mut members: Vec<String> = (0..n)
        .map(|i| format!(r#""key{i}":{{"index":{i},"text":"value {i}"}}"#))
        .collect();
    members.push(format!(
        r#""baseTimeNanoseconds":{BASE},"traceEvents":[{{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1.25,"args":{{"External id":7}}}}]"#
    ));
    members.push(r#""key0":"last value""#.to_owned());
    members.push(r#""\u006bey5":[5,"escaped"]"#.to_owned());
    members.push(format!(r#""key{}":null"#, n - 1));
    Case {
        label: format!("{n} top-level keys"),
        cpu: format!("{{{}}}", members.join(",")),
        window: format!(
            r#"{{"events":[{KERNEL}],"user_annotations":{{}},"thread_resource_map":{{}}}}"#
        ),
        cpu_gz: false,
        out_gz: false,
        trace_name: Some("top-level keys".to_owned()),
    }
}
