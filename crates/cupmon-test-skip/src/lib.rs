//! A test that cannot run here (no oracle, no interpreter with a package, no
//! `mkfifo`) returns early, and would pass silently: cargo captures what a
//! passing test prints. [`skipped`] makes the skip visible where the person
//! running `./scripts/test.sh` sees it: a `SKIPPED` line on stderr (shown by
//! `cargo test -- --nocapture`), and a line `cargo<TAB>TEST<TAB>REASON`
//! appended to the file named by [`SKIPPED_FILE_ENV`], which `scripts/test.sh`
//! sets, then counts (as skipped, not passed) and lists at the end.

use std::io::Write;

/// The environment variable naming the file that skipped tests are listed in.
pub const SKIPPED_FILE_ENV: &str = "CUPMON_SKIPPED_FILE";

/// Record that the calling test did not run, and why (`format!`'s
/// arguments). Call it, then return from the test. The test is named by its
/// package, its test binary and libtest's name for its thread (the test's
/// path in the binary): `cupmon-trace tests: differential::x`.
#[macro_export]
macro_rules! skipped {
    ($($reason:tt)+) => {
        $crate::skipped_in(env!("CARGO_PKG_NAME"), &format!($($reason)+))
    };
}

/// [`skipped!`]'s work, for a test of package `package`.
pub fn skipped_in(package: &str, reason: &str) {
    let name = format!("{package} {}", test_name());
    let reason = one_line(reason);
    eprintln!("SKIPPED: {name}: {reason}");
    let Some(path) = std::env::var_os(SKIPPED_FILE_ENV) else {
        return;
    };
    // One write of one line to a file opened for appending: lines of tests
    // running at once, in this process or another, do not interleave.
    let line = format!("cargo\t{name}\t{reason}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        // The test still passes; the skip must not go unsaid.
        panic!(
            "{name} was skipped ({reason}) but cannot be listed in {} (${SKIPPED_FILE_ENV}): {e}",
            std::path::Path::new(&path).display()
        );
    }
}

/// `BINARY: TEST`: the test binary without cargo's hash, and libtest's
/// thread name (the test's path in its crate).
fn test_name() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| without_hash(&stem).to_owned())
        .unwrap_or_else(|| "?".to_owned());
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    format!("{binary}: {test}")
}

/// `differential-0123456789abcdef` → `differential`.
fn without_hash(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((base, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            base
        }
        _ => stem,
    }
}

/// Tabs and newlines would break the file's one-line-per-test form.
fn one_line(reason: &str) -> String {
    reason
        .split(['\n', '\r', '\t'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_hash_is_cut_from_the_binary_name() {
        assert_eq!(
            without_hash("differential-0123456789abcdef"),
            "differential"
        );
        assert_eq!(without_hash("run-fake"), "run-fake");
        assert_eq!(
            without_hash("cupmon_trace-0123456789abcdeg"),
            "cupmon_trace-0123456789abcdeg"
        );
    }

    #[test]
    fn a_reason_becomes_one_line() {
        assert_eq!(one_line("no python3\n\tat all\r\n"), "no python3 at all");
    }

    #[test]
    fn a_skip_is_named_in_the_file_with_its_reason() {
        let path = std::env::temp_dir().join(format!("cupmon-test-skip-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        // Only this test reads or sets the variable in this process; the
        // value scripts/test.sh gave is put back.
        let outer = std::env::var_os(SKIPPED_FILE_ENV);
        std::env::set_var(SKIPPED_FILE_ENV, &path);
        skipped!("no oracle\n{}", "here");
        skipped!("twice");
        match outer {
            Some(v) => std::env::set_var(SKIPPED_FILE_ENV, v),
            None => std::env::remove_var(SKIPPED_FILE_ENV),
        }
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        let fields: Vec<_> = lines[0].split('\t').collect();
        assert_eq!(fields[0], "cargo");
        assert!(
            fields[1].starts_with("cupmon-test-skip cupmon_test_skip: ")
                && fields[1].ends_with(": tests::a_skip_is_named_in_the_file_with_its_reason"),
            "{}",
            fields[1]
        );
        assert_eq!(fields[2], "no oracle here");
    }
}
