//! One layout table per range of CUPTI versions whose activity structs are identical
//! (py-spy's python_interpreters.rs idea: tables per version, one reader over them).
//! Measured with `tools/cupti-tables/gen_layouts.py` on every CUPTI wheel on PyPI from
//! 12.0.90 to 13.5.25; the numbers are in `tools/cupti-tables/cupti_layouts.json` and the
//! tests compare these tables with that file.

/// The struct CUPTI writes for one activity kind, and its size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructLayout {
    /// The struct's name in CUPTI's headers (the newest the headers declare).
    pub name: &'static str,
    pub size: usize,
}

const fn s(name: &'static str, size: usize) -> StructLayout {
    StructLayout { name, size }
}

/// The activity-record layouts of a range of CUPTI versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutTable {
    /// The CUPTI releases this table covers, e.g. `"13.1-13.2"`.
    pub name: &'static str,
    /// Inclusive range of `cuptiGetVersion` API versions that write these layouts.
    pub api_versions: (u32, u32),
    /// The PyPI wheel versions whose headers were measured for this table.
    pub measured: &'static [&'static str],
    /// KERNEL and CONCURRENT_KERNEL.
    pub kernel: StructLayout,
    pub memcpy: StructLayout,
    pub memset: StructLayout,
    /// RUNTIME and DRIVER.
    pub api: StructLayout,
    pub external_correlation: StructLayout,
    pub overhead: StructLayout,
    pub cuda_event: StructLayout,
    pub synchronization: StructLayout,
    /// Whether memcpy/memset records carry `isDeviceLaunched` at offset 84 (13.0 on;
    /// before, those bytes are padding `pad2`).
    pub memop_device_launched: bool,
}

const V12_0: LayoutTable = LayoutTable {
    name: "12.0-12.2",
    // 19 was never shipped on PyPI; it lies between two identical tables.
    api_versions: (18, 20),
    measured: &[
        "12.0.90", "12.0.146", "12.1.62", "12.1.105", "12.2.60", "12.2.131", "12.2.142",
    ],
    kernel: s("CUpti_ActivityKernel9", 208),
    memcpy: s("CUpti_ActivityMemcpy5", 88),
    memset: s("CUpti_ActivityMemset4", 88),
    api: s("CUpti_ActivityAPI", 40),
    external_correlation: s("CUpti_ActivityExternalCorrelation", 24),
    overhead: s("CUpti_ActivityOverhead", 40),
    cuda_event: s("CUpti_ActivityCudaEvent", 24),
    synchronization: s("CUpti_ActivitySynchronization", 40),
    memop_device_launched: false,
};

const V12_3: LayoutTable = LayoutTable {
    name: "12.3",
    api_versions: (21, 21),
    measured: &["12.3.52", "12.3.101"],
    overhead: s("CUpti_ActivityOverhead2", 48),
    ..V12_0
};

const V12_4: LayoutTable = LayoutTable {
    name: "12.4-12.6",
    api_versions: (22, 24),
    measured: &[
        "12.4.99", "12.4.127", "12.5.39", "12.5.82", "12.6.37", "12.6.68", "12.6.80",
    ],
    overhead: s("CUpti_ActivityOverhead3", 56),
    ..V12_3
};

const V12_8: LayoutTable = LayoutTable {
    // 25 (a 12.7 that was never released) is deliberately not covered.
    name: "12.8-12.9",
    api_versions: (26, 28),
    measured: &["12.8.57", "12.8.90", "12.9.19", "12.9.79"],
    memcpy: s("CUpti_ActivityMemcpy6", 96),
    cuda_event: s("CUpti_ActivityCudaEvent2", 56),
    synchronization: s("CUpti_ActivitySynchronization2", 56),
    ..V12_4
};

const V13_0: LayoutTable = LayoutTable {
    name: "13.0",
    api_versions: (130_000, 130_099),
    measured: &["13.0.48", "13.0.85"],
    kernel: s("CUpti_ActivityKernel10", 216),
    memop_device_launched: true,
    ..V12_8
};

const V13_1: LayoutTable = LayoutTable {
    name: "13.1-13.2",
    api_versions: (130_100, 130_299),
    measured: &["13.1.75", "13.1.115", "13.2.23", "13.2.75", "13.2.86"],
    kernel: s("CUpti_ActivityKernel11", 224),
    ..V13_0
};

const V13_3: LayoutTable = LayoutTable {
    name: "13.3",
    api_versions: (130_300, 130_399),
    measured: &["13.3.35", "13.3.75"],
    kernel: s("CUpti_ActivityKernel12", 232),
    ..V13_1
};

const V13_4: LayoutTable = LayoutTable {
    name: "13.4",
    api_versions: (130_400, 130_499),
    measured: &["13.4.58", "13.4.92"],
    kernel: s("CUpti_ActivityKernel13", 248),
    memcpy: s("CUpti_ActivityMemcpy7", 112),
    memset: s("CUpti_ActivityMemset5", 104),
    ..V13_3
};

const V13_5: LayoutTable = LayoutTable {
    name: "13.5",
    api_versions: (130_500, 130_599),
    measured: &["13.5.25"],
    cuda_event: s("CUpti_ActivityCudaEvent3", 80),
    ..V13_4
};

/// Every layout table, oldest first.
pub static TABLES: &[LayoutTable] = &[
    V12_0, V12_3, V12_4, V12_8, V13_0, V13_1, V13_3, V13_4, V13_5,
];
