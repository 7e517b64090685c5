//! Python's dict assignment over an insertion-ordered list, in linear time:
//! a repeated key keeps its first place and takes the new value.
//!
//! Small objects (an event's fields, an annotation's few keys) are searched
//! linearly, which is faster than hashing them; past [`LINEAR_MAX`] members the
//! keys go into a hash index, so that an object with 200,000 members costs
//! 200,000 look-ups instead of 2 * 10^10 comparisons.

use rustc_hash::FxHashMap;

/// Members searched linearly before the index is built.
const LINEAR_MAX: usize = 16;

/// The position of each key of a list whose items carry a key.
#[derive(Debug, Default)]
pub(crate) struct DictSlots {
    index: Option<FxHashMap<String, usize>>,
}

impl DictSlots {
    /// Where `key` already is in `items`, if anywhere.
    #[inline]
    pub fn find<T>(&self, items: &[T], key_of: impl Fn(&T) -> &str, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => items.iter().position(|item| key_of(item) == key),
        }
    }

    /// Record the item just pushed onto `items` (whose key [`Self::find`] did not find).
    #[inline]
    pub fn pushed<T>(&mut self, items: &[T], key_of: impl Fn(&T) -> &str) {
        match &mut self.index {
            Some(index) => {
                if let Some(last) = items.last() {
                    index.insert(key_of(last).to_owned(), items.len() - 1);
                }
            }
            None if items.len() > LINEAR_MAX => {
                let mut index =
                    FxHashMap::with_capacity_and_hasher(items.len() * 2, Default::default());
                for (i, item) in items.iter().enumerate() {
                    index.insert(key_of(item).to_owned(), i);
                }
                self.index = Some(index);
            }
            None => {}
        }
    }
}

/// Assign `key = value` into an ordered list of pairs, as a Python dict does.
#[inline]
pub(crate) fn dict_set<V>(
    items: &mut Vec<(String, V)>,
    slots: &mut DictSlots,
    key: String,
    value: V,
) {
    match slots.find(items, |(k, _)| k, &key) {
        Some(i) => items[i].1 = value,
        None => {
            items.push((key, value));
            slots.pushed(items, |(k, _)| k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_keep_their_first_place_and_take_the_last_value() {
        for n in [3, LINEAR_MAX, LINEAR_MAX + 1, 1000] {
            let mut items = Vec::new();
            let mut slots = DictSlots::default();
            for round in 0..3 {
                for i in 0..n {
                    dict_set(&mut items, &mut slots, format!("k{i}"), round * n + i);
                }
            }
            assert_eq!(items.len(), n);
            for (i, (k, v)) in items.iter().enumerate() {
                assert_eq!(k, &format!("k{i}"));
                assert_eq!(*v, 2 * n + i);
            }
        }
    }
}
