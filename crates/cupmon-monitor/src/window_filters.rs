//! The noise filters of a trace window: API calls too frequent to be worth
//! a record (PyTorch's merge drops them anyway), switched off per callback id
//! when a window enables the API kinds.
//!
//! They are not switched back on afterwards: on the H200 (CUPTI 13.0),
//! re-enabling a call with `cuptiActivityEnable{Runtime,Driver}Api` records it
//! even while its activity kind is disabled, so the always-on dump filled with
//! `cudaGetDevice` records after a window. Each window sets them again.

use cupmon_cupti::Cupti;
use cupmon_records::ApiDomain;
use cupmon_window::{DRIVER_NOISE, RUNTIME_BLOCKLIST};

/// Switch off records of the noisy runtime and driver calls; returns how many
/// callback ids were switched off. CUPTI versions without per-call filters
/// record them all, and the merge drops them later.
pub(crate) fn set_noise_filters(cupti: &Cupti) -> usize {
    if !cupti.has_api_filters() {
        return 0;
    }
    let mut filtered = 0;
    for name in RUNTIME_BLOCKLIST {
        for cbid in ApiDomain::Runtime.cbids_named(name) {
            filtered += usize::from(cupti.enable_runtime_api(cbid, false).is_ok());
        }
    }
    for name in DRIVER_NOISE {
        for cbid in ApiDomain::Driver.cbids_named(name) {
            filtered += usize::from(cupti.enable_driver_api(cbid, false).is_ok());
        }
    }
    filtered
}
