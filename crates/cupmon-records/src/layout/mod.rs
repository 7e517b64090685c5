//! Record layouts per CUPTI version: which struct CUPTI writes for each activity kind
//! and its size. Decoding needs this because records are packed back to back with no
//! size field. The structs and fields are declared per kind (`kinds/`); this module
//! picks the ones a version writes.

mod generations;

pub use generations::{Generation, GENERATIONS};

use crate::kinds::{family_of, Field, StructVersion, FAMILIES};
use crate::{ActivityKind, CuptiVersion};

/// A CUPTI version together with the struct sizes it writes: everything the decoder
/// and encoder need. Cheap to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    version: CuptiVersion,
    generation: &'static Generation,
    /// Record size by kind number; 0 for kinds cupmon does not decode.
    sizes: [u16; ActivityKind::SLOTS],
}

/// A CUPTI version cupmon has no measured layouts for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{version} has no record layout in this cupmon: it decodes {supported}",
    version = describe(self.version),
    supported = supported_versions()
)]
pub struct UnsupportedVersion {
    pub version: CuptiVersion,
}

/// `CUPTI 13.6 (API version 130600)`, or `CUPTI API version 17` when the number
/// names no release.
fn describe(version: CuptiVersion) -> String {
    let name = version.to_string();
    if name.starts_with("API version") {
        format!("CUPTI {name}")
    } else {
        format!("CUPTI {name} (API version {})", version.api())
    }
}

/// The versions cupmon decodes, for messages: `CUPTI 12.0-13.5 (cuptiGetVersion API
/// versions 18-24, 26-28, 130000-130599)`, from [`GENERATIONS`].
pub fn supported_versions() -> String {
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for g in GENERATIONS {
        match spans.last_mut() {
            Some(last) if last.1 + 1 == g.api_versions.0 => last.1 = g.api_versions.1,
            _ => spans.push(g.api_versions),
        }
    }
    let spans: Vec<String> = spans
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let first = GENERATIONS[0].name.split('-').next().unwrap_or_default();
    let last = GENERATIONS[GENERATIONS.len() - 1].name;
    let last = last.rsplit('-').next().unwrap_or(last);
    format!(
        "CUPTI {first}-{last} (cuptiGetVersion API versions {})",
        spans.join(", ")
    )
}

impl Layout {
    /// The layout CUPTI `version` writes, or an error for versions cupmon has not measured
    /// (older than 12.0, the unreleased 12.7, newer than 13.5): guessing would misread
    /// every record after the first whose struct grew.
    pub fn for_version(version: CuptiVersion) -> Result<Self, UnsupportedVersion> {
        let api = version.api();
        let generation = GENERATIONS
            .iter()
            .find(|g| (g.api_versions.0..=g.api_versions.1).contains(&api))
            .ok_or(UnsupportedVersion { version })?;
        let mut sizes = [0u16; ActivityKind::SLOTS];
        for family in FAMILIES {
            if let Some(s) = family.struct_for(api) {
                for kind in family.kinds {
                    if let Some(slot) = sizes.get_mut(kind.0 as usize) {
                        *slot = s.size as u16;
                    }
                }
            }
        }
        Ok(Self {
            version,
            generation,
            sizes,
        })
    }

    /// [`Layout::for_version`] for a raw `cuptiGetVersion` number (as dumps store it).
    pub fn for_api_version(api: u32) -> Result<Self, UnsupportedVersion> {
        Self::for_version(CuptiVersion::from_api(api))
    }

    /// The newest layout cupmon knows (CUPTI 13.5).
    pub fn newest() -> Self {
        let last = GENERATIONS[GENERATIONS.len() - 1].api_versions.0;
        Self::known(last)
    }

    /// CUPTI 13.0's layout (the version of the real fixtures).
    pub fn cupti_13_0() -> Self {
        Self::known(CuptiVersion::CUPTI_13_0.api())
    }

    fn known(api: u32) -> Self {
        match Self::for_api_version(api) {
            Ok(layout) => layout,
            Err(e) => unreachable!("{e}: a measured version"),
        }
    }

    pub fn version(&self) -> CuptiVersion {
        self.version
    }

    /// The measured range of versions this one belongs to.
    pub fn generation(&self) -> &'static Generation {
        self.generation
    }

    /// The struct written for `kind`; `None` for kinds cupmon does not decode.
    pub fn struct_layout(&self, kind: ActivityKind) -> Option<&'static StructVersion> {
        family_of(kind)?.struct_for(self.version.api())
    }

    /// Size in bytes of a record of CUPTI kind number `kind`; `None` for kinds cupmon
    /// does not decode. The decoder's hot path.
    #[inline]
    pub fn record_size(&self, kind: u32) -> Option<usize> {
        match self.sizes.get(kind as usize) {
            Some(&n) if n > 0 => Some(n as usize),
            _ => None,
        }
    }

    /// The fields of `kind`'s struct in this version (C names and offsets).
    pub fn fields(&self, kind: ActivityKind) -> impl Iterator<Item = &'static Field> + '_ {
        let api = self.version.api();
        family_of(kind)
            .into_iter()
            .flat_map(move |f| f.fields_for(api))
    }
}
