//! The dictionary of one column chunk: each row's value (a [`Sym`] of the
//! export's strings, or an integer) becomes an index into the chunk's own list of
//! distinct values, in the order they first occur. A `Sym` is a dense id, so its
//! index is an array lookup; integers whose range in the chunk is small (devices,
//! streams, grid and block sizes, registers) use an array over `min..=max` the same
//! way, and only wide ones (byte counts, graph ids) a hash map. No string is
//! hashed or compared per row.

use parquet::basic::Type as PhysicalType;
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::schema::types::ColumnDescPtr;
use rustc_hash::FxHashMap;

use super::symbols::{Strings, Sym};

/// Entries an array over an integer range may have: at least this many, or as
/// many as the chunk has rows (the array is reused, and reset entry by entry).
const DENSE_MIN: u64 = 1 << 16;

/// How the values of the chunk being mapped find their index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// `slots[key - base]`.
    Dense { base: i64 },
    /// `map[key]`.
    Sparse,
}

/// A chunk's dictionary being built, and its rows' indices; reused from chunk to
/// chunk.
#[derive(Debug)]
pub struct LocalDict {
    keys: Keys,
    /// Index + 1 of each dense key (0: not in the chunk yet).
    slots: Vec<u32>,
    map: FxHashMap<i64, u32>,
    /// The entries, in index order: integers, or `Sym` ids.
    entries: Vec<i64>,
    /// Per present row in write order.
    pub indices: Vec<u32>,
}

impl Default for LocalDict {
    fn default() -> Self {
        Self {
            keys: Keys::Sparse,
            slots: Vec::new(),
            map: FxHashMap::default(),
            entries: Vec::new(),
            indices: Vec::new(),
        }
    }
}

impl LocalDict {
    /// Start a chunk of `rows` strings of `strings`.
    pub fn begin_syms(&mut self, strings: &Strings, rows: usize) {
        self.begin(Keys::Dense { base: 0 }, strings.len() as u64, rows);
    }

    /// Start a chunk of one entry, `v`, in every row (no row is mapped).
    pub fn one_int(&mut self, v: i64) {
        self.begin(Keys::Sparse, 0, 0);
        self.entries.push(v);
    }

    /// Start a chunk of `rows` integers in `min..=max`.
    pub fn begin_ints(&mut self, min: i64, max: i64, rows: usize) {
        let span = (max as i128 - min as i128) as u128 + 1;
        let limit = DENSE_MIN.max(rows as u64);
        if span <= u128::from(limit) {
            self.begin(Keys::Dense { base: min }, span as u64, rows);
        } else {
            self.begin(Keys::Sparse, 0, rows);
        }
    }

    fn begin(&mut self, keys: Keys, slots: u64, rows: usize) {
        self.keys = keys;
        if self.slots.len() < slots as usize {
            self.slots.resize(slots as usize, 0);
        }
        self.entries.clear();
        self.indices.clear();
        self.indices.reserve(rows);
    }

    /// Map every value of `values` (the chunk's rows in write order, none NULL).
    #[inline]
    pub fn map_ints(&mut self, values: impl Iterator<Item = i64>) {
        let (slots, entries) = (&mut self.slots, &mut self.entries);
        match self.keys {
            // One branch per value; `extend` of a mapped slice iterator writes
            // without a capacity check per row.
            Keys::Dense { base } => self
                .indices
                .extend(values.map(|v| dense(slots, entries, v, base))),
            Keys::Sparse => {
                let map = &mut self.map;
                self.indices.extend(values.map(|v| sparse(map, entries, v)));
            }
        }
    }

    /// [`LocalDict::map_ints`] for strings.
    #[inline]
    pub fn map_syms(&mut self, values: impl Iterator<Item = Sym>) {
        let (slots, entries) = (&mut self.slots, &mut self.entries);
        self.indices
            .extend(values.map(|s| dense(slots, entries, i64::from(s.id()), 0)));
    }

