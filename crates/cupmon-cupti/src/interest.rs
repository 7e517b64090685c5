//! Who wants which activity kinds. CUPTI has one switch per kind for the whole
//! process; when cupmon shares CUPTI with other clients (it interposes their
//! calls, see cupmon-inject), a kind is on while anyone wants it, and one
//! owner turning it off must not switch it off for the others.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

use crate::{ActivityKind, Cupti, CuptiError};

/// Whose interest: cupmon's own, or another CUPTI client's (by number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    Cupmon,
    Client(usize),
}

static INTEREST: Mutex<BTreeMap<u32, BTreeSet<Owner>>> = Mutex::new(BTreeMap::new());

fn lock() -> MutexGuard<'static, BTreeMap<u32, BTreeSet<Owner>>> {
    INTEREST.lock().unwrap_or_else(|p| p.into_inner())
}

impl Cupti {
    /// Turn `kind` on for `owner`. CUPTI is always called (enabling twice is
    /// harmless, and CUPTI may have been reset behind the registry's back).
    pub fn enable_for(&self, owner: Owner, kind: ActivityKind) -> Result<(), CuptiError> {
        let mut interest = lock();
        self.enable_raw(kind)?;
        interest.entry(kind.0).or_default().insert(owner);
        Ok(())
    }

    /// Turn `kind` off for `owner`; CUPTI switches it off only when no other
    /// owner wants it.
    pub fn disable_for(&self, owner: Owner, kind: ActivityKind) -> Result<(), CuptiError> {
        let mut interest = lock();
        let Some(owners) = interest.get_mut(&kind.0) else {
            return Ok(());
        };
        if owners.remove(&owner) && owners.is_empty() {
            self.disable_raw(kind)?;
        }
        Ok(())
    }

    /// The kinds `owner` has turned on.
    pub fn kinds_of(&self, owner: Owner) -> Vec<ActivityKind> {
        lock()
            .iter()
            .filter(|(_, owners)| owners.contains(&owner))
            .map(|(&k, _)| ActivityKind(k))
            .collect()
    }

    /// Forget everything `owner` wanted (a client that finalized CUPTI).
    pub fn release_all(&self, owner: Owner) {
        for kind in self.kinds_of(owner) {
            let _ = self.disable_for(owner, kind);
        }
    }

    /// Disable and enable `kind` again if anyone wants it (to get a stalled CUPTI
    /// going); a kind nobody wants is left off.
    pub fn cycle(&self, kind: ActivityKind) -> Result<(), CuptiError> {
        let interest = lock();
        if !interest
            .get(&kind.0)
            .is_some_and(|owners| !owners.is_empty())
        {
            return Ok(());
        }
        self.disable_raw(kind)?;
        self.enable_raw(kind)
    }

    /// Turn every kind someone wants on again (after CUPTI was reset under cupmon).
    pub fn reenable_all(&self) -> Result<(), CuptiError> {
        for (&kind, owners) in lock().iter() {
            if !owners.is_empty() {
                self.enable_raw(ActivityKind(kind))?;
            }
        }
        Ok(())
    }
}
