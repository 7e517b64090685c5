//! Runtime and driver API names by CUPTI callback id (`CUpti_runtime_api_trace_cbid`,
//! `CUpti_driver_api_trace_cbid`): CUPTI's vocabulary, from the generated table.

use std::borrow::Cow;

#[allow(clippy::all)]
#[rustfmt::skip]
#[path = "generated/cbid_names.rs"]
mod table;

/// The two CUPTI API domains whose records appear in a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiDomain {
    Runtime,
    Driver,
}

impl ApiDomain {
    fn table(self) -> &'static [(u32, &'static str)] {
        match self {
            Self::Runtime => table::RUNTIME,
            Self::Driver => table::DRIVER,
        }
    }

    /// The call's name (`_vNNNN` suffix stripped), if the table knows the id.
    pub fn known_name(self, cbid: u32) -> Option<&'static str> {
        let table = self.table();
        table
            .binary_search_by_key(&cbid, |&(id, _)| id)
            .ok()
            .map(|i| table[i].1)
    }

    /// The call's name, or `cbid_N` for an id the table does not know.
    pub fn name(self, cbid: i128) -> Cow<'static, str> {
        u32::try_from(cbid)
            .ok()
            .and_then(|id| self.known_name(id))
            .map_or_else(|| Cow::Owned(format!("cbid_{cbid}")), Cow::Borrowed)
    }

    /// Every callback id of this domain whose name is `name` (several for `_ptsz`
    /// variants etc.).
    pub fn cbids_named(self, name: &str) -> Vec<u32> {
        self.table()
            .iter()
            .filter(|&&(_, n)| n == name)
            .map(|&(id, _)| id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_strip_version_suffix_and_unknown_ids_get_placeholders() {
        assert_eq!(ApiDomain::Runtime.name(211), "cudaLaunchKernel");
        assert_eq!(ApiDomain::Driver.name(307), "cuLaunchKernel");
        assert_eq!(ApiDomain::Runtime.name(999_999), "cbid_999999");
        assert_eq!(ApiDomain::Driver.name(-3), "cbid_-3");
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        for domain in [ApiDomain::Runtime, ApiDomain::Driver] {
            assert!(domain.table().windows(2).all(|w| w[0].0 < w[1].0));
        }
    }

    #[test]
    fn variants_share_a_name() {
        assert!(ApiDomain::Runtime
            .cbids_named("cudaLaunchKernel")
            .contains(&211));
    }
}
