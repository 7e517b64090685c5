//! What crosses the channel: one request line, one response line, JSON.

use serde::{Deserialize, Serialize};

/// A request to a monitored process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// What the process is doing ([`ProcessStatus`]).
    Status,
    /// Open a trace window; with `steps`, the process closes it itself after that
    /// many steps (`cupmon.step()` calls, torch.profiler steps under cupmon.torch).
    StartWindow {
        /// Who asks, shown to whoever finds the window already open.
        owner: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steps: Option<u64>,
    },
    /// Close the open window and write its files.
    EndWindow,
    /// Write a hang record into the dump now (`cupmon hang-dump`).
    HangDump {
        /// Who asks, written into the record.
        owner: String,
    },
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Response {
    Status(Box<ProcessStatus>),
    WindowStarted {
        start_unix_ns: u64,
    },
    WindowWritten(LastWindow),
    /// The hang record written (its path, inside the dump directory).
    HangRecorded {
        path: String,
    },
    /// The request failed; `message` says why (e.g. a window is already open, and who
    /// opened it).
    Error {
        message: String,
    },
}

/// A monitored process, as `cupmon status` shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessStatus {
    pub pid: u32,
    #[serde(default)]
    pub rank: Option<i64>,
    #[serde(default)]
    pub command: Vec<String>,
    pub dump_dir: String,
    pub started_unix_ns: u64,
    pub uptime_s: f64,
    /// Kernels per second over the last seconds (flush periods).
    pub kernels_per_s: f64,
    pub records: u64,
    pub dropped_records: u64,
    /// Bytes the dump directory holds now.
    pub dump_bytes: u64,
    /// The dump's disk budget, when it has one.
    #[serde(default)]
    pub budget_bytes: Option<u64>,
    /// Kernels launched (cupmon's launch counter); `None` when not counted, or from
    /// an older cupmon (`launches_not_counted` says which).
    #[serde(default)]
    pub kernels_launched: Option<u64>,
    #[serde(default)]
    pub launches_not_counted: Option<String>,
    /// Kernels launched that were neither recorded nor counted as dropped.
    #[serde(default)]
    pub kernels_unaccounted: Option<u64>,
    /// Actions cupmon took to get a stalled CUPTI delivering again, and the gaps in
    /// CUPTI's delivery seen so far (while none is seen, kernels not recorded yet are
    /// taken to be in flight).
    #[serde(default)]
    pub recoveries: u64,
    #[serde(default)]
    pub delivery_gaps: u64,
    pub window: WindowStatus,
    pub windows_written: u32,
    #[serde(default)]
    pub last_window: Option<LastWindow>,
}

/// The state of the process's trace window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowStatus {
    pub open: bool,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub since_unix_ns: Option<u64>,
    /// Steps left before the process closes it itself.
    #[serde(default)]
    pub steps_left: Option<u64>,
}

/// The files of the last window a process wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastWindow {
    pub number: u32,
    pub window_json: String,
    /// The trace file, from an older cupmon that wrote it in the process; today's
    /// writes only the JSON and whoever closed the window makes the trace.
    #[serde(default)]
    pub trace: Option<String>,
    pub events: u64,
    /// How the process was asked to have its traces written (`json`, `pftrace`:
    /// its CUPMON_TRACE_FORMAT); `None` from an older cupmon.
    #[serde(default)]
    pub trace_format: Option<String>,
}

/// A request line as the server reads it; `Err` says why it is not one.
pub fn parse_request(line: &[u8]) -> Result<Request, String> {
    serde_json::from_slice(line).map_err(|e| format!("not a request: {e}"))
}

/// An answer line as the client reads it; `Err` says why it is not one.
pub fn parse_response(line: &[u8]) -> Result<Response, String> {
    serde_json::from_slice(line).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_read_as_they_are_written() {
        let r = Request::StartWindow {
            owner: "cupmon window".into(),
            steps: Some(3),
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"op":"start_window","owner":"cupmon window","steps":3}"#
        );
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), r);
        assert_eq!(
            serde_json::from_str::<Request>(r#"{"op":"status"}"#).unwrap(),
            Request::Status
        );
        assert!(serde_json::from_str::<Request>(r#"{"op":"format_disk"}"#).is_err());
    }
}
