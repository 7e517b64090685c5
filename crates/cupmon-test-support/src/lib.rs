//! Test support, for tests only: it is a dev-dependency of the crates whose
//! tests drive cupmon's fake libcupti (`cupmon-fake-cupti`), never a
//! dependency of a program. It finds the fake's `.so` ([`fake_library_path`]),
//! loads it as the process's libcupti ([`load_fake`]) and wraps its
//! `cupmonFake*` control functions in safe methods ([`FakeControls`]), so tests
//! without `unsafe` (the monitor's) can make CUPTI activity.
//!
//! The fake keeps one global CUPTI state per process, like CUPTI: tests that
//! use it hold [`exclusive`] and start with [`FakeControls::reset`].
//!
//! `unsafe` is allowed here because calling the controls is FFI; each call
//! says why it is sound.
#![allow(unsafe_code)]

mod controls;
pub mod env_vars;
mod library;

use std::sync::{Mutex, MutexGuard, OnceLock};

use cupmon_cupti::{Cupti, LoadOptions, SearchOptions};

pub use controls::{FakeControls, NotFakeError};
pub use cupmon_fake_cupti_abi::{
    cbid, default_pool_address, mem_pool, stall, FakeStats, VERSION_ENV as FAKE_VERSION_ENV,
};
pub use library::fake_library_path;

/// Serialises tests that use the fake's process-global state. Poisoning (a
/// failed test) is ignored: the next test resets the fake anyway.
pub fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The fake loaded as this process's libcupti (and as its driver stand-in),
/// with its controls. Installs it as the process-global instance on first use,
/// so code calling [`Cupti::load`] gets it without any environment variable
/// (panics if a real libcupti was loaded first).
pub fn load_fake() -> (&'static Cupti, FakeControls) {
    static LOADED: OnceLock<(&'static Cupti, FakeControls)> = OnceLock::new();
    *LOADED.get_or_init(|| {
        let fake = Cupti::load_with(&fake_load_options())
            .unwrap_or_else(|e| panic!("loading the fake libcupti: {e}"));
        let cupti = Cupti::install_global(fake);
        let controls = FakeControls::resolve(cupti).unwrap_or_else(|e| panic!("{e}"));
        (cupti, controls)
    })
}

/// Options that load the fake: as `CUPMON_LIBCUPTI` and `CUPMON_LIBCUDA`
/// pointed at it.
pub fn fake_load_options() -> LoadOptions {
    let path = fake_library_path().to_path_buf();
    LoadOptions {
        search: SearchOptions {
            explicit: Some(path.clone()),
            ..SearchOptions::default()
        },
        libcuda: Some(path),
    }
}
