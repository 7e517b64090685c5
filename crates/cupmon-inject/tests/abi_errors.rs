//! The C ABI's error answers: each failure carries the code of its kind
//! (`{"error": {"code", "kind", "message"}}`), against the fake libcupti.

use cupmon_inject::{call, ErrorCode};
use cupmon_test_support::{exclusive, load_fake};
use serde_json::Value;

/// The result of a request that must succeed.
fn ok(request: &str) -> Value {
    let answer = call(request);
    assert_eq!(answer["ok"], true, "{request}: {answer}");
    answer["result"].clone()
}

/// The error of a request that must fail with `expected`; returns its message.
fn fails(request: &str, expected: ErrorCode) -> String {
    let answer = call(request);
    assert_eq!(answer["ok"], false, "{request}: {answer}");
    let error = &answer["error"];
    assert_eq!(error["code"], expected.code(), "{request}: {answer}");
    assert_eq!(error["kind"], expected.name(), "{request}: {answer}");
    let message = error["message"].as_str().expect("a message string");
    assert!(!message.is_empty(), "{request}: {answer}");
    message.to_owned()
}

/// Starts a session through the ABI on a reset fake, its dump under `dir`; returns the
/// start request (to send again) and the dump directory.
fn start_session(dir: &std::path::Path) -> (String, std::path::PathBuf) {
    let (_cupti, fake) = load_fake();
    fake.reset();
    let dump = dir.join("dump");
    let start = format!(r#"{{"op": "start", "output_dir": "{}"}}"#, dump.display());
    ok(&start);
    (start, dump)
}

#[test]
fn requests_the_abi_cannot_read_are_bad_requests() {
    let _guard = exclusive();
    assert!(fails("{", ErrorCode::BadRequest).contains("not JSON"));
    fails("{}", ErrorCode::BadRequest);
    fails(r#"{"op": 3}"#, ErrorCode::BadRequest);
    assert!(fails(r#"{"op": "nope"}"#, ErrorCode::BadRequest).contains("\"nope\""));
    fails(r#"{"op": "start"}"#, ErrorCode::BadRequest);
}

#[test]
fn bad_settings_are_invalid_settings() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let start = |extra: &str| {
        format!(
            r#"{{"op": "start", "output_dir": "{}", {extra}}}"#,
            dir.path().join("d").display()
        )
    };
    let message = fails(
        &start(r#""kinds": ["NOT_A_KIND"]"#),
        ErrorCode::InvalidSetting,
    );
    assert!(message.contains("NOT_A_KIND"), "{message}");
    fails(&start(r#""buffer_size": "abc""#), ErrorCode::InvalidSetting);
    fails(&start(r#""flush_period_s": -1"#), ErrorCode::InvalidSetting);
    fails(&start(r#""buffer_size": 0"#), ErrorCode::InvalidSetting);
    assert_eq!(ok(r#"{"op": "status"}"#)["running"], false);
}

#[test]
fn without_a_session_calls_are_not_monitoring() {
    let _guard = exclusive();
    for op in ["stop", "stats", "flush", "end_window", "pop_annotation"] {
        let message = fails(&format!(r#"{{"op": "{op}"}}"#), ErrorCode::NotMonitoring);
        assert!(message.contains("not monitoring"), "{op}: {message}");
    }
    for on in [true, false] {
        let message = fails(
            &format!(r#"{{"op": "python_stacks", "on": {on}}}"#),
            ErrorCode::NotMonitoring,
        );
        assert!(message.contains("not monitoring"), "{on}: {message}");
    }
}

/// Started through the ABI without `cupmon run` (nothing preloaded), cupmon leaves
/// CUPTI's callback subscriber to others and counts no launches: stacks, noted by the
/// launch callbacks, cannot be turned on, and the answer says why.
#[test]
fn python_stacks_without_launch_counting_are_refused_with_the_reason() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    start_session(dir.path());
    let off = ok(r#"{"op": "python_stacks", "on": false}"#);
    assert_eq!(off, serde_json::json!({"was_on": false}));
    let why = fails(
        r#"{"op": "python_stacks", "on": true}"#,
        ErrorCode::NoPythonStacks,
    );
    assert!(
        why.contains("launches are not counted") && why.contains("not preloaded"),
        "{why}"
    );
    fails(r#"{"op": "python_stacks"}"#, ErrorCode::BadRequest);
    ok(r#"{"op": "stop"}"#);
}

#[test]
fn each_wrong_state_of_a_session_has_its_code() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let (start, dump) = start_session(dir.path());
    let again = fails(&start, ErrorCode::AlreadyMonitoring);
    assert!(again.contains(&dump.display().to_string()), "{again}");
    fails(r#"{"op": "pop_annotation"}"#, ErrorCode::NoAnnotationOpen);
    fails(r#"{"op": "end_window"}"#, ErrorCode::NoWindowOpen);
    ok(r#"{"op": "prepare_window"}"#);
    fails(
        r#"{"op": "prepare_window"}"#,
        ErrorCode::WindowAlreadyPrepared,
    );
    ok(r#"{"op": "start_window"}"#);
    fails(r#"{"op": "start_window"}"#, ErrorCode::WindowAlreadyOpen);
    fails(r#"{"op": "prepare_window"}"#, ErrorCode::WindowAlreadyOpen);
    ok(r#"{"op": "end_window"}"#);
    fails(r#"{"op": "end_window"}"#, ErrorCode::NoWindowOpen);
    ok(r#"{"op": "stop"}"#);
    fails(r#"{"op": "stop"}"#, ErrorCode::NotMonitoring);
}

#[test]
fn the_error_codes_op_answers_the_whole_table() {
    let table = ok(r#"{"op": "error_codes"}"#);
    let rows: Vec<(u64, &str)> = table
        .as_array()
        .expect("a list")
        .iter()
        .map(|row| {
            (
                row["code"].as_u64().expect("a code"),
                row["kind"].as_str().expect("a name"),
            )
        })
        .collect();
    let expected: Vec<(u64, &str)> = ErrorCode::ALL
        .iter()
        .map(|c| (u64::from(c.code()), c.name()))
        .collect();
    assert_eq!(rows, expected);
}

#[test]
fn the_version_is_the_abi_version() {
    assert_eq!(
        ok(r#"{"op": "version"}"#)["abi"],
        cupmon_inject::ABI_VERSION
    );
}
