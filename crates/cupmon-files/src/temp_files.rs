//! The temporary files cupmon has on disk right now, so that an interrupted
//! command (Ctrl-C, SIGTERM) removes them before it exits: the temporary file
//! beside an output grows as large as the output (gigabytes for a big merge),
//! and it is hidden (`.NAME.XXXXXX.tmp`), so nobody would find it.
//!
//! The signal side is the binary's (it calls [`remove_live_temp_files`] from
//! its handler); this module only keeps the list.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

#[derive(Debug)]
struct Live {
    paths: Vec<PathBuf>,
    /// Set by the clean-up: the process is exiting, so no new temporary file
    /// may appear after it.
    closed: bool,
}

/// A list of live temporary paths (one per process, [`REGISTRY`]; tests make their own).
#[derive(Debug)]
struct Registry(Mutex<Live>);

static REGISTRY: Registry = Registry::new();

impl Registry {
    const fn new() -> Self {
        Self(Mutex::new(Live {
            paths: Vec::new(),
            closed: false,
        }))
    }

    fn live(&self) -> MutexGuard<'_, Live> {
        // A panic elsewhere must not stop the clean-up.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn create<T>(
        &'static self,
        create: impl FnOnce() -> io::Result<T>,
        path_of: impl FnOnce(&T) -> &Path,
    ) -> io::Result<(T, LiveTemp)> {
        let mut live = self.live();
        if live.closed {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "cupmon was interrupted and is exiting",
            ));
        }
        let made = create()?;
        let path = path_of(&made).to_path_buf();
        live.paths.push(path.clone());
        Ok((
            made,
            LiveTemp {
                registry: self,
                path,
            },
        ))
    }

    fn remove_all(&self) -> usize {
        let mut live = self.live();
        live.closed = true;
        let mut removed = 0;
        for path in live.paths.drain(..) {
            let gone = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed += usize::from(gone.is_ok());
        }
        removed
    }
}

/// A registered temporary path; dropping it unregisters the path (whoever
/// owns the file removes or renames it).
#[derive(Debug)]
pub struct LiveTemp {
    registry: &'static Registry,
    path: PathBuf,
}

impl Drop for LiveTemp {
    fn drop(&mut self) {
        let mut live = self.registry.live();
        if let Some(i) = live.paths.iter().position(|p| *p == self.path) {
            live.paths.swap_remove(i);
        }
    }
}

/// Create a temporary file (or directory) with `create` and register the
/// path that `path_of` gives, under one lock, so that a clean-up running at
/// the same time finds either nothing on disk or a registered path.
pub fn create_live_temp<T>(
    create: impl FnOnce() -> io::Result<T>,
    path_of: impl FnOnce(&T) -> &Path,
) -> io::Result<(T, LiveTemp)> {
    REGISTRY.create(create, path_of)
}

/// Remove every registered temporary file and directory (for a signal
/// handler, before it exits); later [`create_live_temp`] calls fail.
/// Returns how many were removed.
pub fn remove_live_temp_files() -> usize {
    REGISTRY.remove_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_paths_are_removed_and_dropped_ones_forgotten() {
        let registry: &'static Registry = Box::leak(Box::new(Registry::new()));
        let dir = tempfile::tempdir().expect("tempdir");
        let make = |name: &str| {
            let p = dir.path().join(name);
            move || std::fs::write(&p, b"x").map(|()| p)
        };
        let (_, done) = registry.create(make("done"), |p| p).expect("create");
        drop(done);
        let (_, _kept) = registry.create(make("kept"), |p| p).expect("create");
        let (sub, _sub) = registry
            .create(|| tempfile::tempdir_in(dir.path()).map(|d| d.keep()), |p| p)
            .expect("create dir");
        std::fs::write(sub.join("inside"), b"x").expect("write");
        assert_eq!(registry.remove_all(), 2);
        assert!(!dir.path().join("kept").exists());
        assert!(!sub.exists());
        assert!(dir.path().join("done").exists(), "unregistered: left alone");
        let late = registry.create(make("late"), |p| p);
        assert_eq!(late.expect_err("closed").kind(), io::ErrorKind::Interrupted);
        assert!(!dir.path().join("late").exists());
    }
}
