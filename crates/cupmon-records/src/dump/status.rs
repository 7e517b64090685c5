//! `cupmon_status.json`: why a process was not monitored, written by the injection
//! library into the dump directory it would have used, so that `cupmon run` can say
//! why instead of guessing.

use std::fs;
use std::io;
use std::path::Path;

use super::STATUS_FILE;

/// Write the refusal `reason` into `dir/cupmon_status.json` (creating `dir`), by a
/// temporary file and a rename.
pub fn write_refusal(dir: &Path, reason: &str) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let text = serde_json::json!({
        "monitoring": false,
        "pid": std::process::id(),
        "reason": reason,
    })
    .to_string();
    let tmp = dir.join(format!(".{STATUS_FILE}.tmp"));
    fs::write(&tmp, text)?;
    fs::rename(&tmp, dir.join(STATUS_FILE))
}

/// The refusal reason in `dir`, if the injection library wrote one (read by the rule
/// every dump file is read by: a FIFO in its place is no reason).
pub fn read_refusal(dir: &Path) -> Option<String> {
    let text = cupmon_files::read_capped(&dir.join(STATUS_FILE), super::STATUS_CAP).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    v.get("reason")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("123");
        write_refusal(&dir, "no NVIDIA driver").unwrap();
        assert_eq!(read_refusal(&dir).as_deref(), Some("no NVIDIA driver"));
        assert_eq!(read_refusal(tmp.path()), None);
    }
}
