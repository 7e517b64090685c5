//! One rank's events under one process: pids and tids mapped so that CPU threads keep
//! their ids and GPU streams become `GPU d stream s` threads of the rank's process.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Value};

/// GPU stream `s` of device `d` becomes thread `GPU_TID * (d + 1) + s`.
const GPU_TID: i64 = 1_000_000_000;
/// Flow ids of rank `r` become `r * FLOW_SPACE + id`.
const FLOW_SPACE: i64 = 1 << 40;

pub(super) struct RankRemap {
    rank: i64,
    /// Pids whose events run on a GPU (Kineto: pid = device).
    gpu_pids: BTreeSet<i64>,
    /// (pid, tid) of the input -> thread name, for the metadata.
    threads: HashMap<(i64, i64), String>,
}

fn is_gpu_category(cat: &str) -> bool {
    matches!(
        cat,
        "kernel" | "gpu_memcpy" | "gpu_memset" | "gpu_user_annotation" | "gpu_memory"
    )
}

impl RankRemap {
    pub fn new(rank: i64, events: &Value) -> Self {
        let mut gpu_pids = BTreeSet::new();
        let mut threads = HashMap::new();
        for e in events.as_array().into_iter().flatten() {
            let pid = e.get("pid").and_then(Value::as_i64);
            let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
            let label = e
                .pointer("/args/labels")
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(pid) = pid {
                if is_gpu_category(cat) || label.starts_with("GPU") {
                    gpu_pids.insert(pid);
                }
                if e.get("name").and_then(Value::as_str) == Some("thread_name") {
                    if let (Some(tid), Some(name)) = (
                        e.get("tid").and_then(Value::as_i64),
                        e.pointer("/args/name").and_then(Value::as_str),
                    ) {
                        threads.insert((pid, tid), name.trim().to_owned());
                    }
                }
            }
        }
        Self {
            rank,
            gpu_pids,
            threads,
        }
    }

    fn tid(&self, pid: i64, tid: i64) -> i64 {
        if self.gpu_pids.contains(&pid) {
            GPU_TID * (pid + 1) + tid
        } else if pid < 0 {
            // Kineto's overhead process (-1): a thread of its own.
            GPU_TID * 9 + tid
        } else {
            tid
        }
    }

    /// The rank's process name and sort index, and a name and sort index for every
    /// thread (GPU streams after the CPU threads).
    pub fn metadata(&self) -> Vec<Value> {
        let r = self.rank;
        let mut out = vec![
            json!({"ph": "M", "name": "process_name", "pid": r, "tid": 0, "args": {"name": format!("rank {r}")}}),
            json!({"ph": "M", "name": "process_labels", "pid": r, "tid": 0, "args": {"labels": format!("rank {r}")}}),
            json!({"ph": "M", "name": "process_sort_index", "pid": r, "tid": 0, "args": {"sort_index": r}}),
        ];
        let mut names: Vec<(&(i64, i64), &String)> = self.threads.iter().collect();
        names.sort();
        for (&(pid, tid), name) in names {
            let new_tid = self.tid(pid, tid);
            let name = if self.gpu_pids.contains(&pid) {
                format!("GPU {pid} {name}")
            } else {
                name.clone()
            };
            out.push(json!({"ph": "M", "name": "thread_name", "pid": r, "tid": new_tid, "args": {"name": name}}));
            out.push(json!({"ph": "M", "name": "thread_sort_index", "pid": r, "tid": new_tid, "args": {"sort_index": new_tid}}));
        }
        out
    }

    /// `event` of this rank, moved to the rank's process and shifted by `shift_us`;
    /// `None` for the metadata it replaces and for the per-trace profiler span.
    pub fn event(&self, event: &Value, shift_us: f64) -> Option<Value> {
        let mut e = event.clone();
        let obj = e.as_object_mut()?;
        if obj.get("ph").and_then(Value::as_str) == Some("M") {
            return None;
        }
        match obj.get("pid") {
            Some(Value::Number(n)) => {
                let pid = n.as_i64()?;
                let tid = obj.get("tid").and_then(Value::as_i64).unwrap_or(0);
                obj.insert("tid".into(), json!(self.tid(pid, tid)));
                obj.insert("pid".into(), json!(self.rank));
            }
            // Kineto's "Spans"/"Traces" rows: one set per rank, named after it.
            Some(Value::String(s)) => {
                let pid = format!("rank {} {s}", self.rank);
                obj.insert("pid".into(), json!(pid));
            }
            _ => {}
        }
        if let Some(ts) = obj.get("ts").and_then(Value::as_f64) {
            obj.insert("ts".into(), json!(ts + shift_us));
        }
        if matches!(obj.get("ph").and_then(Value::as_str), Some("s" | "f" | "t")) {
            if let Some(id) = obj.get("id").and_then(Value::as_i64) {
                obj.insert("id".into(), json!(self.rank * FLOW_SPACE + id));
            }
        }
        Some(e)
    }
}
