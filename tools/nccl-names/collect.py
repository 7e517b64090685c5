#!/usr/bin/env python3
"""Builds crates/cupmon-records/tests/data/nccl_kernel_names.tsv: NCCL kernel names as
CUPTI reports them (mangled) and as Kineto shows them (demangled), each with what its
name says, for the parser's tests (crates/cupmon-records/tests/nccl_names.rs).

Two sources:
- real: every `_Z..nccl..Kernel_` string in the libnccl.so.2 files given (the names the
  CUDA runtime registers the kernels under, which CUPTI reports), demangled by c++filt.
  The checked-in file came from the PyPI wheels nvidia-nccl-cu11 2.14.3 and
  nvidia-nccl-cu12 2.21.5 and 2.28.9:
    pip download --no-deps --only-binary=:all: nvidia-nccl-cu12==2.21.5 -d w
    unzip -q w/*.whl 'nvidia/nccl/lib/*' -d w
    tools/nccl-names/collect.py w/nvidia/nccl/lib/libnccl.so.2 ... > OUT.tsv
- source: the names older and newer NCCL releases' macros generate (2.3's and 2.4-2.7's
  NCCL_KERN_NAME, 2.8-2.13's parameter lists, 2.17-2.18's NVLS algorithms, 2.27's
  ncclSymDevKernel_ prefix, 2.30's AllGatherV and avg kernels), mangled here and
  checked with c++filt.

The third column states each name's parts as `key=value` (what the launch uses) or
`key~value` (only the case the kernel has inlined), by these rules written again
independently of the Rust parser; the test compares the two.
Needs binutils (strings, c++filt).
"""
import re
import subprocess
import sys

RED = {"AllReduce", "Reduce", "ReduceScatter"}
COLLS = ["ReduceScatter", "AllReduce", "AllGatherV", "AllGather", "Broadcast", "Reduce", "SendRecv"]
CTYPE = {"int8_t": "i8", "uint8_t": "u8", "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64",
         "uint64_t": "u64", "half": "f16", "float": "f32", "double": "f64", "__nv_bfloat16": "bf16"}
OPS = {"Sum": "sum", "Prod": "prod", "Min": "min", "Max": "max", "sum": "sum", "prod": "prod",
       "min": "min", "max": "max", "avg": "avg"}


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return out


def ident(demangled):
    return demangled.split("(")[0]


def expect(i):
    """The parts of the NCCL kernel named `i`, as `scheme key=v key~v ...`."""
    parts = []
    def add(k, v, launch):
        parts.append(f"{k}{'=' if launch else '~'}{v}")
    if i.startswith("ncclDevKernel_"):
        f = i[len("ncclDevKernel_"):].split("_")
        if f == ["Generic"]:
            return "DevKernel"
        add("collective", f[0], True)
        if f[0] == "SendRecv":
            return "DevKernel " + " ".join(parts)
        if f[0] in RED:
            add("reduce_op", OPS[f[1]], False)
            t = f[2]
            add("dtype", {"u8": "i8 or u8", "u32": "i32 or u32", "u64": "i64 or u64"}.get(t, t), True)
            f = f[3:]
        else:
            f = f[1:]
        algo = "_".join(f[:-1])
        add("algorithm", algo, algo == "TREE")
        add("protocol", f[-1], False)
        return "DevKernel " + " ".join(parts)
    for prefix in ("ncclSymkDevKernel_", "ncclSymDevKernel_"):
        if i.startswith(prefix):
            f = i[len(prefix):].split("_")
            add("collective", f[0], True)
            if f[0] in RED:
                add("reduce_op", OPS[f[-2]], True)
                add("dtype", f[-1], True)
                add("algorithm", "_".join(f[1:-2]), True)
            else:
                add("algorithm", "_".join(f[1:]), True)
            order = ["collective", "reduce_op", "dtype", "algorithm"]
            parts.sort(key=lambda p: order.index(p.split("=")[0].split("~")[0]))
            return "Symmetric " + " ".join(parts)
    if i.startswith("ncclKernel_"):
        rest = i[len("ncclKernel_"):]
        coll, rest = rest.split("_", 1)
        for p in ("LL128", "LL", "SIMPLE"):
            if f"_{p}_" in rest:
                algo, after = rest.split(f"_{p}_", 1)
                proto = p
                break
        op, ty = after.split("_", 1)
        add("collective", coll, True)
        if coll in RED:
            add("reduce_op", OPS[op], False)
            add("dtype", CTYPE[ty], True)
        add("algorithm", algo, coll != "SendRecv")
        add("protocol", proto, False)
        return "Kernel " + " ".join(parts)
    # 2.0-2.7: nccl{Coll}{Algo}{Proto}Kernel_{op}_{ty}
    head, tail = i[4:].split("Kernel_")
    coll = next(c for c in COLLS if head.startswith(c))
    rest = head[len(coll):]
    algo = None
    for camel, upper in (("Ring", "RING"), ("Tree", "TREE"), ("CollNet", "COLLNET")):
        if rest.startswith(camel):
            algo, rest = upper, rest[len(camel):]
    proto = rest or "SIMPLE"
    op, ty = tail.split("_")
    per_algo = algo is not None or coll == "SendRecv"
    add("collective", coll, True)
    if op != "copy":
        add("reduce_op", OPS[op], not per_algo)
    if op != "copy" and coll in RED:
        add("dtype", ty, True)
    if algo:
        add("algorithm", algo, True)
    add("protocol", proto, not per_algo)
    return ("PerAlgorithm " if per_algo else "PerOperation ") + " ".join(parts)


