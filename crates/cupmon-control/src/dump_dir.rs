//! The dump directory of one process under an output directory: its name, made
//! unique by the start time and a counter.
//!
//! A pid alone is not unique: containers run their program as pid 1 on a
//! persistent volume, and pids are reused. A second process with the pid of an
//! earlier one gets a directory of its own and never touches the earlier dump.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use cupmon_config::time_spec::civil_from_days;

/// The most counter suffixes tried before giving up (a directory full of dumps
/// of one pid started in the same second).
const MAX_SUFFIX: u32 = 1000;

#[derive(Debug, thiserror::Error)]
pub enum DumpDirError {
    #[error("cannot create the output directory {path}: {err}")]
    Output { path: PathBuf, err: std::io::Error },
    #[error("cannot create the dump directory {path}: {err}")]
    Create { path: PathBuf, err: std::io::Error },
    #[error(
        "{output}: {MAX_SUFFIX} dump directories named {name}[-N] exist already; remove old ones"
    )]
    Exhausted { output: PathBuf, name: String },
}

/// `<pid>-<YYYYmmddTHHMMSSZ>`, or `rank<R>-<pid>-<YYYYmmddTHHMMSSZ>` in a distributed
/// job: `started` in UTC, so that names sort the same wherever they are read. A rank
/// is kept to letters, digits, `_` and `.` (it comes from the environment).
pub fn dump_dir_name(rank: Option<&str>, pid: u32, started: SystemTime) -> String {
    let stamp = utc_stamp(started);
    match rank.filter(|r| !r.is_empty()) {
        Some(rank) => {
            let rank: String = rank
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("rank{rank}-{pid}-{stamp}")
        }
        None => format!("{pid}-{stamp}"),
    }
}

/// Create a new dump directory under `output` (created if missing) and return it:
/// [`dump_dir_name`], or that name with `-1`, `-2`, ... when it exists. Each try is
/// one `mkdir`, so two processes never get the same directory and an existing one
/// is never reused.
pub fn create_dump_dir(
    output: &Path,
    rank: Option<&str>,
    pid: u32,
    started: SystemTime,
) -> Result<PathBuf, DumpDirError> {
    std::fs::create_dir_all(output).map_err(|err| DumpDirError::Output {
        path: output.to_path_buf(),
        err,
    })?;
    let name = dump_dir_name(rank, pid, started);
    for n in 0..MAX_SUFFIX {
        let path = if n == 0 {
            output.join(&name)
        } else {
            output.join(format!("{name}-{n}"))
        };
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(DumpDirError::Create { path, err }),
        }
    }
    Err(DumpDirError::Exhausted {
        output: output.to_path_buf(),
        name,
    })
}

/// `YYYYmmddTHHMMSSZ` of a time (the epoch for times before it).
fn utc_stamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, day_secs) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        day_secs / 3600,
        day_secs / 60 % 60,
        day_secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn names_carry_the_pid_the_rank_and_the_utc_start() {
        // 2026-12-01 09:30:05 UTC.
        let t = at(1_796_117_405);
        assert_eq!(dump_dir_name(None, 4242, t), "4242-20261201T093005Z");
        assert_eq!(
            dump_dir_name(Some("3"), 4242, t),
            "rank3-4242-20261201T093005Z"
        );
        assert_eq!(dump_dir_name(Some(""), 1, at(0)), "1-19700101T000000Z");
        assert_eq!(
            dump_dir_name(Some("../x"), 7, at(951_782_400)),
            "rank.._x-7-20000229T000000Z",
            "no path separator from the environment; a leap day"
        );
    }

    #[test]
    fn a_second_process_with_the_same_pid_and_second_gets_a_new_directory() {
        let out = tempfile::tempdir().unwrap();
        let t = at(1_796_117_405);
        let first = create_dump_dir(out.path(), None, 1, t).unwrap();
        std::fs::write(first.join("cupti_monitor_meta.bin"), b"first").unwrap();
        let second = create_dump_dir(out.path(), None, 1, t).unwrap();
        let third = create_dump_dir(out.path(), None, 1, t).unwrap();
        assert_eq!(first.file_name().unwrap(), "1-20261201T093005Z");
        assert_eq!(second.file_name().unwrap(), "1-20261201T093005Z-1");
        assert_eq!(third.file_name().unwrap(), "1-20261201T093005Z-2");
        assert_eq!(
            std::fs::read(first.join("cupti_monitor_meta.bin")).unwrap(),
            b"first",
            "the first dump is untouched"
        );
        assert_eq!(std::fs::read_dir(&second).unwrap().count(), 0);
    }

    #[test]
    fn a_missing_output_directory_is_created_and_a_file_in_the_way_is_named() {
        let out = tempfile::tempdir().unwrap();
        let nested = out.path().join("a/b");
        let dir = create_dump_dir(&nested, Some("0"), 9, at(0)).unwrap();
        assert!(dir.is_dir() && dir.starts_with(&nested));
        let file = out.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let err = create_dump_dir(&file, None, 9, at(0))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot create the output directory"), "{err}");
        assert!(err.contains("file"), "{err}");
    }
}
