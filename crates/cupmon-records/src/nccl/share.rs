//! How much of a process's GPU time went to NCCL's collectives: per device, the union of
//! the NCCL kernels' intervals against the union of all kernels' (so that NCCL running
//! beside compute is counted once), the part with no other kernel running, and the
//! collectives by kernel time. What `cupmon stats` prints as "waiting in collectives".

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::NcclKernel;
use crate::dump::KernelNameTable;
use crate::{IntervalUnion, KernelRecord};

/// One device's kernel time, NCCL's part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCollectiveTime {
    pub device: u32,
    /// Timed kernels, and the NCCL ones among them.
    pub kernels: u64,
    pub nccl_kernels: u64,
    /// The union of all kernels' intervals: time the device ran at least one kernel.
    pub busy_ns: u64,
    /// The union of the NCCL kernels' intervals.
    pub nccl_ns: u64,
    /// Time with an NCCL kernel and no other kernel running: `busy_ns` less the union
    /// of the other kernels' intervals.
    pub nccl_alone_ns: u64,
    /// How much the figures above may be too high (kernels that came far out of time
    /// order in a very large dump; see [`IntervalUnion::total`]); usually 0.
    pub uncertain_ns: u64,
}

impl DeviceCollectiveTime {
    /// `nccl_ns / busy_ns`, when the device was busy.
    pub fn nccl_share(&self) -> Option<f64> {
        (self.busy_ns > 0).then(|| self.nccl_ns as f64 / self.busy_ns as f64)
    }

    /// `nccl_alone_ns / busy_ns`.
    pub fn nccl_alone_share(&self) -> Option<f64> {
        (self.busy_ns > 0).then(|| self.nccl_alone_ns as f64 / self.busy_ns as f64)
    }
}

/// The kernel time of one collective (all devices).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectiveTime {
    /// The collective and, where the kernel name gives it, the type (`AllReduce bf16`);
    /// `any collective (generic kernel)` for NCCL's generic kernel, `unrecognised NCCL
    /// kernel` for a name of no known scheme.
    pub label: String,
    pub launches: u64,
    /// Sum of the kernels' durations (not a union: two devices' kernels both count).
    pub total_ns: u64,
}

/// What [`CollectiveShare::finish`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectiveStats {
    /// Devices that ran a timed kernel, by device id.
    pub devices: Vec<DeviceCollectiveTime>,
    /// Collectives by total kernel time, largest first.
    pub collectives: Vec<CollectiveTime>,
}

impl CollectiveStats {
    /// Timed NCCL kernels on all devices.
    pub fn nccl_kernels(&self) -> u64 {
        self.devices.iter().map(|d| d.nccl_kernels).sum()
    }

    /// Add the figures of another part of the dump: devices by id, collectives by
    /// label (unions of two parts add up; see `digest`'s module docs).
    pub fn merge(&mut self, other: &CollectiveStats) {
        for o in &other.devices {
            match self.devices.binary_search_by_key(&o.device, |d| d.device) {
                Ok(i) => {
                    let d = &mut self.devices[i];
                    d.kernels += o.kernels;
                    d.nccl_kernels += o.nccl_kernels;
                    d.busy_ns += o.busy_ns;
                    d.nccl_ns += o.nccl_ns;
                    d.nccl_alone_ns += o.nccl_alone_ns;
                    d.uncertain_ns += o.uncertain_ns;
                }
                Err(i) => self.devices.insert(i, o.clone()),
            }
        }
        for o in &other.collectives {
            match self.collectives.iter_mut().find(|c| c.label == o.label) {
                Some(c) => {
                    c.launches += o.launches;
                    c.total_ns += o.total_ns;
                }
                None => self.collectives.push(o.clone()),
            }
        }
        self.sort();
    }

    /// Collectives by total kernel time, largest first.
    fn sort(&mut self) {
        self.collectives.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.label.cmp(&b.label))
        });
    }
}

#[derive(Debug, Default)]
struct Device {
    kernels: u64,
    nccl_kernels: u64,
    all: IntervalUnion,
    nccl: IntervalUnion,
    /// The other kernels' union, from the device's first NCCL kernel on (a copy of
    /// `all` then): until then it is `all`, and one union less per kernel is kept.
    other: Option<IntervalUnion>,
}

