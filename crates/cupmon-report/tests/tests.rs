//! cupmon-report's integration tests, one binary (ripgrep's layout, as the other
//! crates): the stored digests against the records, the report's model against
//! `cupmon stats`' numbers on the fixtures, reports of synthetic multi-rank runs.

mod common;
mod digest;
mod model;
mod run;
