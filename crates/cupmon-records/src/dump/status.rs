//! `cupmon_status.json`: why a process was not monitored, written by the injection
//! library into the dump directory it would have used, so that `cupmon run` can say
//! why instead of guessing.

use std::fs;
use std::io;
use std::path::Path;

use super::STATUS_FILE;

/// Why a process was not monitored, as its status file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: String,
    /// The `cupmon run` that started the process, if one did (`CUPMON_RUN_ID`).
    pub run_id: Option<String>,
}

/// Write the refusal `reason` into `dir/cupmon_status.json` (creating `dir`), by a
/// temporary file and a rename; `run_id`: the `cupmon run` that started the process.
pub fn write_refusal(dir: &Path, reason: &str, run_id: Option<&str>) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut status = serde_json::json!({
        "monitoring": false,
        "pid": std::process::id(),
        "reason": reason,
    });
    if let Some(run) = run_id {
        status["run_id"] = run.into();
    }
    let text = status.to_string();
    cupmon_files::replace_file(&dir.join(STATUS_FILE), text.as_bytes())
}

/// The refusal reason in `dir`, if the injection library wrote one (read by the rule
/// every dump file is read by: a FIFO in its place is no reason).
pub fn read_refusal(dir: &Path) -> Option<Refusal> {
    let text = cupmon_files::read_capped(&dir.join(STATUS_FILE), super::STATUS_CAP).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    Some(Refusal {
        reason: v.get("reason")?.as_str()?.to_owned(),
        run_id: v.get("run_id").and_then(|r| r.as_str()).map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("123");
        write_refusal(&dir, "no NVIDIA driver", Some("run-1")).unwrap();
        let read = read_refusal(&dir).unwrap();
        assert_eq!(read.reason, "no NVIDIA driver");
        assert_eq!(read.run_id.as_deref(), Some("run-1"));
        write_refusal(&dir, "no NVIDIA driver", None).unwrap();
        assert_eq!(read_refusal(&dir).unwrap().run_id, None);
        assert_eq!(read_refusal(tmp.path()), None);
    }
}
