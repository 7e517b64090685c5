//! Where libcupti may be: the search order and the file-system probing behind it.
//! Pure path logic, no loading, so it is testable on a fake directory tree.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::env_vars;
use crate::error::Tried;

const FILE_PREFIX: &str = "libcupti.so";

/// Where to look for libcupti. [`SearchOptions::from_env`] gives the real search;
/// tests build one by hand to search a temporary tree.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// `CUPMON_LIBCUPTI`: the only candidate when set.
    pub explicit: Option<PathBuf>,
    /// Look for a libcupti already mapped into this process (`/proc/self/maps`).
    pub scan_loaded: bool,
    /// Toolkit roots searched first (`CUDA_HOME`, `CUDA_PATH`).
    pub cuda_homes: Vec<PathBuf>,
    /// Directory holding `cuda`, `cuda-13.0`, ... (`/usr/local`).
    pub cuda_parent: Option<PathBuf>,
    /// Python installation prefixes whose `site-packages` may hold `nvidia-cuda-cupti`.
    pub python_prefixes: Vec<PathBuf>,
    /// As a last resort, ask `python3` for its `site-packages` (spawns a process).
    pub ask_python: bool,
}

impl SearchOptions {
    /// The search cupmon does: environment variables, this process, `/usr/local`,
    /// and the Python next to it.
    pub fn from_env() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let mut python_prefixes: Vec<PathBuf> = [env_vars::VIRTUAL_ENV, env_vars::CONDA_PREFIX]
            .iter()
            .filter_map(|name| var(name))
            .collect();
        python_prefixes.extend(running_python_prefixes());
        SearchOptions {
            explicit: var(env_vars::CUPMON_LIBCUPTI),
            scan_loaded: true,
            cuda_homes: [env_vars::CUDA_HOME, env_vars::CUDA_PATH]
                .iter()
                .filter_map(|name| var(name))
                .collect(),
            cuda_parent: Some(PathBuf::from("/usr/local")),
            python_prefixes,
            ask_python: true,
        }
    }
}

/// Tries each candidate in search order with `load` until one succeeds. Returns
/// what `load` produced and the path it came from, or every place looked at.
pub(crate) fn search<T>(
    options: &SearchOptions,
    load: impl FnMut(&Path) -> Result<T, String>,
) -> Result<(T, PathBuf), Vec<Tried>> {
    let mut searcher = Searcher {
        load,
        tried: Vec::new(),
        seen: HashSet::new(),
    };
    if options.scan_loaded {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        for path in loaded_libcupti(&maps) {
            if let Some(found) = searcher.file(path) {
                return Ok(found);
            }
        }
    }
    let toolkits = cuda_toolkits(options.cuda_parent.as_deref());
    let toolkit_dirs = options
        .cuda_homes
        .iter()
        .chain(&toolkits)
        .flat_map(|root| toolkit_lib_dirs(root));
    if let Some(found) = searcher.dirs(toolkit_dirs) {
        return Ok(found);
    }
    let site_dirs: Vec<PathBuf> = options
        .python_prefixes
        .iter()
        .flat_map(|prefix| site_packages(prefix))
        .collect();
    if let Some(found) = searcher.dirs(site_dirs.iter().flat_map(|s| wheel_lib_dirs(s))) {
        return Ok(found);
    }
    if options.ask_python {
        match python_purelib() {
            Some(purelib) if !site_dirs.contains(&purelib) => {
                if let Some(found) = searcher.dirs(wheel_lib_dirs(&purelib)) {
                    return Ok(found);
                }
            }
            Some(_) => {}
            None => searcher.tried.push(Tried {
                path: "python3 -c 'import sysconfig; ...purelib'".into(),
                outcome: "no python3 to ask for its site-packages".into(),
            }),
        }
    }
    Err(searcher.tried)
}

/// The state of one search: the loader, what failed, and what was seen.
struct Searcher<F> {
    load: F,
    tried: Vec<Tried>,
    /// Canonical paths of files and directories already tried: `/usr/local/cuda`
    /// is usually a link to one of the versioned trees.
    seen: HashSet<PathBuf>,
}

