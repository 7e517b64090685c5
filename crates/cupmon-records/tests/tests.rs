//! cupmon-records' integration tests, one binary (ripgrep's layout): decoding against
//! the ground truth of real H200 recordings, layouts of every CUPTI version, round
//! trips, compact chunks, damaged dumps, the dump format and `cupmon stats`' summary.

mod common;
mod compact;
mod damage;
mod demangle;
mod dump_format;
mod killed_session;
mod layout;
mod roundtrip;
mod segments;
mod side_file_damage;
mod stats;
mod truth;
