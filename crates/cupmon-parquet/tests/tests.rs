//! cupmon-parquet's integration tests, one binary: round trips of the real H200
//! recordings against `cupmon stats` and against their records, the types every
//! engine reads, the file layout, re-runs on a growing dump and after the flight
//! recorder retired segments, slices, the dictionary columns read back value by
//! value, the docs generated from the schema, and the encoder's layering.

mod common;
mod dictionary;
mod docs_sync;
mod encode_floors;
mod incremental;
mod layout;
mod round_trip;
mod schema_types;
mod segments;
mod stacks;
