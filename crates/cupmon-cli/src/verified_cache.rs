//! Where `stats` and `report` keep the marks of the segments they verified
//! (`cupmon_records::digest::remember_verified_segments_in`): `cupmon-verified` in the
//! user's cache directory (`$XDG_CACHE_HOME`, else `$HOME/.cache`), made and checked by
//! the one rule for directories outside the output (`cupmon_control::private_dir`:
//! mode 0700, of the effective user). Where there is none (no cache directory), or it
//! cannot be trusted, there are no marks: every segment counted from its digest is
//! verified at every run (slower on large dumps, never wrong; nothing is lost, so
//! nothing is said).

use std::path::PathBuf;

/// Set the marks' directory for this process, if one can be had.
pub fn remember_verified_segments() {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(home) => PathBuf::from(home).join(".cache"),
            None => return,
        },
    };
    if !base.is_dir() {
        return;
    }
    if let Ok(dir) = cupmon_control::private_dir(&base.join("cupmon-verified")) {
        cupmon_records::digest::remember_verified_segments_in(dir);
    }
}
