//! What a checked peer may name: its own dump directory (the one its control file
//! was found in) and the window files inside it. A control file copied into another
//! directory, or an answer naming a file elsewhere (`/root/secret`, a link out of
//! the dump directory, `../`), would otherwise make `cupmon window` copy that file
//! into a combined trace other users can read.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::{Found, LastWindow, ProcessStatus};

#[derive(Debug, thiserror::Error)]
pub enum NotItsOwn {
    #[error(
        "process {pid} says its dump directory is {says}, but its control file is in {found}; \
         refused (a control file copied or planted there?)"
    )]
    OtherDumpDir {
        pid: u32,
        says: String,
        found: PathBuf,
    },
    #[error("the answer is from process {says}, not {pid}; refused")]
    OtherPid { pid: u32, says: u32 },
    #[error("{file}: a path with `..` in it; refused")]
    ParentDir { file: String },
    #[error("{file}: outside the dump directory {dump_dir} of process {pid}; refused")]
    Outside {
        pid: u32,
        file: String,
        dump_dir: PathBuf,
    },
    #[error("{file}: {err}")]
    Unreadable { file: String, err: std::io::Error },
}

impl Found {
    /// `status` (from this process's checked peer) is of this process, whose dump
    /// directory is the one its control file is in.
    pub fn check_status(&self, status: &ProcessStatus) -> Result<(), NotItsOwn> {
        let pid = self.control.pid;
        if status.pid != pid {
            return Err(NotItsOwn::OtherPid {
                pid,
                says: status.pid,
            });
        }
        let other = || NotItsOwn::OtherDumpDir {
            pid,
            says: status.dump_dir.clone(),
            found: self.dump_dir.clone(),
        };
        let says = std::fs::metadata(self.as_seen_by_it(&status.dump_dir)).map_err(|_| other())?;
        let found = std::fs::metadata(&self.dump_dir).map_err(|_| other())?;
        if (says.dev(), says.ino()) != (found.dev(), found.ino()) {
            return Err(other());
        }
        Ok(())
    }

    /// The file an answer of this process names (`window-N.json`, its trace), as a
    /// path with no link left in it, when it lies inside the dump directory.
    pub fn own_file(&self, file: &str) -> Result<PathBuf, NotItsOwn> {
        let path = Path::new(file);
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(NotItsOwn::ParentDir { file: file.into() });
        }
        let unreadable = |err| NotItsOwn::Unreadable {
            file: file.into(),
            err,
        };
        let dump_dir = std::fs::canonicalize(&self.dump_dir).map_err(unreadable)?;
        let real = std::fs::canonicalize(self.as_seen_by_it(file)).map_err(unreadable)?;
        if real == dump_dir || !real.starts_with(&dump_dir) {
            return Err(NotItsOwn::Outside {
                pid: self.control.pid,
                file: file.into(),
                dump_dir,
            });
        }
        Ok(real)
    }

    /// The files of a window this process says it wrote ([`Self::own_file`] each):
    /// `(window_json, trace)`.
    pub fn own_window(&self, w: &LastWindow) -> Result<(PathBuf, Option<PathBuf>), NotItsOwn> {
        let json = self.own_file(&w.window_json)?;
        let trace = w.trace.as_deref().map(|t| self.own_file(t)).transpose()?;
        Ok((json, trace))
    }

    /// A path the process wrote: a relative one is relative to its working directory.
    fn as_seen_by_it(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            PathBuf::from(format!("/proc/{}/cwd", self.control.pid)).join(path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ControlFile;
    use std::os::unix::fs::symlink;

    fn found(dump_dir: &Path) -> Found {
        Found {
            dump_dir: dump_dir.to_path_buf(),
            control: ControlFile {
                socket: dump_dir.join("control.sock"),
                pid: std::process::id(),
                started: None,
            },
            alive: true,
        }
    }

    /// Issue 28: root's `cupmon window` copied a trace a peer named from a 0700
    /// directory into the combined trace.
    #[test]
    fn window_file_outside_the_dump_dir_is_refused() {
        let run = tempfile::tempdir().unwrap();
        let dump = run.path().join("rank0-1-x");
        let secret = run.path().join("secret");
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::create_dir(&dump).unwrap();
        std::fs::write(secret.join("t.json"), b"{}").unwrap();
        std::fs::write(dump.join("window-0.json"), b"{}").unwrap();
        symlink(secret.join("t.json"), dump.join("window-1.json")).unwrap();
        symlink(&secret, dump.join("sub")).unwrap();
        let f = found(&dump);
        let inside = f.own_file(dump.join("window-0.json").to_str().unwrap());
        assert_eq!(
            inside.unwrap(),
            std::fs::canonicalize(dump.join("window-0.json")).unwrap()
        );
        let d = dump.display();
        for (file, why) in [
            (secret.join("t.json").display().to_string(), "outside"),
            (format!("{d}/window-1.json"), "outside"),
            (format!("{d}/sub/t.json"), "outside"),
            (format!("{d}/../secret/t.json"), "`..`"),
            (format!("{d}/window-0.json/.."), "`..`"),
            (d.to_string(), "outside"),
            ("/etc/passwd".into(), "outside"),
            (format!("{d}/missing.json"), "No such file"),
        ] {
            let err = f.own_file(&file).unwrap_err().to_string();
            assert!(err.contains(why) && err.contains(&file), "{file}: {err}");
        }
    }

    #[test]
    fn a_status_naming_another_dump_dir_or_pid_is_refused() {
        let run = tempfile::tempdir().unwrap();
        let (real, planted) = (run.path().join("real"), run.path().join("planted"));
        std::fs::create_dir(&real).unwrap();
        std::fs::create_dir(&planted).unwrap();
        let status = ProcessStatus {
            pid: std::process::id(),
            dump_dir: real.display().to_string(),
            ..ProcessStatus::default()
        };
        found(&real).check_status(&status).unwrap();
        let err = found(&planted).check_status(&status).unwrap_err();
        assert!(matches!(err, NotItsOwn::OtherDumpDir { .. }), "{err}");
        let other = ProcessStatus {
            pid: 1,
            ..status.clone()
        };
        let err = found(&real).check_status(&other).unwrap_err();
        assert!(matches!(err, NotItsOwn::OtherPid { says: 1, .. }), "{err}");
    }
}
