//! Each kernel row's name, by its name pointer: resolved, demangled and parsed
//! once per pointer (a map), then found per row in a small direct-mapped array in
//! front of the map (one multiply, one load, one compare: the map's probe was a
//! tenth of taking a kernel record in, bench/parquet/RESULTS.md).

use rustc_hash::FxHashMap;

use crate::encode::Sym;

/// What a kernel row takes from its name: the name, whether the dump named the
/// pointer, the NCCL collective it names.
pub type KernelName = (Sym, bool, Option<Sym>);

/// Slots of the array (a power of two).
const SLOTS: usize = 512;

#[derive(Debug)]
pub struct NameCache {
    slots: Vec<Option<(u64, KernelName)>>,
    map: FxHashMap<u64, KernelName>,
}

impl Default for NameCache {
    fn default() -> Self {
        Self {
            slots: vec![None; SLOTS],
            map: FxHashMap::default(),
        }
    }
}

impl NameCache {
    /// The name of `ptr`, made by `make` the first time.
    #[inline]
    pub fn get(&mut self, ptr: u64, make: impl FnOnce() -> KernelName) -> KernelName {
        let slot = (ptr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 55) as usize % SLOTS;
        if let Some((p, name)) = self.slots[slot] {
            if p == ptr {
                return name;
            }
        }
        let name = *self.map.entry(ptr).or_insert_with(make);
        self.slots[slot] = Some((ptr, name));
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pointer_keeps_its_own_name_through_collisions() {
        let mut cache = NameCache::default();
        let name = |i: u64| (Sym::from_id(i as u32), i.is_multiple_of(2), None);
        for round in 0..3 {
            for i in 0..5000u64 {
                let ptr = 0x7fbb_0000_0000 + i * 0x40;
                let got = cache.get(ptr, || {
                    assert_eq!(round, 0, "made again: {ptr:#x}");
                    name(i)
                });
                assert_eq!(got, name(i));
            }
        }
    }
}
