//! Names given to NVTX categories (`nvtxNameCategory*`, `nvtxDomainNameCategory*`),
//! shown as a range's or mark's `category` in traces instead of its number.
//!
//! Programs rarely name categories: until one does, a range with a category costs no
//! lookup (one relaxed load); after, a read lock per range or mark with a category.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use cupmon_monitor::RangeCategory;

use super::ranges::DomainKey;

/// Most category names kept (a program naming categories in a loop must not grow
/// memory forever): later ones show as numbers.
const MAX_NAMES: usize = 4096;

static ANY_NAMED: AtomicBool = AtomicBool::new(false);
static NAMES: RwLock<Option<HashMap<(DomainKey, u32), &'static str>>> = RwLock::new(None);

/// `nvtxDomainNameCategory*`: `category` of `domain` is called `name` from now on.
pub(crate) fn name(domain: DomainKey, category: u32, name: String) {
    let mut names = NAMES.write().unwrap_or_else(|p| p.into_inner());
    let names = names.get_or_insert_with(HashMap::new);
    if names.len() >= MAX_NAMES && !names.contains_key(&(domain, category)) {
        return;
    }
    // Leaked: a name lives as long as the process, as NVTX's do (and once per name).
    let name: &'static str = Box::leak(name.into_boxed_str());
    names.insert((domain, category), name);
    ANY_NAMED.store(true, Ordering::Release);
}

/// `category` of `domain` as traces show it.
pub(crate) fn of(domain: DomainKey, category: u32) -> RangeCategory {
    if category == 0 {
        return RangeCategory::None;
    }
    if ANY_NAMED.load(Ordering::Acquire) {
        let names = NAMES.read().unwrap_or_else(|p| p.into_inner());
        if let Some(&name) = names.as_ref().and_then(|n| n.get(&(domain, category))) {
            return RangeCategory::Named(name);
        }
    }
    RangeCategory::Number(category)
}