impl<F> Searcher<F> {
    fn file<T>(&mut self, path: PathBuf) -> Option<(T, PathBuf)>
    where
        F: FnMut(&Path) -> Result<T, String>,
    {
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !self.seen.insert(key) {
            return None;
        }
        match (self.load)(&path) {
            Ok(value) => Some((value, path)),
            Err(outcome) => {
                self.tried.push(Tried { path, outcome });
                None
            }
        }
    }

    fn dirs<T>(&mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Option<(T, PathBuf)>
    where
        F: FnMut(&Path) -> Result<T, String>,
    {
        for dir in dirs {
            // CUDA_HOME is often one of the /usr/local/cuda* trees too.
            let key = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            if !self.seen.insert(key) {
                continue;
            }
            let files = libcupti_files(&dir);
            if files.is_empty() {
                let outcome = if dir.is_dir() {
                    "no libcupti.so* here"
                } else {
                    "no such directory"
                };
                self.tried.push(Tried {
                    path: dir.join(format!("{FILE_PREFIX}*")),
                    outcome: outcome.into(),
                });
            }
            for file in files {
                if let Some(found) = self.file(file) {
                    return Some(found);
                }
            }
        }
        None
    }
}

/// Paths of `libcupti.so*` files mapped into a process, from its `/proc/PID/maps` text.
pub(crate) fn loaded_libcupti(maps: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for line in maps.lines() {
        // Fields: address perms offset dev inode pathname; the path may hold spaces.
        let Some(path) = line.splitn(6, char::is_whitespace).nth(5).map(str::trim) else {
            continue;
        };
        let path = PathBuf::from(path);
        let is_cupti = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(FILE_PREFIX));
        if is_cupti && path.is_absolute() && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// `libcupti.so*` files in `dir`: the plain development link first (it names the
/// toolkit's default), then versioned names, newest first.
pub(crate) fn libcupti_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<OsString> = entries
        .filter_map(|entry| entry.ok().map(|e| e.file_name()))
        .filter(|name| name.to_str().is_some_and(|n| n.starts_with(FILE_PREFIX)))
        .collect();
    names.sort_by_key(|name| {
        std::cmp::Reverse(version_key(&name.to_string_lossy()[FILE_PREFIX.len()..]))
    });
    names.sort_by_key(|name| name != FILE_PREFIX);
    names.into_iter().map(|name| dir.join(name)).collect()
}

/// `cuda-13.0`, `cuda-12.8`, ..., newest first, then `cuda` (a link to one of them),
/// under `parent`.
pub(crate) fn cuda_toolkits(parent: Option<&Path>) -> Vec<PathBuf> {
    let Some(parent) = parent else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut versioned: Vec<(Vec<u64>, PathBuf)> = Vec::new();
    let mut plain = None;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "cuda" {
            plain = Some(entry.path());
        } else if let Some(version) = name
            .strip_prefix("cuda-")
            .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        {
            versioned.push((version_key(version), entry.path()));
        }
    }
    versioned.sort_by(|a, b| b.cmp(a));
    versioned
        .into_iter()
        .map(|(_, path)| path)
        .chain(plain)
        .collect()
}

/// The directories of a toolkit that hold libcupti, in the order NVIDIA's
/// layouts put it.
fn toolkit_lib_dirs(root: &Path) -> Vec<PathBuf> {
    let target = if cfg!(target_arch = "aarch64") {
        "sbsa-linux"
    } else {
        "x86_64-linux"
    };
    vec![
        root.join("lib64"),
        root.join("targets").join(target).join("lib"),
        root.join("extras/CUPTI/lib64"),
    ]
}

/// Where the `nvidia-cuda-cupti` wheels put the library inside `site-packages`
/// (12.x: `nvidia/cuda_cupti/lib`; 13.x: `nvidia/cu13/lib`).
fn wheel_lib_dirs(site_packages: &Path) -> Vec<PathBuf> {
    vec![
        site_packages.join("nvidia/cuda_cupti/lib"),
        site_packages.join("nvidia/cu13/lib"),
    ]
}

/// `PREFIX/lib*/python3.*/site-packages` directories that exist.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path().join("site-packages"))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        found.extend(dirs);
    }
    found
}

