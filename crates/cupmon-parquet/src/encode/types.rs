//! What a column holds ([`ColType`]) and how its pages are encoded ([`Enc`]): the
//! vocabulary the datasets' schema declares its columns in and the encoder writes
//! them by.

use parquet::basic::{Encoding, Type as PhysicalType};

/// A column's logical type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    I32,
    I64,
    OptI32,
    OptI64,
    Str,
    OptStr,
    Bool,
}

impl ColType {
    pub fn physical(self) -> PhysicalType {
        match self {
            ColType::I32 | ColType::OptI32 => PhysicalType::INT32,
            ColType::I64 | ColType::OptI64 => PhysicalType::INT64,
            ColType::Str | ColType::OptStr => PhysicalType::BYTE_ARRAY,
            ColType::Bool => PhysicalType::BOOLEAN,
        }
    }

    pub fn nullable(self) -> bool {
        matches!(self, ColType::OptI32 | ColType::OptI64 | ColType::OptStr)
    }

    /// The type's name in DuckDB, Spark and Trino SQL (they agree on these).
    pub fn sql(self) -> &'static str {
        match self {
            ColType::I32 | ColType::OptI32 => "INTEGER",
            ColType::I64 | ColType::OptI64 => "BIGINT",
            ColType::Str | ColType::OptStr => "VARCHAR",
            ColType::Bool => "BOOLEAN",
        }
    }
}

/// How a column's pages are encoded (then zstd-compressed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    /// A dictionary page and RLE indices: strings and columns with few values.
    Dict,
    /// DELTA_BINARY_PACKED: timestamps and ids that grow.
    Delta,
    /// PLAIN: values without pattern (durations), left to zstd.
    Plain,
}

impl Enc {
    /// The encoding of the data pages when the dictionary is off.
    pub fn fallback(self) -> Option<Encoding> {
        match self {
            Enc::Dict => None,
            Enc::Delta => Some(Encoding::DELTA_BINARY_PACKED),
            Enc::Plain => Some(Encoding::PLAIN),
        }
    }
}
