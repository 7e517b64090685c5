//! Loading libcupti (explicitly, by search, failing plainly) and CUPTI errors
//! carrying CUPTI's own text, against the fake libcupti.

use std::path::PathBuf;

use cupmon_cupti::{
    ActivityKind, Cupti, CuptiStatus, ExternalCorrelationKind, LoadError, LoadOptions,
    SearchOptions,
};
use cupmon_test_support::{fake_library_path, fake_load_options};

#[test]
fn loads_the_fake_and_reports_path_and_version() {
    let cupti = Cupti::load_with(&fake_load_options()).unwrap();
    assert_eq!(cupti.version(), 130_001);
    assert_eq!(cupti.path(), fake_library_path());
    assert!(cupti.has_api_filters());
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let cupti_ns = cupti.timestamp().unwrap();
    assert!(
        cupti_ns.abs_diff(now_ns) < 5_000_000_000,
        "CUPTI's clock is CLOCK_REALTIME"
    );
}

#[test]
fn missing_driver_is_reported_before_any_cupti_call() {
    let options = LoadOptions {
        libcuda: Some("/nonexistent/libcuda.so.1".into()),
        ..fake_load_options()
    };
    let error = Cupti::load_with(&options).unwrap_err();
    assert!(matches!(error, LoadError::NoDriver { .. }));
    let text = error.to_string();
    assert!(
        text.starts_with("no NVIDIA driver found (libcuda.so.1 could not be loaded: "),
        "{text}"
    );
    assert!(text.contains("/nonexistent/libcuda.so.1"), "{text}");
}

#[test]
fn not_found_lists_every_place_searched() {
    let empty = tempfile::tempdir().unwrap();
    let home = empty.path().join("cuda-home");
    std::fs::create_dir_all(home.join("lib64")).unwrap();
    let options = LoadOptions {
        search: SearchOptions {
            cuda_homes: vec![home.clone()],
            cuda_parent: Some(empty.path().to_path_buf()),
            python_prefixes: vec![empty.path().join("venv")],
            ..SearchOptions::default()
        },
        libcuda: Some(fake_library_path().to_path_buf()),
    };
    let error = Cupti::load_with(&options).unwrap_err();
    let LoadError::NotFound { tried } = &error else {
        panic!("{error}")
    };
    let tried: Vec<PathBuf> = tried.iter().map(|t| t.path.clone()).collect();
    assert_eq!(
        tried,
        [
            home.join("lib64/libcupti.so*"),
            home.join("targets/x86_64-linux/lib/libcupti.so*"),
            home.join("extras/CUPTI/lib64/libcupti.so*"),
        ]
    );
    let text = error.to_string();
    assert!(text.contains("CUPMON_LIBCUPTI"), "{text}");
    assert!(
        text.contains(&format!(
            "{}: no libcupti.so* here",
            home.join("lib64/libcupti.so*").display()
        )),
        "{text}"
    );
}

#[test]
fn search_finds_a_toolkit_libcupti_and_reports_unloadable_ones() {
    let root = tempfile::tempdir().unwrap();
    let broken = root.path().join("cuda-13.1/lib64/libcupti.so.13");
    let good = root
        .path()
        .join("cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13");
    for path in [&broken, &good] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    }
    std::fs::write(&broken, b"not an ELF file").unwrap();
    std::fs::copy(fake_library_path(), &good).unwrap();
    let options = LoadOptions {
        search: SearchOptions {
            cuda_parent: Some(root.path().to_path_buf()),
            ..SearchOptions::default()
        },
        libcuda: Some(fake_library_path().to_path_buf()),
    };
    let cupti = Cupti::load_with(&options).unwrap();
    assert_eq!(
        cupti.path(),
        good,
        "newest toolkit first, the broken one skipped"
    );
}

#[test]
fn a_library_without_cupti_functions_is_refused_by_name() {
    let options = LoadOptions {
        search: SearchOptions {
            explicit: Some(common_library()),
            ..SearchOptions::default()
        },
        libcuda: Some(fake_library_path().to_path_buf()),
    };
    let text = Cupti::load_with(&options).unwrap_err().to_string();
    assert!(
        text.contains(
            "(from CUPMON_LIBCUPTI) could not be loaded: it does not export cuptiGetVersion"
        ),
        "{text}"
    );
}

/// A shared library every Linux test machine has (the C math library).
fn common_library() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let libm = maps
        .split_whitespace()
        .find(|field| field.contains("/libm.so"))
        .map(PathBuf::from);
    libm.unwrap_or_else(|| PathBuf::from("/lib/x86_64-linux-gnu/libm.so.6"))
}

#[test]
fn cupti_errors_carry_the_call_status_and_cuptis_text() {
    let s = crate::common::session();
    let error = s.cupti.enable(ActivityKind(999)).unwrap_err();
    assert_eq!(error.status, CuptiStatus::ERROR_INVALID_KIND);
    assert_eq!(
        error.to_string(),
        "cuptiActivityEnable(999): CUPTI_ERROR_INVALID_KIND (21): the activity kind is not valid"
    );
    assert_eq!(
        s.cupti.last_error(),
        CuptiStatus::ERROR_INVALID_KIND,
        "cuptiGetLastError"
    );
    assert_eq!(s.cupti.last_error(), CuptiStatus::SUCCESS, "and it resets");

    let error = s
        .cupti
        .pop_external_correlation_id(ExternalCorrelationKind::CUSTOM1)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cuptiActivityPopExternalCorrelationId(CUSTOM1): CUPTI_ERROR_QUEUE_EMPTY (18): \
         no external correlation id is pushed for this kind"
    );
    assert_eq!(
        s.cupti.result_string(CuptiStatus(7)).as_deref(),
        Some("CUPTI_ERROR_INVALID_OPERATION")
    );
    assert_eq!(s.cupti.result_string(CuptiStatus(12345)), None);
}

#[test]
fn thread_ids_are_os_thread_ids_after_set_thread_id_type_system() {
    use cupmon_cupti::{FlushFlag, ThreadIdType};
    use cupmon_records::Record;
    let s = crate::common::session();
    s.cupti.enable(ActivityKind::RUNTIME).unwrap();
    s.cupti.set_thread_id_type(ThreadIdType::SYSTEM).unwrap();
    assert_eq!(s.fake.stats().thread_id_type, 1);
    s.fake.runtime_call(17).unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    // "/proc/thread-self" links to "PID/task/TID".
    let link = std::fs::read_link("/proc/thread-self").unwrap();
    let tid: u32 = link.file_name().unwrap().to_str().unwrap().parse().unwrap();
    let records = crate::common::decode(&s.sink.take());
    assert!(
        matches!(&records[..], [Record::Api(a)] if a.thread_id == tid && a.process_id == std::process::id())
    );
}
