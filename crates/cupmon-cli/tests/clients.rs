//! What the tools users already have read from cupmon's outputs (torch-tb-profiler,
//! HTA), pinned here by the values they trip over; the tools themselves read the
//! same traces in tests/hta/check_hta.py.

use super::util::*;

/// Kineto's JSON type for each kernel arg that torch-tb-profiler compares with a
/// number: a number, never a string.
const NUMERIC_KERNEL_ARGS: [&str; 3] =
    ["blocks per SM", "warps per SM", "est. achieved occupancy %"];

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

/// A copy of fixture `name`'s dump files as `dir/dump_name`.
fn dump_named(dir: &std::path::Path, fixture_name: &str, dump_name: &str) -> std::path::PathBuf {
    let to = dir.join(dump_name);
    std::fs::create_dir_all(&to).expect("mkdir");
    for f in DUMP_FILES {
        std::fs::copy(fixture(fixture_name).join(f), to.join(f)).expect("copy");
    }
    to
}

fn decode_chrome(
    dir: &std::path::Path,
    dump: &str,
    out: &str,
    extra: &[&str],
) -> serde_json::Value {
    let mut args = vec!["decode", dump, "--format", "chrome", "-o", out];
    args.extend_from_slice(extra);
    assert_success(&cupmon(dir, &args));
    read_json(&dir.join(out))
}

/// `decode --format chrome` of one rank's dump wrote no `distributedInfo`: two ranks
/// decoded alone loaded into HTA as one rank (one file dropped silently). The rank
/// now comes from the meta, else the directory's name, and `--rank` sets it.
#[test]
fn rank_dump_decoded_alone_carries_its_rank() {
    let dir = tempfile::tempdir().expect("tempdir");
    dump_named(dir.path(), "cuda_workload", "rank1-4242-20261201T093005Z");
    let doc = decode_chrome(dir.path(), "rank1-4242-20261201T093005Z", "r1.json", &[]);
    assert_eq!(doc["distributedInfo"], serde_json::json!({"rank": 1}));
    // HTA finds the rank with the pattern "rank":\s+(\d+) in the file's head.
    let text = std::fs::read_to_string(dir.path().join("r1.json")).expect("read");
    assert!(text[..text.find("traceEvents").unwrap()].contains("\"rank\": 1"));

    let doc = decode_chrome(
        dir.path(),
        "rank1-4242-20261201T093005Z",
        "r3.json",
        &["--rank", "3", "--world-size", "4"],
    );
    assert_eq!(
        doc["distributedInfo"],
        serde_json::json!({"rank": 3, "world_size": 4})
    );
    let out = cupmon(
        dir.path(),
        &[
            "decode",
            "rank1-4242-20261201T093005Z",
            "--format",
            "chrome",
            "-o",
            "x.json",
            "--rank",
            "4",
            "--world-size",
            "4",
        ],
    );
    assert_bad_input(&out, &["--rank 4", "--world-size 4"]);
    let out = cupmon(
        dir.path(),
        &[
            "decode",
            "rank1-4242-20261201T093005Z",
            "-o",
            "w.json",
            "--rank",
            "1",
        ],
    );
    assert_bad_input(&out, &["--rank", "--format chrome"]);
    // A dump whose name says no rank gets none.
    dump_named(dir.path(), "cuda_workload", "4242-20261201T093005Z");
    let doc = decode_chrome(dir.path(), "4242-20261201T093005Z", "p.json", &[]);
    assert!(doc.get("distributedInfo").is_none());
}

/// `combine` dropped each rank's `dropped_records` and untimed counts; they are kept
/// per rank in the combined `cupmon` block, with the total.
#[test]
fn combine_keeps_each_ranks_dropped_and_untimed_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    dump_named(dir.path(), "torch_mlp", "rank0-1111-20261201T093005Z");
    dump_named(dir.path(), "cuda_workload", "rank1-2222-20261201T093005Z");
    decode_chrome(dir.path(), "rank0-1111-20261201T093005Z", "r0.json", &[]);
    decode_chrome(dir.path(), "rank1-2222-20261201T093005Z", "r1.json", &[]);
    let out = cupmon(
        dir.path(),
        &["combine", "r0.json", "r1.json", "-o", "c.json"],
    );
    assert_success(&out);
    assert!(
        !stderr(&out).contains("no distributedInfo"),
        "{}",
        stderr(&out)
    );
    let doc = read_json(&dir.path().join("c.json"));
    let ranks = doc["cupmon"]["combined"].as_array().expect("combined");
    assert_eq!(ranks[0]["rank"], 0);
    assert_eq!(ranks[0]["rank_from"], "distributedInfo");
    assert_eq!(
        ranks[0]["untimed_gpu_ops"],
        serde_json::json!({"kernel": 42, "gpu_memcpy": 4, "gpu_memset": 2})
    );
    // PyTorch-format dumps do not count drops: unknown, and said why.
    for r in ranks {
        assert!(r["dropped_records"].is_null(), "{r}");
        assert!(r["dropped_records_note"].is_string(), "{r}");
    }
    assert!(doc["cupmon"]["dropped_records"].is_null());
}

/// `combine` numbered traces without `distributedInfo` as ranks 0, 1, ... silently,
/// even when their time spans do not overlap (two unrelated recordings).
#[test]
fn combine_warns_when_it_numbers_ranks_and_when_spans_do_not_overlap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = fixture("cuda_workload");
    let b = fixture("torch_mlp");
    decode_chrome(dir.path(), a.to_str().unwrap(), "a.json", &[]);
    decode_chrome(dir.path(), b.to_str().unwrap(), "b.json", &[]);
    let out = cupmon(dir.path(), &["combine", "a.json", "b.json", "-o", "c.json"]);
    assert_success(&out);
    let err = stderr(&out);
    assert!(
        err.contains("2 of 2 traces carry no distributedInfo")
            && err.contains("a.json as rank 0")
            && err.contains("b.json as rank 1"),
        "{err}"
    );
    assert!(
        err.contains("THE TRACES DO NOT OVERLAP IN TIME (1 pair)"),
        "{err}"
    );
    let doc = read_json(&dir.path().join("c.json"));
    assert_eq!(doc["cupmon"]["combined"][1]["rank_from"], "input order");
}
