//! `Cupti::load()` configured by environment variables. The only test in its
//! binary: it changes the environment, which other threads must not read meanwhile.

use cupmon_cupti::testing::fake_library_path;
use cupmon_cupti::{env_vars, Cupti};

#[test]
fn cupmon_libcupti_and_libcuda_select_the_library() {
    let fake = fake_library_path();
    assert!(Cupti::loaded().is_none());

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
