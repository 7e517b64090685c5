//! The window's trace events written with serde_json's `Serializer` and a
//! `Formatter` whose floats are Python's `repr` (what the merge must write):
//! the same bytes as cupmon-trace's own writer.

use std::io;

use cupmon_records::ApiDomain;
use cupmon_trace::internals::write_py_float;
use serde::Serialize;
use serde_json::ser::Formatter;

use crate::serde_window::{WinEvent, Window};

/// serde_json's compact format, with Python's float repr (`1e+16`, `1e-05`).
/// NaN and infinities never reach it: serde_json writes them as `null` before
/// asking the formatter, where Python writes `NaN` / `Infinity`.
struct PyFloats;

impl Formatter for PyFloats {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        let mut w = w;
        write_py_float(&mut w, v)
    }
}

#[derive(Serialize)]
struct X<'a, A> {
    ph: &'static str,
    cat: &'a str,
    name: &'a str,
    pid: i128,
    tid: i128,
    ts: f64,
    dur: f64,
    args: A,
}

#[derive(Serialize)]
struct ApiArgs {
    cbid: i128,
    correlation: i128,
}

#[derive(Serialize)]
struct KernelArgs {
    device: i128,
    context: i128,
    stream: i128,
    correlation: i128,
    #[serde(rename = "graph id", skip_serializing_if = "is_zero")]
    graph_id: i128,
    #[serde(rename = "graph node id", skip_serializing_if = "is_zero")]
    graph_node_id: i128,
}

#[derive(Serialize)]
struct MemcpyArgs {
    device: i128,
    context: i128,
    stream: i128,
    correlation: i128,
    #[serde(rename = "graph id", skip_serializing_if = "is_zero")]
    graph_id: i128,
    #[serde(rename = "graph node id", skip_serializing_if = "is_zero")]
    graph_node_id: i128,
    bytes: i128,
    #[serde(rename = "copy kind")]
    copy_kind: Named,
    #[serde(rename = "src kind")]
    src_kind: Named,
    #[serde(rename = "dst kind")]
    dst_kind: Named,
    flags: i128,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Named {
    Str(&'static str),
    Int(i128),
}

#[derive(Serialize)]
struct Flow {
    ph: &'static str,
    id: i128,
    pid: i128,
    tid: i128,
    ts: f64,
    cat: &'static str,
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
}

fn is_zero(v: &i128) -> bool {
    *v == 0
}

fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

fn export_tid(tid: i128) -> i128 {
    if tid == -(1i128 << 63) {
        0
    } else {
        tid.abs()
    }
}

fn copy_kind(k: i128) -> Named {
    let names = [
        "", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "", "PtoP",
    ];
    match usize::try_from(k).ok().and_then(|i| names.get(i)) {
        Some(n) if !n.is_empty() => Named::Str(n),
        _ => Named::Int(k),
    }
}

fn memory_kind(k: i128) -> Named {
    let names = [
        "unknown",
        "pageable",
        "pinned",
        "device",
        "array",
        "managed",
        "device_static",
        "managed_static",
    ];
    match usize::try_from(k).ok().and_then(|i| names.get(i)) {
        Some(n) => Named::Str(n),
        None => Named::Int(k),
    }
}

/// One element of `traceEvents`, after a comma unless it is the first.
fn element(out: &mut Vec<u8>, n: &mut u64, v: &impl Serialize) -> serde_json::Result<()> {
    if *n > 0 {
        out.push(b',');
    }
    *n += 1;
    v.serialize(&mut serde_json::Serializer::with_formatter(
        &mut *out, PyFloats,
    ))
}

/// The kinds the bench window holds (runtime calls, kernels, copies); returns
/// how many events were written.
pub fn write_events(w: &Window, base_ns: i128, out: &mut Vec<u8>) -> serde_json::Result<u64> {
    let mut n = 0u64;
    for e in &w.events {
        let rel = |t: i128| py_max((t - base_ns) as f64 / 1000.0, 0.0);
        let start = e.get("start_ns");
        let ts = rel(start);
        let dur = py_max((e.get("end_ns") - start) as f64 / 1000.0, 0.0);
        match e.kind.as_str() {
            "cuda_runtime" => {
                let name = ApiDomain::Runtime.name(e.get("cbid"));
                if !cupmon_trace::is_registered(ApiDomain::Runtime, &name) {
                    continue;
                }
                let pid = e.get("process_id");
                let int32 = (e.get("thread_id") as u128 & 0xFFFF_FFFF) as u32 as i32;
                let tid = export_tid(i128::from(int32));
                let corr = e.get("correlation_id");
                let args = ApiArgs {
                    cbid: e.get("cbid"),
                    correlation: corr,
                };
                let x = X {
                    ph: "X",
                    cat: "cuda_runtime",
                    name: &name,
                    pid,
                    tid,
                    ts,
                    dur,
                    args,
                };
                element(out, &mut n, &x)?;
                if corr != 0 && cupmon_trace::requires_flow(ApiDomain::Runtime, &name) {
                    let flow = Flow {
                        ph: "s",
                        id: corr,
                        pid,
                        tid,
                        ts,
                        cat: "ac2g",
                        name: "ac2g",
                        bp: None,
                    };
                    element(out, &mut n, &flow)?;
                }
            }
            "kernel" | "gpu_memcpy" => gpu(out, &mut n, e, ts, dur)?,
            _ => {}
        }
    }
    Ok(n)
}

fn gpu_x<A>(e: &WinEvent, tid: i128, ts: f64, dur: f64, args: A) -> X<'_, A> {
    let pid = e.get("device_id");
    X {
        ph: "X",
        cat: &e.kind,
        name: &e.name,
        pid,
        tid,
        ts,
        dur,
        args,
    }
}

fn gpu(out: &mut Vec<u8>, n: &mut u64, e: &WinEvent, ts: f64, dur: f64) -> serde_json::Result<()> {
    let (device, corr) = (e.get("device_id"), e.get("correlation_id"));
    let tid = export_tid(e.get("stream_id"));
    if e.kind == "gpu_memcpy" {
        let args = MemcpyArgs {
            device,
            context: e.get("context_id"),
            stream: e.get("stream_id"),
            correlation: corr,
            graph_id: e.get("graph_id"),
            graph_node_id: e.get("graph_node_id"),
            bytes: e.get("bytes"),
            copy_kind: copy_kind(e.get("copy_kind")),
            src_kind: memory_kind(e.get("src_kind")),
            dst_kind: memory_kind(e.get("dst_kind")),
            flags: e.get("flags"),
        };
        element(out, n, &gpu_x(e, tid, ts, dur, args))?;
    } else {
        let args = KernelArgs {
            device,
            context: e.get("context_id"),
            stream: e.get("stream_id"),
            correlation: corr,
            graph_id: e.get("graph_id"),
            graph_node_id: e.get("graph_node_id"),
        };
        element(out, n, &gpu_x(e, tid, ts, dur, args))?;
    }
    if corr != 0 {
        let flow = Flow {
            ph: "f",
            id: corr,
            pid: device,
            tid,
            ts,
            cat: "ac2g",
            name: "ac2g",
            bp: Some("e"),
        };
        element(out, n, &flow)?;
    }
    Ok(())
}
