#!/bin/bash
# The whole test suite, as CI runs it (.ci/run): formatting, lints, the Rust
# tests (golden, differential against PyTorch's merge_trace_window_into_chrome_trace
# when ../shared is beside the checkout, CLI, monitor and multiplexer against the fake
# libcupti), the Python package's tests, and HolisticTraceAnalysis reading cupmon's
# traces, and `cupmon report`'s page in headless Chromium. No GPU needed; the GPU checks are tests/gpu/run.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
step() { echo; echo "==> $*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test (workspace)"
cargo test --workspace --locked

step "tests/gpu/cupti_matrix.sh without a GPU (arguments, plan, table)"
bash tests/gpu/cupti_matrix_test.sh

step "Python package"
bash scripts/test-python.sh

step "HolisticTraceAnalysis reads cupmon's traces"
bash scripts/test-hta.sh

step "cupmon report in headless Chromium"
bash scripts/test-report.sh

echo
echo "all tests passed"
