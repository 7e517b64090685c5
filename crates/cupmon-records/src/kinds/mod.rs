//! Every activity kind cupmon decodes, one file each. A file declares its record type
//! with [`activity_record!`](macros.rs): the structs CUPTI writes per version, the
//! fields, the timestamps; the one list below turns the files into [`Record`].
//!
//! Adding a kind: a new file here (copy `memory_pool.rs`), one line in the list, a
//! family in `tools/cupti-tables/gen_layouts.py` (then regenerate
//! `cupti_layouts.json`), its window event in cupmon-window's `src/kinds/`, and in
//! cupmon-trace how it shows (`kinds_out.rs`) and is read back from a window file
//! (`merge/window_event.rs`): docs/ARCHITECTURE.md, "Adding an activity kind".

#[macro_use]
mod macros;
mod scalar;
mod spec;

pub use scalar::Scalar;
pub use spec::{since, Field, KindSpec, StructVersion};

use crate::ActivityKind;

/// What every record type answers, whatever its kind.
pub trait ActivityRecord {
    /// `(start, end)` in ns for records that span time.
    fn span(&self) -> Option<(u64, u64)> {
        None
    }
    /// The time in ns of a record that happens at one instant (an allocation).
    fn instant(&self) -> Option<u64> {
        None
    }
    /// CUPTI's link between an API call and what it caused (0 when none).
    fn correlation_id(&self) -> u32 {
        0
    }
}

/// Declares the files of the families and the [`Record`] enum over them. The most
/// frequent kinds come first: decoding tries the families in this order.
macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident($ty:ident) in $module:ident,)*) => {
        $(mod $module;)*
        $(pub use $module::$ty;)*

        /// One decoded activity record.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Record {
            $($(#[$doc])* $variant($ty),)*
        }

        /// Every family cupmon decodes, in [`Record`]'s order.
        pub static FAMILIES: &[&KindSpec] = &[$(&$ty::SPEC),*];

        impl Record {
            /// The CUPTI kind this record was (or will be) written as.
            pub fn kind(&self) -> ActivityKind {
                match self { $(Self::$variant(r) => r.kind,)* }
            }

            /// The family's layouts and fields.
            pub fn spec(&self) -> &'static KindSpec {
                match self { $(Self::$variant(_) => &$ty::SPEC,)* }
            }

            fn as_dyn(&self) -> &dyn ActivityRecord {
                match self { $(Self::$variant(r) => r,)* }
            }

            /// Whether a timestamp of the record is on another clock than Unix ns.
            #[inline(always)]
            pub fn has_foreign_timestamp(&self) -> bool {
                match self { $(Self::$variant(r) => r.has_foreign_timestamp(),)* }
            }

            /// Replace every timestamp by `f` of it (0 stays 0): a clock conversion.
            pub fn map_timestamps(&mut self, f: &dyn Fn(u64) -> u64) {
                match self { $(Self::$variant(r) => r.map_timestamps(f),)* }
            }

            /// Set the field at byte `offset` from `values[j]`'s low bytes for each
            /// `(j, offset)` of `fields` (see the family's `set_bits`): a record
            /// rebuilt from a template without its bytes.
            #[inline]
            pub(crate) fn set_fields(&mut self, fields: &[(usize, usize)], values: &[u64]) {
                match self {
                    $(Self::$variant(r) => {
                        for &(j, offset) in fields {
                            r.set_bits(offset, values[j]);
                        }
                    })*
                }
            }

            /// Write the record into `b` (zeroed, exactly its struct's size for `api`).
            pub(crate) fn encode(&self, b: &mut [u8], api: u32) {
                match self { $(Self::$variant(r) => r.encode(b, api),)* }
            }
        }

        /// Decode `rec` as a record of `kind`: `None` for a kind cupmon does not know,
        /// `Some(None)` when `rec` is too short for it.
        #[inline(always)]
        pub(crate) fn decode(kind: ActivityKind, rec: &[u8], api: u32) -> Option<Option<Record>> {
            $(if $ty::SPEC.kinds.contains(&kind) {
                return Some($ty::decode(rec, api).map(Record::$variant));
            })*
            None
        }
    };
}

kinds! {
    Kernel(KernelRecord) in kernel,
    /// A runtime or driver API call.
    Api(ApiRecord) in api,
    ExternalCorrelation(ExternalCorrelationRecord) in external_correlation,
    Memcpy(MemcpyRecord) in memcpy,
    Memset(MemsetRecord) in memset,
    Overhead(OverheadRecord) in overhead,
    CudaEvent(CudaEventRecord) in cuda_event,
    Synchronization(SyncRecord) in synchronization,
    Memory(MemoryRecord) in memory,
    MemoryPool(MemoryPoolRecord) in memory_pool,
}

impl Record {
    /// The correlation id (CUPTI's link between an API call and the GPU work it caused).
    pub fn correlation_id(&self) -> u32 {
        self.as_dyn().correlation_id()
    }

    /// `(start, end)` in ns for records that span time.
    pub fn span(&self) -> Option<(u64, u64)> {
        self.as_dyn().span()
    }

    /// The record's time: its start, or the instant it happened.
    pub fn time(&self) -> Option<u64> {
        self.span().map(|s| s.0).or_else(|| self.as_dyn().instant())
    }

    /// The time interval the record covers (`(t, t)` for an instant).
    pub fn interval(&self) -> Option<(u64, u64)> {
        self.span()
            .or_else(|| self.as_dyn().instant().map(|t| (t, t)))
    }
}

/// The family that decodes `kind`.
pub fn family_of(kind: ActivityKind) -> Option<&'static KindSpec> {
    FAMILIES.iter().copied().find(|f| f.has_kind(kind))
}

/// Every kind cupmon decodes, in CUPTI's numeric order.
pub fn decodable_kinds() -> Vec<ActivityKind> {
    let mut kinds: Vec<ActivityKind> = FAMILIES.iter().flat_map(|f| f.kinds).copied().collect();
    kinds.sort();
    kinds
}
