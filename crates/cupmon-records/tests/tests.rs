//! cupmon-records' integration tests, one binary (ripgrep's layout): decoding against
//! the ground truth of real H200 recordings, layouts of every CUPTI version, round
//! trips, compact chunks, damaged dumps, the dump format, `cupmon stats`' summary, NCCL
//! kernel names and the collectives' share of GPU time, the time span of a dump and its
//! timeline.

mod annotation_index;
mod common;
mod compact;
mod damage;
mod demangle;
mod dump_format;
mod killed_session;
mod launch_counter;
mod launch_stacks_retire;
mod layout;
mod nccl_names;
mod nccl_share;
mod roundtrip;
mod segment_audit;
mod segments;
mod side_file_damage;
mod slice_joins;
mod stats;
mod time_span;
mod timeline;
mod truth;