/// The prefix of the Python running this process, if it is one: taken from
/// `argv[0]` (keeps a virtual environment's prefix) and from the executable.
fn running_python_prefixes() -> Vec<PathBuf> {
    let argv0 = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .filter(|p| p.components().count() > 1);
    let exe = std::fs::read_link("/proc/self/exe").ok();
    let mut prefixes = Vec::new();
    for path in argv0.into_iter().chain(exe) {
        let is_python = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("python"));
        if let Some(prefix) = path.parent().and_then(Path::parent).filter(|_| is_python) {
            if !prefixes.iter().any(|p: &PathBuf| p == prefix) {
                prefixes.push(prefix.to_path_buf());
            }
        }
    }
    prefixes
}

fn python_purelib() -> Option<PathBuf> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(output.stdout).ok()?;
    Some(PathBuf::from(text.trim())).filter(|p| p.is_dir())
}

/// `13.0` → `[13, 0]`; `.13` → `[13]`; non-numbers sort lowest.
fn version_key(text: &str) -> Vec<u64> {
    text.split('.')
        .filter(|part| !part.is_empty())
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    #[test]
    fn maps_scan_finds_libcupti_only() {
        let maps = "\
7f00-7f01 r-xp 00000000 08:01 123 /usr/lib/libc.so.6
7f01-7f02 r-xp 00000000 08:01 124 /opt/my dir/nvidia/cu13/lib/libcupti.so.13
7f02-7f03 r--p 00001000 08:01 124 /opt/my dir/nvidia/cu13/lib/libcupti.so.13
7f03-7f04 r-xp 00000000 08:01 125 /tmp/libcupmon_fake_cupti.so
7f04-7f05 rw-p 00000000 00:00 0 [heap]
";
        assert_eq!(
            loaded_libcupti(maps),
            vec![PathBuf::from("/opt/my dir/nvidia/cu13/lib/libcupti.so.13")]
        );
    }

    #[test]
    fn toolkits_newest_first_and_files_sorted() {
        let tmp = tempfile::tempdir().unwrap();
        for dir in [
            "cuda-12.8",
            "cuda-13.0",
            "cuda-12.10",
            "cuda",
            "cudnn",
            "cuda-home",
        ] {
            std::fs::create_dir(tmp.path().join(dir)).unwrap();
        }
        let names: Vec<String> = cuda_toolkits(Some(tmp.path()))
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["cuda-13.0", "cuda-12.10", "cuda-12.8", "cuda"]);

        for file in [
            "libcupti.so.13",
            "libcupti.so.2025.3.1",
            "libcupti.so",
            "libcuptiX.a",
        ] {
            touch(&tmp.path().join("lib").join(file));
        }
        let files: Vec<String> = libcupti_files(&tmp.path().join("lib"))
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            files,
            ["libcupti.so", "libcupti.so.2025.3.1", "libcupti.so.13"]
        );
    }

    #[test]
    fn search_order_and_report() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let usr_local = tmp.path().join("usr-local");
        let venv = tmp.path().join("venv");
        let in_toolkit = usr_local.join("cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13");
        let in_wheel = venv.join("lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
        touch(&in_toolkit);
        touch(&in_wheel);
        std::fs::create_dir_all(&home).unwrap();
        let options = SearchOptions {
            cuda_homes: vec![home.clone()],
            cuda_parent: Some(usr_local),
            python_prefixes: vec![venv],
            ..SearchOptions::default()
        };

        // Everything fails to load: every place is reported, toolkit before wheel.
        let tried = search(&options, |_| Err::<(), _>("refused".to_string())).unwrap_err();
        let paths: Vec<String> = tried.iter().map(|t| t.path.display().to_string()).collect();
        assert_eq!(
            paths[0],
            home.join("lib64/libcupti.so*").display().to_string()
        );
        let toolkit_at = paths
            .iter()
            .position(|p| p == &in_toolkit.display().to_string())
            .unwrap();
        let wheel_at = paths
            .iter()
            .position(|p| p == &in_wheel.display().to_string())
            .unwrap();
        assert!(toolkit_at < wheel_at, "{paths:#?}");
        assert_eq!(tried[toolkit_at].outcome, "refused");

        // The first loadable candidate wins.
        let (_, path) = search(&options, |p| {
            if p == in_wheel {
                Ok(())
            } else {
                Err("no".into())
            }
        })
        .unwrap();
        assert_eq!(path, in_wheel);
    }
}
