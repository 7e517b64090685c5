//! What a kernel launch is compared by: its name and launch configuration (grid and
//! block, which every kernel record carries). Two launches of one kernel with other
//! shapes do other work, so they are told apart.

use std::fmt;

use serde::Serialize;

/// A kernel name (demangled, as `cupmon stats` shows it) and its launch configuration.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct KernelKey {
    pub name: String,
    pub grid: [i32; 3],
    pub block: [i32; 3],
}

impl fmt::Display for KernelKey {
    /// `name <<<(g,g,g),(b,b,b)>>>`, CUDA's launch syntax.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        write!(f, "{} <<<({gx},{gy},{gz}),({bx},{by},{bz})>>>", self.name)
    }
}

/// Launches and their summed duration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub launches: u64,
    pub ns: u64,
}

impl Totals {
    pub fn add(&mut self, ns: u64) {
        self.launches += 1;
        self.ns += ns;
    }

    pub fn merge(&mut self, other: &Totals) {
        self.launches += other.launches;
        self.ns += other.ns;
    }
}
