//! cupmon-cupti's integration tests, one binary (ripgrep's layout), against the
//! fake libcupti (`cupmon-fake-cupti`, loaded through `cupmon-test-support`):
//! loading and errors, loading from the environment, buffer callbacks, launch counting.

mod callbacks;
mod common;
mod env_load;
mod launches;
mod load_and_errors;
mod unsupported_version;
