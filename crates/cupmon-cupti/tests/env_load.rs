//! `Cupti::load()` configured by environment variables. It needs a process of
//! its own: it checks that nothing is loaded yet (other tests here install the
//! fake as the process's libcupti) and changes the environment (which other
//! threads must not read meanwhile). So the test runs this binary again with
//! only the child test, which does the work.

use std::process::Command;

use cupmon_cupti::{env_vars, Cupti};
use cupmon_test_support::fake_library_path;

/// Set in the child's environment: the child test runs only where it is set.
const CHILD: &str = "CUPMON_TEST_ENV_LOAD_CHILD";
const CHILD_TEST: &str = "env_load::child_loads_what_the_environment_names";

#[test]
fn cupmon_libcupti_and_libcuda_select_the_library() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(&exe)
        .args([CHILD_TEST, "--exact", "--ignored", "--test-threads=1"])
        .env(CHILD, "1")
        .env_remove(env_vars::CUPMON_LIBCUPTI)
        .env_remove(env_vars::CUPMON_LIBCUDA)
        .output()
        .expect("running the test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{CHILD_TEST} failed in its own process:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{CHILD_TEST} did not run:\n{stdout}"
    );
}

#[test]
#[ignore = "run in a fresh process by env_load::cupmon_libcupti_and_libcuda_select_the_library"]
fn child_loads_what_the_environment_names() {
    if std::env::var_os(CHILD).is_none() {
        eprintln!(
            "SKIPPED: {CHILD_TEST} runs only in the process that \
             env_load::cupmon_libcupti_and_libcuda_select_the_library starts"
        );
        return;
    }
    let fake = fake_library_path();
    assert!(Cupti::loaded().is_none());

    // Alone in this process (one test thread): nothing reads the environment
    // meanwhile.
    std::env::set_var(env_vars::CUPMON_LIBCUPTI, fake);
    std::env::set_var(env_vars::CUPMON_LIBCUDA, "/nonexistent/libcuda.so.1");
    let error = Cupti::load().unwrap_err();
    assert!(
        error.to_string().starts_with("no NVIDIA driver found"),
        "{error}"
    );
    assert!(Cupti::loaded().is_none(), "a failure is not remembered");

    std::env::set_var(env_vars::CUPMON_LIBCUDA, fake);
    let cupti = Cupti::load().unwrap();
    assert_eq!(cupti.path(), fake);
    assert_eq!(cupti.version(), 130_001);
    assert!(
        std::ptr::eq(Cupti::load().unwrap(), cupti),
        "loaded once per process"
    );
    assert!(std::ptr::eq(Cupti::loaded().unwrap(), cupti));
}
