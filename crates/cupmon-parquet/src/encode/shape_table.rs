//! Launch shapes: the columns of a kernel row that the launch fixes (name, device,
//! context, stream, grid, block, registers, shared memory) held once per distinct
//! combination ([`ShapeTable`]), each row keeping only its shape's number. A
//! training job launches the same few shapes again and again (63 in the 885,097
//! kernels of the H200 recording, bench/parquet/RESULTS.md), so a row costs one
//! hash lookup and four bytes instead of thirteen pushes and 52 bytes. The shape
//! columns themselves are in [`super::shapes`].

use rustc_hash::FxHashMap;

use super::symbols::Sym;

/// What a launch fixes of its kernel row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub name: Sym,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers_per_thread: i32,
    pub static_shared_memory: i32,
    pub dynamic_shared_memory: i32,
}

impl Shape {
    /// The fields that tell launches apart most often, as two words: what the hash
    /// and the direct-mapped slot take. Shapes that differ only in the other fields
    /// share them and are told apart by `Eq`.
    #[inline(always)]
    fn key(&self) -> [u64; 2] {
        [
            u64::from(self.name.id()) << 32 | u64::from(self.stream),
            (self.grid[0] as u32 as u64) << 32 | self.block[0] as u32 as u64,
        ]
    }

    /// A slot of [`ShapeTable`]'s direct-mapped array.
    #[inline(always)]
    fn slot(&self) -> usize {
        let [a, b] = self.key();
        let h = (a ^ b.rotate_left(17)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - SLOT_BITS)) as usize
    }
}

/// A shape is hashed for every row it is not found in its slot for, by [`Shape::key`].
impl std::hash::Hash for Shape {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let [a, b] = self.key();
        h.write_u64(a);
        h.write_u64(b);
    }
}

/// Slots of the direct-mapped array in front of the shape map: a training job's
/// few dozen shapes find their slot free, so a row's lookup is one multiply, one
/// load and one compare that succeeds (the map's probe mispredicted often enough to
/// be the most expensive part of taking a kernel row in).
const SLOT_BITS: u32 = 9;

/// The shapes of a row group's rows, and each row's shape.
#[derive(Debug)]
pub struct ShapeTable {
    /// Per row, its shape's index in `shapes`.
    pub(super) rows: Vec<u32>,
    pub(super) shapes: Vec<Shape>,
    index: FxHashMap<Shape, u32>,
    /// Per slot ([`Shape::slot`]), the index of a shape that hashes there, or
    /// `u32::MAX`.
    slots: Vec<u32>,
}

impl Default for ShapeTable {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            shapes: Vec::new(),
            index: FxHashMap::default(),
            slots: vec![u32::MAX; 1 << SLOT_BITS],
        }
    }
}

impl ShapeTable {
    #[inline]
    pub fn push(&mut self, shape: Shape) {
        let slot = shape.slot();
        let cached = self.slots[slot];
        let i = match self.shapes.get(cached as usize) {
            Some(s) if *s == shape => cached,
            _ => {
                let next = self.shapes.len() as u32;
                let i = *self.index.entry(shape).or_insert(next);
                if i == next {
                    self.shapes.push(shape);
                }
                self.slots[slot] = i;
                i
            }
        };
        self.rows.push(i);
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.shapes.clear();
        self.index.clear();
        self.slots.fill(u32::MAX);
    }

    pub fn reserve(&mut self, additional: usize) {
        self.rows.reserve_exact(additional);
        cupmon_hugepages::advise_spare(&mut self.rows);
    }

    /// Row `i`'s shape.
    #[cfg(test)]
    pub fn get(&self, i: usize) -> &Shape {
        &self.shapes[self.rows[i] as usize]
    }
}

/// A row group's shapes in its write order: computed once for the thirteen
/// columns.
#[derive(Debug)]
pub struct ShapeRows<'a> {
    pub(super) table: &'a ShapeTable,
    /// The write order of the rows ([`WriteCtx::order`]).
    pub(super) order: Option<&'a [u32]>,
    /// The shapes in the order of their first row (in write order).
    pub(super) first_seen: Vec<u32>,
}

impl ShapeTable {
    /// The rows' shapes in write order (`order`: as in [`WriteCtx::order`]).
    pub fn in_write_order<'a>(&'a self, order: Option<&'a [u32]>) -> ShapeRows<'a> {
        let mut seen = vec![false; self.shapes.len()];
        let mut first_seen = Vec::with_capacity(self.shapes.len());
        let mut see = |s: u32| {
            if !std::mem::replace(&mut seen[s as usize], true) {
                first_seen.push(s);
            }
        };
        match order {
            Some(order) => order.iter().for_each(|&i| see(self.rows[i as usize])),
            None => self.rows.iter().for_each(|&s| see(s)),
        }
        ShapeRows {
            table: self,
            order,
            first_seen,
        }
    }
}

impl ShapeRows<'_> {
    /// Rows in the row group.
    pub(super) fn len(&self) -> usize {
        self.table.rows.len()
    }

    /// The `i`-th row's shape, in write order.
    #[cfg(test)]
    pub(super) fn in_order(&self, i: usize) -> u32 {
        match self.order {
            Some(order) => self.table.rows[order[i] as usize],
            None => self.table.rows[i],
        }
    }
}