    /// One value (rows with NULLs among them).
    #[inline]
    pub fn push_int(&mut self, v: i64) {
        let i = self.index_int(v);
        self.indices.push(i);
    }

    /// The index of `v` (rows mapped through their launch shape, `crate::encode::shapes`).
    #[inline]
    pub fn index_int(&mut self, v: i64) -> u32 {
        match self.keys {
            Keys::Dense { base } => dense(&mut self.slots, &mut self.entries, v, base),
            Keys::Sparse => sparse(&mut self.map, &mut self.entries, v),
        }
    }

    #[inline]
    pub fn index_sym(&mut self, s: Sym) -> u32 {
        dense(&mut self.slots, &mut self.entries, i64::from(s.id()), 0)
    }

    #[inline]
    pub fn push_sym(&mut self, s: Sym) {
        let i = self.index_sym(s);
        self.indices.push(i);
    }

    /// Forget the chunk's keys (its entries and indices stay until the next
    /// `begin`).
    pub fn end(&mut self) {
        match self.keys {
            Keys::Dense { base } => {
                for &v in &self.entries {
                    self.slots[v.wrapping_sub(base) as usize] = 0;
                }
            }
            Keys::Sparse => self.map.clear(),
        }
    }

    pub fn entries(&self) -> usize {
        self.entries.len()
    }

    /// The integer entries PLAIN-encoded as `physical` (INT32 or INT64) into `out`.
    pub fn plain_ints(&self, physical: PhysicalType, out: &mut Vec<u8>) {
        out.clear();
        match physical {
            PhysicalType::INT32 => {
                for &v in &self.entries {
                    out.extend_from_slice(&(v as i32).to_le_bytes());
                }
            }
            _ => {
                for &v in &self.entries {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    }

    /// The string entries PLAIN-encoded (4-byte length, bytes) into `out`.
    pub fn plain_strings(&self, strings: &Strings, out: &mut Vec<u8>) {
        out.clear();
        for &id in &self.entries {
            let s = strings.get(Sym::from_id(id as u32)).data();
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s);
        }
    }
}

/// The index of `v` in an array over keys from `base`.
#[inline(always)]
fn dense(slots: &mut [u32], entries: &mut Vec<i64>, v: i64, base: i64) -> u32 {
    let slot = &mut slots[v.wrapping_sub(base) as usize];
    if *slot == 0 {
        entries.push(v);
        *slot = entries.len() as u32;
    }
    *slot - 1
}

/// The index of `v` in a hash map.
#[inline(always)]
fn sparse(map: &mut FxHashMap<i64, u32>, entries: &mut Vec<i64>, v: i64) -> u32 {
    let next = entries.len() as u32;
    let i = *map.entry(v).or_insert(next);
    if i == next {
        entries.push(v);
    }
    i
}

/// Smallest and largest of `values` (`None` when empty), in one pass.
pub fn min_max<T: Ord + Copy>(mut values: impl Iterator<Item = T>) -> Option<(T, T)> {
    let first = values.next()?;
    Some(values.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v))))
}

/// An integer column chunk's statistics as the parquet crate's writer gives them.
pub fn int_statistics(
    descr: &ColumnDescPtr,
    range: Option<(i64, i64)>,
    distinct: Option<u64>,
    nulls: u64,
) -> Statistics {
    let signed = descr.sort_order().is_signed();
    let (min, max) = (range.map(|r| r.0), range.map(|r| r.1));
    match descr.physical_type() {
        PhysicalType::INT32 => Statistics::from(
            ValueStatistics::<i32>::new(
                min.map(|v| v as i32),
                max.map(|v| v as i32),
                distinct,
                Some(nulls),
                false,
            )
            .with_backwards_compatible_min_max(signed),
        ),
        _ => Statistics::from(
            ValueStatistics::<i64>::new(min, max, distinct, Some(nulls), false)
                .with_backwards_compatible_min_max(signed),
        ),
    }
}
