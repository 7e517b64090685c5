//! NCCL kernel names, mangled as CUPTI reports them and demangled as Kineto shows them,
//! parse to what tools/nccl-names/collect.py says they mean: 240 names of the kernels
//! in three NCCL wheels (2.14.3, 2.21.5, 2.28.9) and 212 that the macros of other
//! releases (2.3 to 2.30) generate (data/nccl_kernel_names.tsv; its header says more).

use cupmon_records::demangle;
use cupmon_records::nccl::{Meaning, NcclKernel, NcclScheme};

const NAMES: &str = include_str!("data/nccl_kernel_names.tsv");

/// A parse in the file's notation: `Scheme key=value key~value ...`.
fn render(k: &NcclKernel<'_>) -> String {
    let mut out = format!("{:?}", k.scheme);
    for (key, part) in [
        ("collective", k.collective),
        ("reduce_op", k.reduce_op),
        ("dtype", k.dtype),
        ("algorithm", k.algorithm),
        ("protocol", k.protocol),
    ] {
        if let Some(p) = part {
            let sep = match p.meaning {
                Meaning::Launch => '=',
                Meaning::Specialization => '~',
            };
            out.push_str(&format!(" {key}{sep}{}", p.value));
        }
    }
    out
}

#[test]
fn every_collected_name_parses_mangled_and_demangled_to_its_meaning() {
    let mut real = 0;
    let mut rows = 0;
    for line in NAMES.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        let [mangled, demangled, want, source] = f[..] else {
            panic!("4 fields: {line}");
        };
        // Kineto's demangler prints what c++filt printed.
        assert_eq!(demangle(mangled), demangled);
        for name in [mangled, demangled] {
            let k = NcclKernel::parse(name).unwrap_or_else(|| panic!("not NCCL: {name}"));
            assert_eq!(render(&k), want, "{name}");
        }
        rows += 1;
        real += usize::from(source == "real");
    }
    assert_eq!((rows, real), (452, 240));
}

#[test]
fn launch_args_keep_only_what_describes_the_launch() {
    let args = |name| NcclKernel::parse(name).unwrap().launch_args();
    assert_eq!(
        args("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
        [("collective", "AllReduce"), ("dtype", "f32")]
    );
    assert_eq!(
        args("_Z39ncclDevKernel_AllReduce_Sum_f32_TREE_LL24ncclDevKernelArgsStorageILm4096EE"),
        [
            ("collective", "AllReduce"),
            ("dtype", "f32"),
            ("algorithm", "TREE")
        ]
    );
    assert_eq!(
        args("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
        [
            ("collective", "AllReduce"),
            ("dtype", "f32"),
            ("algorithm", "RING")
        ]
    );
    assert_eq!(
        args("ncclAllReduceLLKernel_prod_f16(ncclColl)"),
        [
            ("collective", "AllReduce"),
            ("reduce_op", "prod"),
            ("dtype", "f16"),
            ("protocol", "LL")
        ]
    );
    assert_eq!(
        args("ncclSymkDevKernel_AllReduce_AGxLL_R_sum_bf16(ncclSymkDevWorkArgs4K)"),
        [
            ("collective", "AllReduce"),
            ("reduce_op", "sum"),
            ("dtype", "bf16"),
            ("algorithm", "AGxLL_R")
        ]
    );
    // The generic kernel runs any collective: nothing to say.
    assert_eq!(
        args("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"),
        []
    );
}

#[test]
fn other_kernels_and_near_misses_are_not_taken_for_nccl_ones() {
    for name in [
        "ampere_sgemm_128x64_nn",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
        "_ZN4c10d14nccl_extension28reduce_scatter_offset_kernelI13__nv_bfloat16Lb1EEEvP17ncclWindow_vidmemNS0_24ReduceScatterOffsetsInfoEibl11ncclDevComm",
        "void c10d::nccl_extension::reduce_scatter_offset_kernel<__nv_bfloat16, true>(ncclWindow_vidmem*, c10d::nccl_extension::ReduceScatterOffsetsInfo, int, bool, long, ncclDevComm)",
        "kernel@0x7f00deadbeef",
        "",
        "_Z",
        "_Z999ncclDevKernel_Generic",
        "_Z99999999999999999999999ncclDevKernel_Generic",
        "nccl_something_else",
    ] {
        assert_eq!(NcclKernel::parse(name), None, "{name}");
    }
    // HolisticTraceAnalysis counts `^nccl.*Kernel` as communication: so does cupmon,
    // with the parts unknown, when the rest of the name follows no known scheme.
    for name in [
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL9000(ncclDevKernelArgsStorage<4096ul>)",
        "ncclKernel_AllToAll_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        "ncclDevKernel_AllReduce_Sum_q7_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclSymkDevKernel_AllReduce",
        "ncclAllReduceRingLLKernel_sum_q7(ncclColl)",
        "ncclFutureKernel_Whatever",
    ] {
        let k = NcclKernel::parse(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(k.scheme, NcclScheme::Unknown, "{name}");
        assert_eq!(k.launch_args(), [], "{name}");
    }
}
