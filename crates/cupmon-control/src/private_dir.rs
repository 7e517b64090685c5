//! The one rule for a directory cupmon makes outside the output directory: the control
//! socket's fallback under `$XDG_RUNTIME_DIR` or `/tmp`, where another user may have
//! been first. It is made by one `mkdir` at mode 0700 (never `create_dir_all`, which
//! walks through whatever is planted on the way), opened without following a link, and
//! used only when it is a real directory of the effective user, mode 0700. A directory
//! found there that is anything else is refused, never repaired: a chmod by path would
//! follow a planted link (`/tmp/cupmon-0 -> /etc`) and change its target.

use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::libc;

/// The only mode a private directory may have.
pub const PRIVATE_MODE: u32 = 0o700;

#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
    #[error("cannot create the private directory {path}: {err}")]
    Create { path: PathBuf, err: std::io::Error },
    #[error(
        "{path}: {what}; refused (it must be a directory of uid {euid}, mode 0700; another \
         user may have made it: remove it, or give a shorter output directory)"
    )]
    Refused {
        path: PathBuf,
        what: String,
        euid: u32,
    },
}

/// Make `path` (its parent must exist) a directory only the effective user can
/// enter, or check that the one there is one; `Err` when it cannot be trusted.
pub fn private_dir(path: &Path) -> Result<PathBuf, PrivateDirError> {
    let euid = nix::unistd::geteuid().as_raw();
    let refused = |what: String| PrivateDirError::Refused {
        path: path.to_path_buf(),
        what,
        euid,
    };
    let created = match DirBuilder::new().mode(PRIVATE_MODE).create(path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(err) => {
            return Err(PrivateDirError::Create {
                path: path.to_path_buf(),
                err,
            })
        }
    };
    // O_NOFOLLOW: a link in the last component fails (ELOOP) instead of being entered.
    let dir = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|err| match err.raw_os_error() {
            // A link fails with ENOTDIR (O_DIRECTORY) or ELOOP (O_NOFOLLOW): say which.
            Some(libc::ELOOP | libc::ENOTDIR) => match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => refused("a symbolic link".into()),
                _ => refused("not a directory".into()),
            },
            _ => PrivateDirError::Create {
                path: path.to_path_buf(),
                err,
            },
        })?;
    // fstat of what was opened: the checks see the directory the socket goes into.
    let meta = dir.metadata().map_err(|err| PrivateDirError::Create {
        path: path.to_path_buf(),
        err,
    })?;
    if meta.uid() != euid {
        return Err(refused(format!("owned by uid {}", meta.uid())));
    }
    let mode = meta.mode() & 0o7777;
    if mode != PRIVATE_MODE {
        if !created {
            return Err(refused(format!("mode {mode:04o}")));
        }
        // Ours, just made, narrowed by the umask: set through the descriptor (fchmod),
        // never through the path.
        dir.set_permissions(std::fs::Permissions::from_mode(PRIVATE_MODE))
            .map_err(|err| PrivateDirError::Create {
                path: path.to_path_buf(),
                err,
            })?;
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    #[test]
    fn a_new_directory_is_made_0700_and_an_existing_good_one_is_used() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("cupmon-x");
        assert_eq!(private_dir(&dir).unwrap(), dir);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(private_dir(&dir).unwrap(), dir, "the same again");
    }

    /// Issue 28: `/tmp/cupmon-0 -> /etc` made root's jobs chmod /etc to 0700.
    #[test]
    fn symlinked_fallback_dir_is_refused_and_its_target_not_chmodded() {
        let base = tempfile::tempdir().unwrap();
        let victim = base.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).unwrap();
        let planted = base.path().join("cupmon-0");
        symlink(&victim, &planted).unwrap();
        let dangling = base.path().join("cupmon-1");
        symlink(base.path().join("nowhere"), &dangling).unwrap();
        let file = base.path().join("cupmon-2");
        std::fs::write(&file, b"").unwrap();
        for (path, what) in [
            (&planted, "a symbolic link"),
            (&dangling, "a symbolic link"),
            (&file, "not a directory"),
        ] {
            let err = private_dir(path).unwrap_err().to_string();
            assert!(err.contains(what), "{err}");
            assert!(err.contains(&path.display().to_string()), "{err}");
        }
        assert_eq!(mode(&victim), 0o755, "the link's target is untouched");
        assert!(
            !base.path().join("nowhere").exists(),
            "nothing made through it"
        );
    }

    #[test]
    fn fallback_dir_with_a_wider_mode_is_refused_not_repaired() {
        let base = tempfile::tempdir().unwrap();
        for m in [0o755, 0o777, 0o1700, 0o500] {
            let dir = base.path().join(format!("cupmon-{m:o}"));
            std::fs::create_dir(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(m)).unwrap();
            let err = private_dir(&dir).unwrap_err().to_string();
            assert!(err.contains(&format!("mode {m:04o}")), "{err}");
            assert_eq!(mode(&dir), m, "left as found");
        }
    }

    #[test]
    fn fallback_dir_owned_by_another_uid_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("cupmon-0");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        if let Err(e) = std::os::unix::fs::chown(&dir, Some(65534), Some(65534)) {
            crate::skipped(
                "fallback_dir_owned_by_another_uid_is_refused",
                &format!("cannot give a directory to uid 65534 ({e}); needs root"),
            );
            return;
        }
        let err = private_dir(&dir).unwrap_err().to_string();
        assert!(err.contains("owned by uid 65534"), "{err}");
    }
}
