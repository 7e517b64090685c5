//! `Monitor::python_stacks`, the switch behind `cupmon.python_stacks(on)`: in a
//! process without CPython (this test binary) turning stacks on is refused with the
//! reason, turning them off is a no-op that says they were off, and a stopped monitor
//! says so. (The switch itself, on a Python program's launches, is tested with the
//! Python package: tests/python/test_python_stacks.py.)

use cupmon_monitor::{Monitor, MonitorError, StateError};
use cupmon_records::Dump;
use cupmon_test_support::exclusive;

use crate::common::{config, fake};

#[test]
fn python_stacks_on_without_cpython_is_refused_with_the_reason() {
    let _x = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let monitor = Monitor::start_with(cupti, config(dir.path())).expect("start");
    assert!(
        matches!(
            cupmon_cupti::launch_counting(),
            cupmon_cupti::Counting::On { .. }
        ),
        "the fake counts launches"
    );
    assert!(
        !monitor.python_stacks(false).expect("off"),
        "they were not on"
    );
    match monitor.python_stacks(true) {
        Err(MonitorError::State(StateError::NoPythonStacks { why })) => {
            assert!(why.contains("no CPython 3.11 or later"), "{why}");
        }
        other => panic!("expected NoPythonStacks, got {other:?}"),
    }
    assert!(!cupmon_cupti::python_stacks_noted());
    fake.launch_kernels(3, 7, "k").unwrap();
    monitor.flush(true).expect("flush");
    monitor.stop().expect("stop");
    let stopped = monitor.python_stacks(false);
    assert!(
        matches!(stopped, Err(MonitorError::State(StateError::Stopped))),
        "{stopped:?}"
    );
    // Nothing was switched: the meta says only what the start said.
    let meta = serde_json::Value::from(
        Dump::open(dir.path().join("dump"))
            .expect("dump")
            .meta()
            .json()
            .clone(),
    );
    assert!(
        meta["python_stacks"]
            .as_str()
            .is_some_and(|s| s.starts_with("off: no CPython")),
        "{meta}"
    );
    assert!(meta.get("python_stacks_switched").is_none(), "{meta}");
}
