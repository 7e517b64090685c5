//! A Chrome trace's top-level members (`traceName`, `deviceProperties`,
//! `distributedInfo`, cupmon's `dropped_records`, ...) as one
//! `ChromeEventBundle` of `ChromeMetadata`: trace processor keeps them in
//! its metadata table as `cr-NAME`, so a `.pftrace` says what its JSON says.

use crate::fields::{chrome, packet};
use crate::wire;

/// The value of a [`crate::PftraceWriter::chrome_metadata`] entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataValue<'a> {
    Str(&'a str),
    Int(i64),
    Bool(bool),
    /// Any other JSON value, as its text.
    Json(&'a str),
}

/// Encodes the bundle into an open packet.
pub(crate) fn bundle(out: &mut Vec<u8>, entries: &[(&str, MetadataValue<'_>)]) {
    let b = wire::begin(out, packet::CHROME_EVENTS);
    for (name, value) in entries {
        let m = wire::begin(out, chrome::METADATA);
        wire::bytes(out, chrome::NAME, name.as_bytes());
        match *value {
            MetadataValue::Str(s) => wire::bytes(out, chrome::STRING_VALUE, s.as_bytes()),
            MetadataValue::Int(v) => wire::int(out, chrome::INT_VALUE, v),
            MetadataValue::Bool(v) => wire::uint(out, chrome::BOOL_VALUE, u64::from(v)),
            MetadataValue::Json(t) => wire::bytes(out, chrome::JSON_VALUE, t.as_bytes()),
        }
        wire::end(out, m);
    }
    wire::end(out, b);
}
