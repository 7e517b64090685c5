//! Where the fake libcupti is: cargo builds it as a dependency of this crate,
//! so its `.so` lies in `target/<profile>/deps`, the directory of the test
//! binary that is running. No cargo is run from here.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::env_vars::CUPMON_FAKE_CUPTI;

/// The file name cargo gives the fake's cdylib on Linux.
const FILE_NAME: &str = "libcupmon_fake_cupti.so";

/// Path of the fake's `.so`: `$CUPMON_FAKE_CUPTI` when set, else the one beside
/// the running test binary. Panics, saying what to run, when it is missing.
pub fn fake_library_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| find().unwrap_or_else(|missing| panic!("{missing}")))
}

fn find() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(CUPMON_FAKE_CUPTI).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "{CUPMON_FAKE_CUPTI}={} is not a file: build the fake libcupti with \
                 `cargo build -p cupmon-fake-cupti` and point it at \
                 target/debug/{FILE_NAME}, or unset it",
                path.display()
            ))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("the test binary's path: {e}"))?;
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no directory", exe.display()))?;
    let path = dir.join(FILE_NAME);
    if path.is_file() {
        return Ok(path);
    }
    Err(format!(
        "the fake libcupti is not at {}: cargo builds it there for tests that \
         dev-depend on cupmon-test-support. Run the tests through cargo \
         (`cargo test -p CRATE`), or build it with `cargo build -p cupmon-fake-cupti` \
         and set {CUPMON_FAKE_CUPTI}=target/debug/{FILE_NAME}",
        path.display()
    ))
}
