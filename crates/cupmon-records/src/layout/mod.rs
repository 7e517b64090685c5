//! Record layouts per CUPTI version: which struct CUPTI writes for each activity kind,
//! its size, and where each field lives. Decoding needs this because records are packed
//! back to back with no size field.

pub mod fields;
mod tables;

pub use fields::Field;
pub use tables::{LayoutTable, StructLayout, TABLES};

use crate::{ActivityKind, CuptiVersion};

/// A CUPTI version together with the layout table it writes: everything the decoder
/// and encoder need. Cheap to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    version: CuptiVersion,
    table: &'static LayoutTable,
}

/// A CUPTI version cupmon has no layout table for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "CUPTI {version} (cuptiGetVersion {api}) has no record layout table in cupmon \
     (known: API versions 18-24, 26-28 for 12.0-12.9 and 130000-130599 for 13.0-13.5)",
    api = version.api()
)]
pub struct UnsupportedVersion {
    pub version: CuptiVersion,
}

impl Layout {
    /// The layout CUPTI `version` writes, or an error for versions cupmon has not measured
    /// (older than 12.0, the unreleased 12.7, newer than 13.5): guessing would misread
    /// every record after the first whose struct grew.
    pub fn for_version(version: CuptiVersion) -> Result<Self, UnsupportedVersion> {
        let api = version.api();
        TABLES
            .iter()
            .find(|t| (t.api_versions.0..=t.api_versions.1).contains(&api))
            .map(|table| Self { version, table })
            .ok_or(UnsupportedVersion { version })
    }

    /// [`Layout::for_version`] for a raw `cuptiGetVersion` number (as dumps store it).
    pub fn for_api_version(api: u32) -> Result<Self, UnsupportedVersion> {
        Self::for_version(CuptiVersion::from_api(api))
    }

    /// The newest layout cupmon knows (CUPTI 13.5).
    pub fn newest() -> Self {
        let table = &TABLES[TABLES.len() - 1];
        Self {
            version: CuptiVersion::from_api(table.api_versions.0),
            table,
        }
    }

    /// CUPTI 13.0's layout (the version of the real fixtures).
    pub fn cupti_13_0() -> Self {
        Self {
            version: CuptiVersion::CUPTI_13_0,
            table: &TABLES[4],
        }
    }

    pub fn version(&self) -> CuptiVersion {
        self.version
    }

    pub fn table(&self) -> &'static LayoutTable {
        self.table
    }

    /// The struct written for `kind`.
    pub fn struct_layout(&self, kind: ActivityKind) -> &'static StructLayout {
        let t = self.table;
        match kind {
            ActivityKind::Kernel | ActivityKind::ConcurrentKernel => &t.kernel,
            ActivityKind::Memcpy => &t.memcpy,
            ActivityKind::Memset => &t.memset,
            ActivityKind::Driver | ActivityKind::Runtime => &t.api,
            ActivityKind::ExternalCorrelation => &t.external_correlation,
            ActivityKind::Overhead => &t.overhead,
            ActivityKind::CudaEvent => &t.cuda_event,
            ActivityKind::Synchronization => &t.synchronization,
        }
    }

    /// Size in bytes of a record of CUPTI kind number `kind`; `None` for kinds cupmon
    /// does not decode. The decoder's hot path.
    #[inline]
    pub fn record_size(&self, kind: u32) -> Option<usize> {
        let t = self.table;
        Some(match kind {
            4 | 5 => t.api.size,
            10 | 3 => t.kernel.size,
            39 => t.external_correlation.size,
            1 => t.memcpy.size,
            2 => t.memset.size,
            17 => t.overhead.size,
            36 => t.cuda_event.size,
            38 => t.synchronization.size,
            _ => return None,
        })
    }

    /// The fields of `kind`'s struct in this version (C names and offsets): those that
    /// end within the struct, less `isDeviceLaunched` of memcpy/memset before 13.0.
    pub fn fields(&self, kind: ActivityKind) -> impl Iterator<Item = &'static Field> + '_ {
        let size = self.struct_layout(kind).size;
        let all: &'static [Field] = match kind {
            ActivityKind::Kernel | ActivityKind::ConcurrentKernel => fields::kernel::FIELDS,
            ActivityKind::Memcpy => fields::memcpy::FIELDS,
            ActivityKind::Memset => fields::memset::FIELDS,
            ActivityKind::Driver | ActivityKind::Runtime => fields::api::FIELDS,
            ActivityKind::ExternalCorrelation => fields::external_correlation::FIELDS,
            ActivityKind::Overhead => fields::overhead::FIELDS,
            ActivityKind::CudaEvent => fields::cuda_event::FIELDS,
            ActivityKind::Synchronization => fields::synchronization::FIELDS,
        };
        let memop = matches!(kind, ActivityKind::Memcpy | ActivityKind::Memset);
        all.iter().filter(move |f| {
            f.offset + f.size <= size
                && !(memop && f.c_name == "isDeviceLaunched" && !self.table.memop_device_launched)
        })
    }
}