/// Accumulates kernels, in any order, into [`CollectiveStats`].
#[derive(Debug, Default)]
pub struct CollectiveShare {
    devices: BTreeMap<u32, Device>,
    /// Name pointer -> index into `collectives`, or `None` for a kernel that is not NCCL's.
    by_ptr: crate::PtrMap<Option<usize>>,
    /// Label -> index into `collectives`.
    by_label: HashMap<String, usize>,
    collectives: Vec<CollectiveTime>,
}

impl CollectiveShare {
    pub fn new() -> Self {
        Self::default()
    }

    /// A kernel record, its name looked up in `names` (the dump's `kernel_names.tsv`).
    /// Kernels without both timestamps (unfinished, or launched before collection) are
    /// left out, as `cupmon stats` leaves them out of kernel times.
    pub fn add_record(&mut self, k: &KernelRecord, names: &KernelNameTable) {
        let index = match self.by_ptr.get(&k.name_ptr) {
            Some(&index) => index,
            None => {
                let index = names.get(k.name_ptr).and_then(|n| self.collective_index(n));
                self.by_ptr.insert(k.name_ptr, index);
                index
            }
        };
        self.add(k.device_id, index, k.start, k.end);
    }

    /// A kernel by name (mangled or demangled), for callers without a name table.
    pub fn add_named(&mut self, device: u32, name: &str, start: u64, end: u64) {
        let index = self.collective_index(name);
        self.add(device, index, start, end);
    }

    fn collective_index(&mut self, name: &str) -> Option<usize> {
        let label = label(&NcclKernel::parse(name)?);
        let next = self.collectives.len();
        let index = *self.by_label.entry(label.clone()).or_insert(next);
        if index == next {
            self.collectives.push(CollectiveTime {
                label,
                launches: 0,
                total_ns: 0,
            });
        }
        Some(index)
    }

    fn add(&mut self, device: u32, collective: Option<usize>, start: u64, end: u64) {
        if start == 0 || end < start {
            return;
        }
        let d = self.devices.entry(device).or_default();
        d.kernels += 1;
        if collective.is_some() && d.other.is_none() {
            d.other = Some(d.all.clone());
        }
        d.all.add(start, end);
        match collective {
            Some(index) => {
                d.nccl_kernels += 1;
                d.nccl.add(start, end);
                let c = &mut self.collectives[index];
                c.launches += 1;
                c.total_ns += end - start;
            }
            None => {
                if let Some(other) = &mut d.other {
                    other.add(start, end);
                }
            }
        }
    }

    /// The figures; `top` limits the collectives listed.
    pub fn finish(mut self, top: usize) -> CollectiveStats {
        let devices = self
            .devices
            .iter_mut()
            .map(|(&device, d)| {
                let (busy_ns, busy_over) = d.all.total();
                let (nccl_ns, nccl_over) = d.nccl.total();
                let (other_ns, other_over) = match &mut d.other {
                    Some(other) => other.total(),
                    None => (busy_ns, 0),
                };
                DeviceCollectiveTime {
                    device,
                    kernels: d.kernels,
                    nccl_kernels: d.nccl_kernels,
                    busy_ns,
                    nccl_ns,
                    nccl_alone_ns: busy_ns.saturating_sub(other_ns),
                    uncertain_ns: busy_over + nccl_over + other_over,
                }
            })
            .collect();
        let collectives: Vec<CollectiveTime> = self
            .collectives
            .into_iter()
            .filter(|c| c.launches > 0)
            .collect();
        let mut stats = CollectiveStats {
            devices,
            collectives,
        };
        stats.sort();
        stats.collectives.truncate(top);
        stats
    }
}

/// `AllReduce bf16`, `AllGather`, ...: the collective and the type, where the name
/// gives them for the launch.
fn label(k: &NcclKernel<'_>) -> String {
    let collective = k.collective.and_then(|c| c.of_launch());
    match (collective, k.dtype.and_then(|d| d.of_launch())) {
        (Some(c), Some(t)) => format!("{c} {t}"),
        (Some(c), None) => c.to_owned(),
        (None, _) if k.scheme == super::NcclScheme::Unknown => "unrecognised NCCL kernel".into(),
        (None, _) => "any collective (generic kernel)".into(),
    }
}
