//! The export's pool of distinct strings (kernel names, API names, copy kinds) and
//! the [`Sym`]s rows hold instead of strings: a `Sym` is a dense id, so a chunk's
//! dictionary finds a string's index with an array lookup, never a hash.

use parquet::data_type::ByteArray;
use rustc_hash::FxHashMap;

/// A string of a [`Strings`] pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Sym(u32);

/// The distinct strings of an export (kernel names, API names, copy kinds), each
/// stored once; rows hold [`Sym`]s.
#[derive(Debug, Default)]
pub struct Strings {
    values: Vec<ByteArray>,
    index: FxHashMap<Box<str>, Sym>,
    /// The word of each (table, value) of CUPTI's enums, interned once.
    words: FxHashMap<(u8, u16), Sym>,
}

impl Strings {
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&sym) = self.index.get(s) {
            return sym;
        }
        let sym = Sym(self.values.len() as u32);
        self.values.push(ByteArray::from(s.as_bytes().to_vec()));
        self.index.insert(s.into(), sym);
        sym
    }

    /// The string `word` makes of value `v` of enum table `table`: made and
    /// interned once per value, not per row (copy and memory kinds).
    #[inline]
    pub fn word(
        &mut self,
        table: u8,
        v: u16,
        word: impl FnOnce(u16) -> std::borrow::Cow<'static, str>,
    ) -> Sym {
        if let Some(&sym) = self.words.get(&(table, v)) {
            return sym;
        }
        let sym = self.intern(&word(v));
        self.words.insert((table, v), sym);
        sym
    }

    pub(crate) fn get(&self, sym: Sym) -> &ByteArray {
        &self.values[sym.0 as usize]
    }

    /// Strings so far: every [`Sym`] is below this.
    pub fn len(&self) -> usize {
        self.values.len()
    }
}

impl Sym {
    /// The dense id (0, 1, 2, ... in the order the strings were interned).
    pub(crate) fn id(self) -> u32 {
        self.0
    }

    pub(crate) fn from_id(id: u32) -> Self {
        Self(id)
    }
}
