//! The noise filters of a trace window: API calls too frequent to be worth
//! a record (the seed's merge drops them anyway), switched off per callback
//! id while the window's kinds are on, and back on afterwards.

use cupmon_cupti::Cupti;
use cupmon_trace::{cbids_named, ApiDomain, DRIVER_NOISE, RUNTIME_BLOCKLIST};

/// The callback ids a window switched off, to switch back on.
#[derive(Debug, Default)]
pub(crate) struct NoiseFilters {
    runtime: Vec<u32>,
    driver: Vec<u32>,
}

/// Switch off records of the noisy runtime and driver calls. CUPTI versions
/// without per-call filters record them all; the merge drops them later.
pub(crate) fn set_noise_filters(cupti: &Cupti) -> NoiseFilters {
    let mut filters = NoiseFilters::default();
    if !cupti.has_api_filters() {
        return filters;
    }
    for name in RUNTIME_BLOCKLIST {
        for cbid in cbids_named(ApiDomain::Runtime, name) {
            if cupti.enable_runtime_api(cbid, false).is_ok() {
                filters.runtime.push(cbid);
            }
        }
    }
    for name in DRIVER_NOISE {
        for cbid in cbids_named(ApiDomain::Driver, name) {
            if cupti.enable_driver_api(cbid, false).is_ok() {
                filters.driver.push(cbid);
            }
        }
    }
    filters
}

impl NoiseFilters {
    pub fn restore(self, cupti: &Cupti) {
        for cbid in self.runtime {
            let _ = cupti.enable_runtime_api(cbid, true);
        }
        for cbid in self.driver {
            let _ = cupti.enable_driver_api(cbid, true);
        }
    }
}
