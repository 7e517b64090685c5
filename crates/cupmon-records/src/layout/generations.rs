//! The ranges of CUPTI API versions cupmon has measured (every CUPTI wheel on PyPI
//! from 12.0.90 to 13.5.25, with `tools/cupti-tables/gen_layouts.py`). Within a range
//! every kind's struct is known; outside them cupmon refuses to guess.

/// One range of CUPTI versions, and the wheels measured for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generation {
    /// The CUPTI releases this range covers, e.g. `"13.1-13.2"`.
    pub name: &'static str,
    /// Inclusive range of `cuptiGetVersion` API versions.
    pub api_versions: (u32, u32),
    /// The PyPI wheel versions whose headers were measured.
    pub measured: &'static [&'static str],
}

const fn g(
    name: &'static str,
    api_versions: (u32, u32),
    measured: &'static [&'static str],
) -> Generation {
    Generation {
        name,
        api_versions,
        measured,
    }
}

/// Every measured range, oldest first. 19 was never shipped on PyPI (it lies between
/// two identical layouts); 25 (a 12.7 that was never released) is deliberately absent.
pub static GENERATIONS: &[Generation] = &[
    g(
        "12.0-12.2",
        (18, 20),
        &[
            "12.0.90", "12.0.146", "12.1.62", "12.1.105", "12.2.60", "12.2.131", "12.2.142",
        ],
    ),
    g("12.3", (21, 21), &["12.3.52", "12.3.101"]),
    g(
        "12.4-12.6",
        (22, 24),
        &[
            "12.4.99", "12.4.127", "12.5.39", "12.5.82", "12.6.37", "12.6.68", "12.6.80",
        ],
    ),
    g(
        "12.8-12.9",
        (26, 28),
        &["12.8.57", "12.8.90", "12.9.19", "12.9.79"],
    ),
    g("13.0", (130_000, 130_099), &["13.0.48", "13.0.85"]),
    g(
        "13.1-13.2",
        (130_100, 130_299),
        &["13.1.75", "13.1.115", "13.2.23", "13.2.75", "13.2.86"],
    ),
    g("13.3", (130_300, 130_399), &["13.3.35", "13.3.75"]),
    g("13.4", (130_400, 130_499), &["13.4.58", "13.4.92"]),
    g("13.5", (130_500, 130_599), &["13.5.25"]),
];