def mangle(identifier, params):
    return f"_Z{len(identifier)}{identifier}{params}"


def source_names():
    """(mangled, origin) of names NCCL releases without a wheel here generate."""
    tys = ["i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64"]
    names = []
    # 2.3: a kernel per operation, type and LL or not; copy collectives copy_i8.
    for c in ["AllReduce", "Reduce", "ReduceScatter"]:
        for op in ["sum", "prod", "min", "max"]:
            for t in ["i8", "f16", "f32", "u64"]:
                for ll in ["LL", ""]:
                    names.append((mangle(f"nccl{c}{ll}Kernel_{op}_{t}", "8ncclColl"), "2.3"))
    for c in ["AllGather", "Broadcast"]:
        for ll in ["LL", ""]:
            names.append((mangle(f"nccl{c}{ll}Kernel_copy_i8", "8ncclColl"), "2.3"))
    # 2.4 (Ring, Tree) and 2.6-2.7 (CollNet): LL and sum only; 2.7 SendRecv.
    for c in ["AllReduce", "Reduce", "ReduceScatter"]:
        for a in ["Ring", "Tree", "CollNet"]:
            for t in tys:
                names.append((mangle(f"nccl{c}{a}LLKernel_sum_{t}", "8ncclColl"), "2.4-2.7"))
    for c in ["AllGather", "Broadcast"]:
        for a in ["Ring", "Tree", "CollNet"]:
            names.append((mangle(f"nccl{c}{a}LLKernel_copy_i8", "8ncclColl"), "2.4-2.7"))
    names.append((mangle("ncclSendRecvKernel_copy_i8", "8ncclColl"), "2.7"))
    # 2.8-2.11 (ncclWorkElem), 2.12 (ncclDevComm*, ncclWorkElem), COLLNET before 2.14.
    for c, a, t in [("AllReduce", "COLLNET", "float"), ("AllReduce", "RING", "__nv_bfloat16"),
                    ("ReduceScatter", "TREE", "half"), ("SendRecv", "RING", "int8_t")]:
        proto = "SIMPLE" if c == "SendRecv" else "LL"
        names.append((mangle(f"ncclKernel_{c}_{a}_{proto}_Sum_{t}", "12ncclWorkElem"), "2.8-2.11"))
        names.append((mangle(f"ncclKernel_{c}_{a}_{proto}_Sum_{t}", "P11ncclDevComm12ncclWorkElem"), "2.12"))
    # 2.17-2.18: NVLS, NVLS_TREE.
    for a in ["NVLS", "NVLS_TREE"]:
        for c, t in [("AllReduce", "float"), ("AllGather", "int8_t"), ("ReduceScatter", "__nv_bfloat16")]:
            names.append((mangle(f"ncclKernel_{c}_{a}_LL_Sum_{t}", "P11ncclDevCommmP8ncclWork"), "2.17-2.18"))
    # 2.27: ncclSymDevKernel_.
    for k in ["AllGather_LL", "AllGather_STMC", "AllReduce_AGxLL_R_sum_f32",
              "AllReduce_RSxLDMC_AGxSTMC_sum_bf16", "ReduceScatter_LD_sum_f8e4m3"]:
        names.append((mangle(f"ncclSymDevKernel_{k}", "14ncclSymDevArgs"), "2.27"))
    # 2.30: AllGatherV, avg, TMA and GIN symmetric algorithms.
    names.append((mangle("ncclDevKernel_AllGatherV_RING_LL", "24ncclDevKernelArgsStorageILm4096EE"), "2.30"))
    for k in ["AllGather_TmaSTMC", "AllGather_RailRing_LsaSTMC", "ReduceScatter_RailA2A_LsaLD_avg_f16",
              "AllReduce_RSxTmaLD_AGxTmaST_sum_f32"]:
        names.append((mangle(f"ncclSymkDevKernel_{k}", "21ncclSymkDevWorkArgs4K"), "2.30"))
    return names


def main():
    real = set()
    for lib in sys.argv[1:]:
        out = subprocess.run(["strings", "-a", "-n", "8", lib], capture_output=True, text=True,
                             check=True).stdout
        for s in out.split():
            # Kernels at global scope: `_Z<length>nccl...Kernel_...` (not the host
            # stubs, `_Z..__device_stub__Z..`).
            if re.match(r"_Z[0-9]+nccl[A-Za-z]*Kernel_", s):
                real.add(s)
    # A string cut short by its neighbour in .rodata does not demangle: not a name.
    real = sorted(real)
    real = [m for m, d in zip(real, demangle(real)) if d != m and d.endswith(")")]
    rows = [(m, "real") for m in real] + source_names()
    demangled = demangle([m for m, _ in rows])
    print("# mangled\tdemangled (c++filt)\tscheme and parts: key=value of the launch, "
          "key~value of the kernel's inlined case only\tsource")
    for (m, origin), d in zip(rows, demangled):
        assert d != m, f"c++filt rejected {m}"
        print(f"{m}\t{d}\t{expect(ident(d))}\t{origin}")


if __name__ == "__main__":
    main()
