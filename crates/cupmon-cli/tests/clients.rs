//! What the tools users already have read from cupmon's outputs (torch-tb-profiler,
//! HTA), pinned here by the values they trip over; the tools themselves read the
//! same traces in tests/hta/check_hta.py.

use super::util::*;

/// Kineto's JSON type for each kernel arg that torch-tb-profiler compares with a
/// number: a number, never a string.
const NUMERIC_KERNEL_ARGS: [&str; 3] = ["blocks per SM", "warps per SM", "est. achieved occupancy %"];

fn kernels(doc: &serde_json::Value) -> Vec<&serde_json::Value> {
    doc["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .collect()
}

/// A PyTorch-format dump has no device properties, so no SM count: the trace said
/// `"blocks per SM": "inf"` (a string, as Kineto writes it for a device it does not
/// know), and torch-tb-profiler raised a TypeError comparing it with 0.0. The args
/// are now left out where the device is unknown, and numbers where it is known.
#[test]
fn standalone_trace_of_a_pytorch_format_dump_has_no_inf_strings() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dump(&dir.path().join("dump"));
    let out = cupmon(
        dir.path(),
        &["decode", "dump", "--format", "chrome", "-o", "t.json"],
    );
    assert_success(&out);
    let doc = read_json(&dir.path().join("t.json"));
    assert!(doc.get("deviceProperties").is_none());
    let kernels = kernels(&doc);
    assert!(kernels.len() > 10, "{}", kernels.len());
    for k in kernels {
        for key in NUMERIC_KERNEL_ARGS {
            assert!(k["args"].get(key).is_none(), "{key} in {}", k["args"]);
        }
        assert!(k["args"]["grid"].is_array() && k["args"]["registers per thread"].is_number());
    }
}

/// With the device's properties (a merge into a torch.profiler trace), the same
/// args are numbers, as Kineto writes them.
#[test]
fn kernel_occupancy_args_are_numbers_where_the_device_is_known() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cupmon(
        dir.path(),
        &[
            "decode",
            fixture("torch_transformer/dump").to_str().unwrap(),
            "--format",
            "chrome",
            "-o",
            "t.json",
        ],
    );
    assert_success(&out);
    let doc = read_json(&dir.path().join("t.json"));
    assert!(doc["deviceProperties"].is_array());
    let kernels = kernels(&doc);
    assert!(!kernels.is_empty());
    for k in kernels {
        for key in NUMERIC_KERNEL_ARGS {
            assert!(k["args"][key].is_number(), "{key} in {}", k["args"]);
        }
    }
}
