//! What a dump lost of its segments, in the words of its warnings: a segment that is
//! missing, not its own, or a copy; one that held fewer records than its index line
//! says; a digest or an index line that cannot be trusted.

use std::fmt;

use super::seal::DumpId;
use super::segment::SegmentSummary;

/// What a segment's `closed` index line says it held: what is lost with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSays {
    pub records: u64,
    /// Its records' span on the Unix clock (ns).
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
}

impl IndexSays {
    pub fn of(s: &SegmentSummary) -> Self {
        Self {
            records: s.records,
            first_ns: s.first_ns,
            last_ns: s.last_ns,
        }
    }

    fn span(&self) -> String {
        match (self.first_ns, self.last_ns) {
            (Some(a), Some(b)) => format!(", Unix ns {a}..{b}"),
            _ => String::new(),
        }
    }
}

/// Why a segment file is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentLoss {
    /// `index.jsonl` says it was closed (and not retired), but the file is gone.
    Missing { digest_left: bool },
    /// Its frames carry another dump's id (`found`; `None`: no id, an older cupmon's).
    Foreign {
        found: Option<DumpId>,
        expected: Option<DumpId>,
    },
    /// Its frames are those of segment `of` (copied under another number).
    Copy { of: u32 },
}

impl fmt::Display for SegmentLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = |id: &Option<DumpId>| id.map_or_else(|| "none".to_owned(), |i| i.to_string());
        match self {
            Self::Missing { digest_left: true } => {
                f.write_str("missing (only its digest is left): its records cannot be read")
            }
            Self::Missing { digest_left: false } => {
                f.write_str("missing: the index says it was closed, and it was not retired")
            }
            Self::Foreign { found, expected } => write!(
                f,
                "belongs to another dump (its frames carry dump id {}, this dump's is {}): \
                 not read",
                id(found),
                id(expected)
            ),
            Self::Copy { of } => write!(
                f,
                "holds the same frames as segment {of} (a copy): not read, so that they are \
                 not counted twice"
            ),
        }
    }
}

/// `file` (a segment) is not read: `why`; `index` is what its own index line said it
/// held, lost with it.
pub(super) fn fmt_lost(
    f: &mut fmt::Formatter<'_>,
    file: &str,
    why: &SegmentLoss,
    index: &Option<IndexSays>,
) -> fmt::Result {
    write!(f, "{file}: {why}")?;
    match index {
        Some(i) => write!(
            f,
            "; its index line says it held {} records{}: lost",
            i.records,
            i.span()
        ),
        None => Ok(()),
    }
}

/// `file` gave `read` of the records its index line says it held.
pub(super) fn fmt_short(
    f: &mut fmt::Formatter<'_>,
    file: &str,
    index: &IndexSays,
    read: u64,
) -> fmt::Result {
    if read > index.records {
        return write!(
            f,
            "{file}: holds {read} records where its index line says {}: the index or the \
             segment was changed after it was written",
            index.records
        );
    }
    write!(
        f,
        "{file}: its index line says it held {} records{}; {read} could be read: {} lost",
        index.records,
        index.span(),
        index.records - read
    )
}
