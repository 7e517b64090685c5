//! A libcupti whose version cupmon has no record layouts for is refused at load,
//! naming the version, the library and the supported range, never used. The fake
//! reports the version `CUPMON_FAKE_CUPTI_VERSION` names, read when cupmon loads it;
//! the fake is shared by every test of this binary, so each version is loaded in a
//! process of its own (this binary again, running only the child test).

use std::process::Command;

use cupmon_cupti::{Cupti, LoadError};
use cupmon_test_support::{fake_library_path, fake_load_options, FAKE_VERSION_ENV};

/// Set in the child's environment: the child test runs only where it is set.
const CHILD: &str = "CUPMON_TEST_UNSUPPORTED_VERSION_CHILD";
const CHILD_TEST: &str = "unsupported_version::child_loads_the_fake_at_the_version_set";

/// Runs the child test with the fake reporting `api`.
fn load_in_child(api: u32) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(&exe)
        .args([CHILD_TEST, "--exact", "--ignored", "--test-threads=1"])
        .env(CHILD, "1")
        .env(FAKE_VERSION_ENV, api.to_string())
        .output()
        .expect("running the test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{CHILD_TEST} with API version {api} failed or did not run:\n{stdout}\n{stderr}"
    );
}

#[test]
fn cupti_older_than_12_0_is_refused_at_load() {
    load_in_child(17);
}

#[test]
fn cupti_newer_than_13_5_is_refused_at_load() {
    load_in_child(130_600);
}

#[test]
fn the_unreleased_cupti_12_7_is_refused_at_load() {
    load_in_child(25);
}

#[test]
fn cupti_12_4_loads() {
    load_in_child(22);
}

#[test]
#[ignore = "run in a fresh process by the unsupported_version tests"]
fn child_loads_the_fake_at_the_version_set() {
    let Some(api) = std::env::var(FAKE_VERSION_ENV)
        .ok()
        .filter(|_| std::env::var_os(CHILD).is_some())
        .and_then(|v| v.parse::<u32>().ok())
    else {
        eprintln!(
            "SKIPPED: {CHILD_TEST} runs only in a process the unsupported_version tests start"
        );
        return;
    };
    let supported = cupmon_records::Layout::for_api_version(api).is_ok();
    match Cupti::load_with(&fake_load_options()) {
        Ok(cupti) => {
            assert!(supported, "API version {api} was loaded");
            assert_eq!(cupti.version(), api);
        }
        Err(error) => {
            assert!(!supported, "API version {api} was refused: {error}");
            assert!(
                matches!(error, LoadError::UnsupportedVersion { .. }),
                "{error:?}"
            );
            let text = error.to_string();
            let path = fake_library_path().display().to_string();
            for part in [
                path.as_str(),
                &format!("API version {api}"),
                "it decodes CUPTI 12.0-13.5 (cuptiGetVersion API versions 18-24, 26-28, \
                 130000-130599)",
                "cupmon does not monitor with this libcupti; set CUPMON_LIBCUPTI=",
                "(or --libcupti)",
            ] {
                assert!(text.contains(part), "{part:?} not in: {text}");
            }
        }
    }
}
