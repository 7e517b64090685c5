//! What an NCCL kernel's name says about the collective it runs.
//!
//! NCCL names its kernels after the one case each kernel has inlined, and runs every
//! other case through the same kernel by a function table. So the name is the truth
//! about some of its parts and only a hint about others: since NCCL 2.4 every kernel is
//! named for the `LL` protocol and the sum reduction whatever the launch uses, and since
//! 2.19 `RING` stands for every algorithm but `TREE` (NCCL issues #739 and #2196, and
//! the sources: `src/device/generate.py`'s `best_kernel`, `src/enqueue.cc`'s kernel
//! tables before 2.19). [`Named::meaning`] says which is which; `schemes.rs` has the
//! rules of each scheme.

use super::schemes;

/// Which of NCCL's naming schemes a kernel name follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NcclScheme {
    /// NCCL 2.0-2.3: `ncclAllReduceLLKernel_sum_f32(ncclColl)`, a kernel for every
    /// operation, type and protocol (LL or not).
    PerOperation,
    /// NCCL 2.4-2.7: `ncclAllReduceRingLLKernel_sum_f32(ncclColl)`, a kernel per
    /// algorithm (Ring, Tree, CollNet), LL and sum (or copy) only.
    PerAlgorithm,
    /// NCCL 2.8-2.18: `ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned
    /// long, ncclWork*)`, a kernel per algorithm and type, LL and Sum only.
    Kernel,
    /// NCCL 2.19 on: `ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)`,
    /// `ncclDevKernel_SendRecv`, `ncclDevKernel_Generic`; only RING and TREE kernels.
    DevKernel,
    /// NCCL 2.27 on: symmetric-memory kernels, one per algorithm, operation and type:
    /// `ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32(ncclSymkDevWorkArgs4K)`
    /// (`ncclSymDevKernel_` in 2.27).
    Symmetric,
    /// Named `nccl...Kernel...` (HolisticTraceAnalysis's rule for communication
    /// kernels) but in none of the schemes above: an NCCL kernel whose parts are unknown.
    Unknown,
}

/// How far a part of the name describes the launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Meaning {
    /// What the launch's operation uses (its first one, when NCCL put several
    /// operations of a group into one launch).
    Launch,
    /// Only the case the kernel has inlined; the launch may use another one.
    Specialization,
}

/// One part of an NCCL kernel's name, normalised (`f32`, not `float`; `RING`, not `Ring`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Named<'a> {
    pub value: &'a str,
    pub meaning: Meaning,
}

impl<'a> Named<'a> {
    pub(super) fn launch(value: &'a str) -> Self {
        Self {
            value,
            meaning: Meaning::Launch,
        }
    }

    pub(super) fn specialization(value: &'a str) -> Self {
        Self {
            value,
            meaning: Meaning::Specialization,
        }
    }

    /// The value when it describes the launch.
    pub fn of_launch(self) -> Option<&'a str> {
        (self.meaning == Meaning::Launch).then_some(self.value)
    }
}

/// An NCCL kernel, as its name describes it.
///
/// ```
/// use cupmon_records::nccl::{Meaning, NcclKernel, NcclScheme};
/// let k = NcclKernel::parse(
///     "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
/// )
/// .unwrap();
/// assert_eq!(k.scheme, NcclScheme::DevKernel);
/// assert_eq!(k.collective.unwrap().value, "AllReduce");
/// assert_eq!(k.dtype.unwrap().value, "bf16");
/// // The kernel runs any protocol; LL is only the one it has inlined.
/// assert_eq!(k.protocol.unwrap().meaning, Meaning::Specialization);
/// assert_eq!(k.launch_args(), [("collective", "AllReduce"), ("dtype", "bf16")]);
/// assert!(NcclKernel::parse("_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE").is_some());
/// assert!(NcclKernel::parse("ampere_sgemm_128x64_nn").is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NcclKernel<'a> {
    pub scheme: NcclScheme,
    /// `AllReduce`, `AllGather`, `AllGatherV`, `ReduceScatter`, `Broadcast`, `Reduce`,
    /// `SendRecv`; `None` for NCCL's generic kernel, which runs any of them.
    pub collective: Option<Named<'a>>,
    /// `sum`, `prod`, `min`, `max`, `minmax`, `premulsum`, `sumpostdiv`, `avg`.
    pub reduce_op: Option<Named<'a>>,
    /// NCCL's short type names: `i8` .. `u64`, `f16`, `f32`, `f64`, `bf16`, `f8e4m3`,
    /// `f8e5m2`; `i32 or u32` where the name cannot tell (2.19 on runs signed sums
    /// in the unsigned kernel). Absent for copying collectives, whose kernels are
    /// named with a placeholder type.
    pub dtype: Option<Named<'a>>,
    /// `RING`, `TREE`, `COLLNET`, `COLLNET_DIRECT`, `COLLNET_CHAIN`, `NVLS`,
    /// `NVLS_TREE`, `PAT`, or a symmetric kernel's algorithm (`AGxLL_R`).
    pub algorithm: Option<Named<'a>>,
    /// `LL`, `LL128`, `SIMPLE`.
    pub protocol: Option<Named<'a>>,
}

impl<'a> NcclKernel<'a> {
    /// The NCCL kernel named `name` (mangled, `_Z39ncclDevKernel_...`, or demangled,
    /// `ncclDevKernel_...(...)`, or a bare identifier); `None` for other kernels.
    pub fn parse(name: &'a str) -> Option<Self> {
        let id = identifier(name)?;
        if !id.starts_with("nccl") {
            return None;
        }
        let parsed = if let Some(rest) = id.strip_prefix("ncclDevKernel_") {
            schemes::dev_kernel(rest)
        } else if let Some(rest) = id
            .strip_prefix("ncclSymkDevKernel_")
            .or_else(|| id.strip_prefix("ncclSymDevKernel_"))
        {
            schemes::symmetric(rest)
        } else if let Some(rest) = id.strip_prefix("ncclKernel_") {
            schemes::kernel(rest)
        } else {
            schemes::per_operation(&id[4..])
        };
        parsed.or_else(|| {
            id.contains("Kernel")
                .then(|| Self::unknown(NcclScheme::Unknown))
        })
    }

    pub(super) fn unknown(scheme: NcclScheme) -> Self {
        Self {
            scheme,
            collective: None,
            reduce_op: None,
            dtype: None,
            algorithm: None,
            protocol: None,
        }
    }

    /// The parts that describe the launch, as trace args: (`collective`, `reduce_op`,
    /// `dtype`, `algorithm`, `protocol`) in that order, those the name gives.
    pub fn launch_args(&self) -> Vec<(&'static str, &'a str)> {
        [
            ("collective", self.collective),
            ("reduce_op", self.reduce_op),
            ("dtype", self.dtype),
            ("algorithm", self.algorithm),
            ("protocol", self.protocol),
        ]
        .into_iter()
        .filter_map(|(key, part)| Some((key, part?.of_launch()?)))
        .collect()
    }
}

/// The function's identifier: the `<length><name>` of an Itanium-mangled function at
/// global scope (`_Z39ncclDevKernel_...`), the text before `(` of a demangled one.
/// `None` at once for a name that cannot be NCCL's (most names: this runs per kernel).
fn identifier(name: &str) -> Option<&str> {
    if let Some(rest) = name.strip_prefix("_Z") {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let len: usize = rest[..digits].parse().ok()?;
        return rest.get(digits..digits.checked_add(len)?);
    }
    if !name.starts_with("nccl") {
        return None;
    }
    Some(name.split_once('(').map_or(name, |(id, _)| id))
}
