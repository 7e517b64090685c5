//! The naming scheme of each NCCL generation, and what each part of a name means there.
//! From NCCL's sources: `src/collectives/collectives.h` (`NCCL_KERN_NAME`) and
//! `src/enqueue.cc`'s kernel tables up to 2.18, `src/device/generate.py` (kernels,
//! `best_kernel`) and `src/device/symmetric/generate.py` from 2.19 and 2.27.

use super::kernel_name::{Named, NcclKernel, NcclScheme};

/// Collectives, longest first where one is a prefix of another.
const COLLECTIVES: [&str; 7] = [
    "ReduceScatter",
    "AllReduce",
    "AllGatherV",
    "AllGather",
    "Broadcast",
    "Reduce",
    "SendRecv",
];

/// Whether a collective reduces: the others copy, and their kernels carry a
/// placeholder type (`int8_t`, `i8`) or none.
fn reduces(collective: &str) -> bool {
    matches!(collective, "AllReduce" | "Reduce" | "ReduceScatter")
}

fn collective(name: &str) -> Option<&'static str> {
    COLLECTIVES.into_iter().find(|&c| c == name)
}

const PROTOCOLS: [&str; 3] = ["LL128", "LL", "SIMPLE"];

fn algorithm(name: &str) -> Option<&'static str> {
    [
        "RING",
        "TREE",
        "COLLNET",
        "COLLNET_DIRECT",
        "COLLNET_CHAIN",
        "NVLS",
        "NVLS_TREE",
        "PAT",
    ]
    .into_iter()
    .find(|&a| a == name)
}

/// NCCL's short type names (`generate.py`'s `all_tys`).
fn short_type(name: &str) -> Option<&'static str> {
    [
        "i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2",
    ]
    .into_iter()
    .find(|&t| t == name)
}

/// The C++ type names of 2.8-2.18's kernels, as short names.
fn c_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "int8_t" => "i8",
        "uint8_t" => "u8",
        "int32_t" => "i32",
        "uint32_t" => "u32",
        "int64_t" => "i64",
        "uint64_t" => "u64",
        "half" => "f16",
        "float" => "f32",
        "double" => "f64",
        "__nv_bfloat16" => "bf16",
        "__nv_fp8_e4m3" => "f8e4m3",
        "__nv_fp8_e5m2" => "f8e5m2",
        _ => return None,
    })
}

/// Reduction operations, lower case as NCCL's 2.x kernel names and symmetric kernels
/// write them.
fn reduce_op(name: &str) -> Option<&'static str> {
    Some(match name {
        "Sum" | "sum" => "sum",
        "Prod" | "prod" => "prod",
        "Min" | "min" => "min",
        "Max" | "max" => "max",
        "MinMax" => "minmax",
        "PreMulSum" => "premulsum",
        "SumPostDiv" => "sumpostdiv",
        "avg" => "avg",
        _ => return None,
    })
}

/// NCCL 2.0-2.7: `{ncclColl}{Algo}{Proto}Kernel_{op}_{type}` (without the `nccl` here).
/// 2.0-2.3 had a kernel per operation, type and protocol (`LL` or none, the simple
/// one), so every part is the launch's. 2.4-2.7 added the algorithm (`Ring`, `Tree`,
/// `CollNet`), which the kernel tables index, but kept only LL and sum kernels. The
/// copying collectives are named `copy_i8` in both.
pub(super) fn per_operation(id: &str) -> Option<NcclKernel<'static>> {
    let (head, tail) = id.split_once("Kernel_")?;
    let coll = COLLECTIVES.into_iter().find(|c| head.starts_with(c))?;
    let mut rest = &head[coll.len()..];
    let algo = [("Ring", "RING"), ("Tree", "TREE"), ("CollNet", "COLLNET")]
        .into_iter()
        .find_map(|(camel, upper)| {
            let after = rest.strip_prefix(camel)?;
            rest = after;
            Some(upper)
        });
    let proto = match rest {
        "LL128" => "LL128",
        "LL" => "LL",
        "" => "SIMPLE",
        _ => return None,
    };
    let (op, ty) = tail.split_once('_')?;
    let ty = short_type(ty)?;
    let copies = op == "copy";
    let op = if copies { None } else { Some(reduce_op(op)?) };
    // SendRecv (2.7) has no algorithm but belongs with the per-algorithm kernels.
    let per_algorithm = algo.is_some() || coll == "SendRecv";
    let scheme = if per_algorithm {
        NcclScheme::PerAlgorithm
    } else {
        NcclScheme::PerOperation
    };
    let exact = |v| {
        if per_algorithm {
            Named::specialization(v)
        } else {
            Named::launch(v)
        }
    };
    Some(NcclKernel {
        scheme,
        collective: Some(Named::launch(coll)),
        reduce_op: op.map(exact),
        dtype: (!copies && reduces(coll)).then(|| Named::launch(ty)),
        algorithm: algo.map(Named::launch),
        protocol: Some(exact(proto)),
    })
}

