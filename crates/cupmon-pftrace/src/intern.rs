//! Interning tables: each distinct string is written once, in the packet's
//! `InternedData`, and referred to by its iid afterwards. A table stops
//! taking new strings at its cap, so that unique-per-event strings (a step
//! number in an annotation name) cannot make the writer's memory grow with the
//! trace: past the cap they are written inline.

use rustc_hash::FxHashMap;

use crate::fields::interned;
use crate::wire;

/// What [`Interner::lookup`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Iid {
    /// Written before; refer to it.
    Known(u64),
    /// New: the entry has been queued for the next packet's `InternedData`.
    New(u64),
    /// Table full (or string too long): write the string inline.
    Inline,
}

impl Iid {
    pub fn get(self) -> Option<u64> {
        match self {
            Iid::Known(i) | Iid::New(i) => Some(i),
            Iid::Inline => None,
        }
    }
}

/// One kind of interned string (event names, categories, ...).
#[derive(Debug)]
pub(crate) struct Interner {
    /// `InternedData` field that holds this kind's entries.
    field: u32,
    ids: FxHashMap<Box<str>, u64>,
    cap: usize,
    max_len: usize,
    /// Strings written inline because the table was full or they were long.
    pub inline: u64,
}

impl Interner {
    pub fn new(field: u32, cap: usize, max_len: usize) -> Self {
        Self {
            field,
            ids: FxHashMap::default(),
            cap,
            max_len,
            inline: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The iid of `s`; a new entry is encoded into `pending` (the body of
    /// the `InternedData` that the next written packet carries).
    #[inline]
    pub fn lookup(&mut self, s: &str, pending: &mut Vec<u8>) -> Iid {
        if let Some(&iid) = self.ids.get(s) {
            return Iid::Known(iid);
        }
        if self.ids.len() >= self.cap || s.len() > self.max_len {
            self.inline += 1;
            return Iid::Inline;
        }
        // iid 0 means "not set" to Perfetto's readers.
        let iid = self.ids.len() as u64 + 1;
        self.ids.insert(s.into(), iid);
        let at = wire::begin(pending, self.field);
        wire::uint(pending, interned::ENTRY_IID, iid);
        wire::bytes(pending, interned::ENTRY_NAME, s.as_bytes());
        wire::end(pending, at);
        Iid::New(iid)
    }
}

/// The tables of one packet sequence.
#[derive(Debug)]
pub(crate) struct Tables {
    pub names: Interner,
    pub categories: Interner,
    pub arg_names: Interner,
    pub string_values: Interner,
    /// Encoded `InternedData` entries not yet written.
    pub pending: Vec<u8>,
}

/// Longest string value worth interning: long values are rarely repeated.
const MAX_INTERNED_VALUE_LEN: usize = 256;

impl Tables {
    pub fn new(cap: usize) -> Self {
        Self {
            names: Interner::new(interned::EVENT_NAMES, cap, usize::MAX),
            categories: Interner::new(interned::EVENT_CATEGORIES, cap, usize::MAX),
            arg_names: Interner::new(interned::DEBUG_ANNOTATION_NAMES, cap, usize::MAX),
            string_values: Interner::new(
                interned::DEBUG_ANNOTATION_STRING_VALUES,
                cap,
                MAX_INTERNED_VALUE_LEN,
            ),
            pending: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_gets_one_iid_and_one_entry() {
        let mut pending = Vec::new();
        let mut t = Interner::new(2, 10, usize::MAX);
        assert_eq!(t.lookup("gemm", &mut pending), Iid::New(1));
        let after_first = pending.len();
        assert_eq!(t.lookup("gemm", &mut pending), Iid::Known(1));
        assert_eq!(pending.len(), after_first, "no second entry");
        assert_eq!(t.lookup("relu", &mut pending), Iid::New(2));
    }

    #[test]
    fn past_the_cap_strings_go_inline() {
        let mut pending = Vec::new();
        let mut t = Interner::new(2, 2, usize::MAX);
        t.lookup("a", &mut pending);
        t.lookup("b", &mut pending);
        assert_eq!(t.lookup("c", &mut pending), Iid::Inline);
        assert_eq!(t.lookup("a", &mut pending), Iid::Known(1));
        assert_eq!((t.len(), t.inline), (2, 1));
    }

    #[test]
    fn long_strings_go_inline() {
        let mut pending = Vec::new();
        let mut t = Interner::new(29, 10, 3);
        assert_eq!(t.lookup("long", &mut pending), Iid::Inline);
        assert!(pending.is_empty());
    }
}
