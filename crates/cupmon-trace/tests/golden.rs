//! The merge of each real H200 fixture equals PyTorch's merge's output for it.

use std::path::{Path, PathBuf};

use super::common::compare::trace_differences;
use cupmon_trace::{merge_files, MergeOptions, MergeWindow, WindowSource};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(name)
}

fn load_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json")
}

fn check(name: &str, cpu: &str) {
    let dir = fixture(name);
    let window_path = dir.join("expected_window.json");
    let window = MergeWindow::from_json(&std::fs::read(&window_path).expect("read"), "window")
        .expect("window parses");
    let out_dir = tempfile::tempdir().expect("tempdir");
    for out_name in ["merged.json", "merged.json.gz"] {
        let out = out_dir.path().join(out_name);
        merge_files(
            &dir.join(cpu),
            WindowSource::Loaded(&window),
            &out,
            &MergeOptions {
                trace_name: Some(name.to_owned()),
                exact: true,
                ..MergeOptions::default()
            },
            &mut |_| {},
        )
        .expect("merge");
        let actual = if out_name.ends_with(".gz") {
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut flate2::read::GzDecoder::new(std::fs::File::open(&out).expect("open")),
                &mut text,
            )
            .expect("gunzip");
            serde_json::from_str(&text).expect("json")
        } else {
            load_json(&out)
        };
        let diffs = trace_differences(
            &load_json(&dir.join("expected_merged_trace.json")),
            &actual,
            20,
        );
        assert!(
            diffs.is_empty(),
            "{name} ({out_name}):\n{}",
            diffs.join("\n")
        );
    }
}

#[test]
fn torch_mlp_merge_equals_the_seed() {
    check("torch_mlp", "kineto_cpu_trace.json");
}

#[test]
fn cuda_workload_merge_equals_the_seed() {
    check("cuda_workload", "cpu_trace_empty.json");
}
