//! CUPTI versions as a dump records them: `cuptiGetVersion`'s API version
//! (`CUPTI_API_VERSION`), e.g. 18 for CUDA 12.0, 130001 for CUPTI 13.0 update 1.

use std::fmt;

/// A CUPTI API version as `cuptiGetVersion` returns it and `cupti_monitor_meta.bin`
/// stores it (`cupti_version`). 12.x numbers its API versions 18..28; 13.0 on uses
/// `major * 10000 + minor * 100 + patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CuptiVersion(u32);

impl CuptiVersion {
    /// The version CUPTI 13.0 reports (the fixtures' version).
    pub const CUPTI_13_0: CuptiVersion = CuptiVersion(130_000);

    /// Wrap an API version exactly as `cuptiGetVersion` returned it.
    pub const fn from_api(api_version: u32) -> Self {
        Self(api_version)
    }

    /// The API version of the first release of CUPTI `major.minor`, if cupmon knows it.
    pub const fn release(major: u32, minor: u32) -> Option<Self> {
        let api = match (major, minor) {
            (12, 0 | 1) => 18,
            (12, 2) => 20,
            (12, 3) => 21,
            (12, 4) => 22,
            (12, 5) => 23,
            (12, 6) => 24,
            (12, 8) => 26,
            (12, 9) => 27,
            (13.., 0..=99) => major * 10_000 + minor * 100,
            _ => return None,
        };
        Some(Self(api))
    }

    /// The raw API version.
    pub const fn api(self) -> u32 {
        self.0
    }

    /// The CUDA release name (`"13.0"`, `"12.3"`, `"12.0/12.1"`), if the API version maps to one.
    fn release_name(self) -> Option<&'static str> {
        Some(match self.0 {
            18 => "12.0/12.1",
            19 => "12.1/12.2",
            20 => "12.2",
            21 => "12.3",
            22 => "12.4",
            23 => "12.5",
            24 => "12.6",
            26 => "12.8",
            27 | 28 => "12.9",
            _ => return None,
        })
    }
}

impl fmt::Display for CuptiVersion {
    /// `13.0` for 13.x API versions, the release for known 12.x ones, else `API version N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.release_name() {
            f.write_str(name)
        } else if self.0 >= 130_000 {
            write!(f, "{}.{}", self.0 / 10_000, (self.0 / 100) % 100)
        } else {
            write!(f, "API version {}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_release() {
        assert_eq!(CuptiVersion::from_api(130_001).to_string(), "13.0");
        assert_eq!(CuptiVersion::from_api(130_502).to_string(), "13.5");
        assert_eq!(CuptiVersion::from_api(21).to_string(), "12.3");
        assert_eq!(CuptiVersion::from_api(25).to_string(), "API version 25");
        assert_eq!(
            CuptiVersion::release(13, 4),
            Some(CuptiVersion::from_api(130_400))
        );
        assert_eq!(CuptiVersion::release(12, 7), None);
    }
}
