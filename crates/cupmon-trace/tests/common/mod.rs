//! Helpers shared by the integration tests: fixture paths and the semantic
//! comparison of traces.
#![allow(dead_code)]

pub mod compare;

use std::path::{Path, PathBuf};

pub const FIXTURES: [&str; 2] = ["cuda_workload", "torch_mlp"];

/// The repo's copy of the real H200 recordings.
pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(name)
}
