//! cupmon-pftrace's integration tests, one binary (as the other crates): traces
//! decoded against Perfetto's own .proto (round trips, overlapping slices under
//! proptest) and read by Perfetto's own Python protos.

mod common;
mod overlap;
mod python_check;
mod roundtrip;
