//! cupmon-inject's integration tests, one binary (ripgrep's layout), against
//! the fake libcupti (`cupmon-fake-cupti`, loaded through `cupmon-test-support`):
//! the CUPTI multiplexer, the C ABI's error codes.

mod abi_errors;
mod multiplexer;
