//! JSON reading and writing with Python's `json` module semantics.

pub(crate) mod dict;
pub(crate) mod read;
pub(crate) mod value;
pub(crate) mod write;
