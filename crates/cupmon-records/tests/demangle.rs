//! Kernel names demangle exactly as `c++filt` prints them: every name in both fixtures'
//! kernel_names.tsv and a list of PyTorch/cuBLAS/CUTLASS/CUB-style and tricky names
//! (tests/data/demangle_cases.tsv, made by gen_demangle_cases.sh with GNU c++filt 2.40).

use cupmon_records::demangle;

const CASES: &str = include_str!("data/demangle_cases.tsv");

#[test]
fn matches_cxxfilt_on_every_case() {
    let mut bad = Vec::new();
    let mut n = 0;
    for line in CASES.lines() {
        let (mangled, want) = line.split_once('\t').unwrap();
        n += 1;
        let got = demangle(mangled);
        if got != want {
            bad.push(format!("{mangled}\n  c++filt: {want}\n  cupmon:  {got}"));
        }
    }
    assert!(n > 100, "{n} cases");
    assert!(
        bad.is_empty(),
        "{} of {n} differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Every symbol g++ emits for an STL-heavy file (tests/data/libstdcxx_symbols.cpp):
/// a regression guard for the vendored demangler's patches. 32 of 3693 still differ
/// (SFINAE expressions, closure `&&` in std::variant helpers: vendor/cpp_demangle/PATCHES.md).
#[test]
fn stl_corpus_differs_only_in_known_places() {
    use std::io::Read;
    let gz = include_bytes!("data/libstdcxx_symbols.tsv.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    let mut bad = 0;
    let mut n = 0;
    for line in text.lines() {
        let (mangled, want) = line.split_once('\t').unwrap();
        n += 1;
        if demangle(mangled) != want {
            bad += 1;
        }
    }
    assert_eq!(n, 3693);
    assert!(
        bad <= 32,
        "{bad} of {n} differ from __cxa_demangle (32 known)"
    );
}
