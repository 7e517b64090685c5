//! cupmon-monitor's integration tests, one binary (ripgrep's layout), against
//! the fake libcupti (`cupmon-fake-cupti`, loaded through `cupmon-test-support`):
//! the monitor's threads, pool, cap, windows and shutdown; memory records.

mod accounting;
mod clock;
mod common;
mod crash;
mod memory;
mod monitor;
mod python_stacks_switch;
mod segment_launches;
