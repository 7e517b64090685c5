//! JSON reading and writing with Python's `json` module semantics.

pub(crate) mod dict;
mod lex;
pub(crate) mod read;
mod tokens;
pub(crate) mod value;
pub(crate) mod write;
