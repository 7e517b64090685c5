//! Other callback subscribers of the process (torch.profiler's Kineto), served through
//! cupmon's one real subscription: before CUPTI 13.3 a process has one subscriber,
//! so when the injection library interposes `cuptiSubscribe`, each client gets a
//! handle of cupmon's, its enables are remembered here, and cupmon's callback hands
//! it every callback it enabled, as CUPTI would have.

use std::collections::BTreeSet;
use std::ffi::c_void;

use crate::raw::CallbackFn;

/// The domains `cuptiEnableAllDomains` covers (driver, runtime, resource,
/// synchronize, NVTX, state).
pub(crate) const ALL_DOMAINS: std::ops::RangeInclusive<u32> = 1..=6;

/// What one client enabled, with CUPTI's rules: a domain enabled whole, less the
/// callbacks disabled in it afterwards, plus callbacks enabled one by one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Interest {
    pub domains: BTreeSet<u32>,
    pub except: BTreeSet<(u32, u32)>,
    pub callbacks: BTreeSet<(u32, u32)>,
}

impl Interest {
    #[inline]
    pub fn wants(&self, domain: u32, cbid: u32) -> bool {
        if self.domains.contains(&domain) {
            !self.except.contains(&(domain, cbid))
        } else {
            self.callbacks.contains(&(domain, cbid))
        }
    }

    pub fn enable_callback(&mut self, enable: bool, domain: u32, cbid: u32) {
        let key = (domain, cbid);
        match (self.domains.contains(&domain), enable) {
            (true, true) => {
                self.except.remove(&key);
            }
            (true, false) => {
                self.except.insert(key);
            }
            (false, true) => {
                self.callbacks.insert(key);
            }
            (false, false) => {
                self.callbacks.remove(&key);
            }
        }
    }

    pub fn enable_domain(&mut self, enable: bool, domain: u32) {
        self.except.retain(|&(d, _)| d != domain);
        self.callbacks.retain(|&(d, _)| d != domain);
        if enable {
            self.domains.insert(domain);
        } else {
            self.domains.remove(&domain);
        }
    }
}

/// A client's callback and interest.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    pub callback: CallbackFn,
    pub userdata: usize,
    pub interest: Interest,
}

impl Client {
    /// Hands one callback to the client.
    ///
    /// # Safety
    /// `data` must be the callback data CUPTI passed for `(domain, cbid)`.
    pub unsafe fn call(&self, domain: u32, cbid: u32, data: *const c_void) {
        // SAFETY: the client registered this function with `cuptiSubscribe` as a
        // CUPTI callback, with this userdata; it gets what CUPTI would pass it.
        unsafe { (self.callback)(self.userdata as *mut c_void, domain, cbid, data) }
    }
}

/// Client handles are addresses in this array (one byte per slot), so they can never
/// be mistaken for CUPTI's own handles.
pub(crate) const MAX_CLIENTS: usize = 64;
static HANDLE_SLOTS: [u8; MAX_CLIENTS] = [0; MAX_CLIENTS];

/// The handle of client slot `slot`.
pub(crate) fn handle_of(slot: usize) -> *mut c_void {
    HANDLE_SLOTS[slot..].as_ptr() as *mut c_void
}

/// The slot of a client handle; `None` for any other pointer.
pub(crate) fn slot_of(handle: *mut c_void) -> Option<usize> {
    let base = HANDLE_SLOTS.as_ptr() as usize;
    let at = (handle as usize).checked_sub(base)?;
    (at < MAX_CLIENTS).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interest_follows_cuptis_rules() {
        let mut i = Interest::default();
        i.enable_callback(true, 3, 1);
        assert!(i.wants(3, 1) && !i.wants(3, 2));
        i.enable_domain(true, 2);
        assert!(i.wants(2, 211) && i.wants(2, 5));
        i.enable_callback(false, 2, 211);
        assert!(!i.wants(2, 211) && i.wants(2, 5));
        i.enable_domain(false, 2);
        assert!(!i.wants(2, 5));
        i.enable_domain(false, 3);
        assert!(
            !i.wants(3, 1),
            "disabling a domain ends its single callbacks too"
        );
    }

    #[test]
    fn client_handles_are_told_apart() {
        assert_eq!(slot_of(handle_of(5)), Some(5));
        assert_eq!(slot_of(std::ptr::null_mut()), None);
        let other = 0x1234usize as *mut c_void;
        assert_eq!(slot_of(other), None);
    }
}