/// NCCL 2.8-2.18: `ncclKernel_{Func}_{ALGO}_{PROTO}_{Redop}_{type}`. The kernel tables
/// hold one kernel per collective, algorithm and type, all named LL and Sum; the
/// copying collectives' are `Sum_int8_t`, and SendRecv's `RING_SIMPLE_Sum_int8_t` (the
/// kernel that 2.13 also launched for every operation it had not inlined).
pub(super) fn kernel(rest: &str) -> Option<NcclKernel<'static>> {
    let (func, rest) = rest.split_once('_')?;
    let coll = collective(func)?;
    let (algo, proto, after) = PROTOCOLS.into_iter().find_map(|p| {
        let at = rest.find(&format!("_{p}_"))?;
        Some((&rest[..at], p, &rest[at + p.len() + 2..]))
    })?;
    let algo = algorithm(algo)?;
    let (op, ty) = after.split_once('_')?;
    let op = reduce_op(op)?;
    let ty = c_type(ty)?;
    let p2p = coll == "SendRecv";
    Some(NcclKernel {
        scheme: NcclScheme::Kernel,
        collective: Some(Named::launch(coll)),
        reduce_op: reduces(coll).then(|| Named::specialization(op)),
        dtype: reduces(coll).then(|| Named::launch(ty)),
        // Point-to-point has no algorithm; its RING is the table's placeholder.
        algorithm: Some(if p2p {
            Named::specialization(algo)
        } else {
            Named::launch(algo)
        }),
        protocol: Some(Named::specialization(proto)),
    })
}

/// NCCL 2.19 on: `ncclDevKernel_{Coll}[_{Redop}_{ty}]_{ALGO}_{PROTO}`, `_SendRecv`,
/// `_Generic`. `best_kernel` picks, for any function, the kernel of its collective and
/// type with Sum, LL, and TREE for TREE or RING for every other algorithm; signed
/// integer types share the unsigned kernel (`equivalent_primary`).
pub(super) fn dev_kernel(rest: &str) -> Option<NcclKernel<'static>> {
    if rest == "Generic" {
        return Some(NcclKernel::unknown(NcclScheme::DevKernel));
    }
    let (func, rest) = rest.split_once('_').unwrap_or((rest, ""));
    let coll = collective(func)?;
    let mut k = NcclKernel::unknown(NcclScheme::DevKernel);
    k.collective = Some(Named::launch(coll));
    if coll == "SendRecv" {
        return rest.is_empty().then_some(k);
    }
    let rest = if reduces(coll) {
        let (op, rest) = rest.split_once('_')?;
        let (ty, rest) = rest.split_once('_')?;
        k.reduce_op = Some(Named::specialization(reduce_op(op)?));
        let ty = short_type(ty)?;
        k.dtype = Some(Named::launch(match ty {
            "u8" => "i8 or u8",
            "u32" => "i32 or u32",
            "u64" => "i64 or u64",
            other => other,
        }));
        rest
    } else {
        rest
    };
    let (algo, proto) = rest.rsplit_once('_')?;
    let proto = PROTOCOLS.into_iter().find(|&p| p == proto)?;
    let algo = algorithm(algo)?;
    k.algorithm = Some(if algo == "TREE" {
        Named::launch(algo)
    } else {
        Named::specialization(algo)
    });
    k.protocol = Some(Named::specialization(proto));
    Some(k)
}

/// NCCL 2.27 on, symmetric memory: `{Coll}_{algo}` (AllGather) or
/// `{Coll}_{algo}_{red}_{ty}` (AllReduce, ReduceScatter), one kernel for each, so
/// every part is the launch's. The algorithm names carry the protocol (`AGxLL_R`).
pub(super) fn symmetric(rest: &str) -> Option<NcclKernel<'_>> {
    let (func, rest) = rest.split_once('_')?;
    let coll = collective(func)?;
    let mut k = NcclKernel::unknown(NcclScheme::Symmetric);
    k.collective = Some(Named::launch(coll));
    let algo = if reduces(coll) {
        let (rest, ty) = rest.rsplit_once('_')?;
        let (algo, op) = rest.rsplit_once('_')?;
        k.dtype = Some(Named::launch(short_type(ty)?));
        k.reduce_op = Some(Named::launch(reduce_op(op)?));
        algo
    } else {
        rest
    };
    if algo.is_empty() {
        return None;
    }
    k.algorithm = Some(Named::launch(algo));
    Some(k)
}
