//! Writing a hang record into a dump directory (a temporary file, then a rename: a
//! reader never sees half of one) and reading them back by cupmon-files' rule.

use std::io::Write;
use std::path::{Path, PathBuf};

use cupmon_files::MIB;

use crate::{HangError, HangRecord, FORMAT};

/// `hang-N.json`: a few hundred operations and threads; far below this.
pub const HANG_RECORD_CAP: u64 = 16 * MIB;
/// Records kept per dump: a job that hangs again and again does not fill the disk.
pub const MAX_RECORDS: u32 = 100;

/// The number of `hang-N.json` (`None`: another file).
fn number(name: &str) -> Option<u32> {
    name.strip_prefix("hang-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// The hang records of `dir`, by number.
pub fn hang_record_paths(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| Some((number(e.file_name().to_str()?)?, e.path())))
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// Writes `record` as the next `hang-N.json` of `dir`; returns its path.
pub fn write_hang_record(dir: &Path, record: &HangRecord) -> Result<PathBuf, HangError> {
    let next = hang_record_paths(dir)
        .iter()
        .filter_map(|p| number(p.file_name()?.to_str()?))
        .max()
        .map_or(1, |n| n + 1);
    if next > MAX_RECORDS {
        return Err(HangError::TooMany {
            dir: dir.to_owned(),
            max: MAX_RECORDS,
        });
    }
    let path = dir.join(format!("hang-{next}.json"));
    let temp = dir.join(format!(".hang-{next}.json.tmp"));
    let io = |e: std::io::Error| HangError::Write {
        path: path.clone(),
        problem: e.to_string(),
    };
    let bytes = serde_json::to_vec_pretty(record).map_err(|e| HangError::Write {
        path: path.clone(),
        problem: e.to_string(),
    })?;
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(&bytes)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&temp, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io(e));
    }
    Ok(path)
}

/// Reads one hang record.
pub fn read_hang_record(path: &Path) -> Result<HangRecord, HangError> {
    let bytes =
        cupmon_files::read_capped(path, HANG_RECORD_CAP).map_err(|e| HangError::Unreadable {
            path: path.to_owned(),
            problem: e.problem(),
        })?;
    let record: HangRecord = serde_json::from_slice(&bytes).map_err(|e| HangError::Malformed {
        path: path.to_owned(),
        problem: e.to_string(),
    })?;
    if record.format != FORMAT {
        return Err(HangError::Malformed {
            path: path.to_owned(),
            problem: format!("format {} (this cupmon reads {FORMAT})", record.format),
        });
    }
    Ok(record)
}

/// Every hang record of `dir` that reads, oldest first, and a warning for each that
/// does not.
pub fn read_hang_records(dir: &Path) -> (Vec<(PathBuf, HangRecord)>, Vec<HangError>) {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for path in hang_record_paths(dir) {
        match read_hang_record(&path) {
            Ok(r) => records.push((path, r)),
            Err(e) => problems.push(e),
        }
    }
    (records, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Trigger;

    pub(crate) fn sample() -> HangRecord {
        HangRecord {
            format: FORMAT,
            trigger: Trigger::OnDemand,
            detail: "cupmon hang-dump".into(),
            written_ns: 5,
            pid: 42,
            rank: Some(1),
            last_progress_ns: None,
            last_completed_end_ns: None,
            last_launch_ns: Some(3),
            streams: Vec::new(),
            threads: Vec::new(),
            communicators: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn records_are_numbered_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_hang_record(dir.path(), &sample()).unwrap();
        let b = write_hang_record(dir.path(), &sample()).unwrap();
        assert!(a.ends_with("hang-1.json") && b.ends_with("hang-2.json"));
        let (records, problems) = read_hang_records(dir.path());
        assert_eq!(records.len(), 2);
        assert!(problems.is_empty());
        assert_eq!(records[1].1, sample());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn a_malformed_record_is_named_and_the_others_read() {
        let dir = tempfile::tempdir().unwrap();
        write_hang_record(dir.path(), &sample()).unwrap();
        std::fs::write(dir.path().join("hang-2.json"), b"{\"format\":1,").unwrap();
        let (records, problems) = read_hang_records(dir.path());
        assert_eq!(records.len(), 1);
        let text = problems[0].to_string();
        assert!(text.contains("hang-2.json"), "{text}");
    }

    #[test]
    fn a_planted_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.json");
        std::fs::write(&outside, serde_json::to_vec(&sample()).unwrap()).unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("hang-1.json")).unwrap();
        let (records, problems) = read_hang_records(dir.path());
        assert!(records.is_empty());
        assert_eq!(problems.len(), 1);
    }
}
