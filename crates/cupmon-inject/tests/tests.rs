//! cupmon-inject's integration tests, one binary (ripgrep's layout), against
//! the fake libcupti (`cupmon-fake-cupti`, loaded through `cupmon-test-support`):
//! the CUPTI multiplexer, the C ABI's error codes, the end of a monitored process.

mod abi_errors;
mod exit;
mod multiplexer;
