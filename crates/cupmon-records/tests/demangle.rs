//! Kernel names demangle as torch.profiler shows them (libstdc++'s `__cxa_demangle` with
//! Kineto's rules), checked against other programs' output on real symbols:
//! - data/demangle_cases.tsv: both fixtures' kernel names and PyTorch/cuBLAS/CUTLASS/CUB
//!   style and tricky names, with `__cxa_demangle`'s output (gen_demangle_cases.sh);
//! - data/libstdcxx_symbols.tsv.gz: every symbol g++ emits for an STL-heavy file, likewise;
//! - data/demangle_corpus.tsv.gz: 5,000 symbols of the torch 2.15 wheel's libraries (2,011
//!   of them CUDA kernels under the names they are registered with, which CUPTI reports)
//!   with binutils' `c++filt -i` output (tools/demangle-corpus/collect.sh; its header says
//!   what was sampled), and a sample of them against the `c++filt` on PATH.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use cupmon_records::demangle;

const CASES: &str = include_str!("data/demangle_cases.tsv");
const STL: &[u8] = include_bytes!("data/libstdcxx_symbols.tsv.gz");
const CORPUS: &[u8] = include_bytes!("data/demangle_corpus.tsv.gz");

/// Kineto's `kMaxSymbolSize`: longer names are shown mangled whatever the demangler says.
const KINETO_MAX_SYMBOL_LEN: usize = 1024;

fn gunzip(bytes: &[u8]) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// One symbol and what cupmon may print for it.
struct Case<'a> {
    mangled: &'a str,
    /// What the reference program printed.
    reference: &'a str,
    /// The collecting machine's `__cxa_demangle`, where it printed something else (an older
    /// libstdc++ than the binutils, rejecting the name): also right, for that libstdc++.
    cxa: Option<&'a str>,
}

impl Case<'_> {
    /// Whether `got` is right: Kineto keeps long names mangled; otherwise the reference
    /// program's output, or the collecting libstdc++'s where that differed.
    fn accepts(&self, got: &str) -> bool {
        if self.mangled.len() > KINETO_MAX_SYMBOL_LEN {
            return got == self.mangled;
        }
        got == self.reference || self.cxa == Some(got)
    }
}

fn cases(text: &str) -> Vec<Case<'_>> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let mut fields = line.split('\t');
            let mangled = fields.next().unwrap();
            let reference = fields.next().unwrap_or_else(|| panic!("no tab: {line}"));
            Case {
                mangled,
                reference,
                cxa: fields.next(),
            }
        })
        .collect()
}

/// Every case cupmon prints wrongly, at most `show` of them spelled out.
fn mismatches<'a>(cases: &[Case<'a>], reference: &str, show: usize) -> (usize, String) {
    let bad: Vec<_> = cases
        .iter()
        .map(|case| (case, demangle(case.mangled)))
        .filter(|(case, got)| !case.accepts(got))
        .collect();
    let text = bad
        .iter()
        .take(show)
        .map(|(case, got)| {
            format!(
                "{}\n  {reference}: {}\n  cupmon: {got}",
                case.mangled, case.reference
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    (bad.len(), text)
}

#[test]
fn matches_cxa_demangle_on_every_case() {
    let cases = cases(CASES);
    assert!(cases.len() > 100, "{} cases", cases.len());
    let (bad, text) = mismatches(&cases, "__cxa_demangle", 20);
    assert_eq!(bad, 0, "{bad} of {} differ:\n{text}", cases.len());
}

/// The vendored cpp_demangle fork differed on 32 of these; `__cxa_demangle` made them.
#[test]
fn stl_corpus_matches_cxa_demangle_on_every_symbol() {
    let text = gunzip(STL);
    let cases = cases(&text);
    assert_eq!(cases.len(), 3693);
    let (bad, text) = mismatches(&cases, "__cxa_demangle", 20);
    assert_eq!(bad, 0, "{bad} of {} differ:\n{text}", cases.len());
}

#[test]
fn torch_corpus_matches_cxxfilt_on_every_symbol() {
    let text = gunzip(CORPUS);
    let cases = cases(&text);
    assert!(cases.len() >= 5000, "{} symbols", cases.len());
    let (bad, shown) = mismatches(&cases, "c++filt -i", 20);
    assert_eq!(
        bad,
        0,
        "{bad} of {} differ (a libstdc++ older than the corpus header's?):\n{shown}",
        cases.len()
    );
    let by_cxa = cases
        .iter()
        .filter(|c| c.cxa.is_some_and(|cxa| demangle(c.mangled) == cxa))
        .count();
    eprintln!(
        "{} corpus symbols as c++filt -i prints them or, {by_cxa} of them, as the corpus's \
         libstdc++ did instead",
        cases.len()
    );
}

/// Every 20th corpus symbol through the `c++filt` on PATH, whatever version it is.
#[test]
fn torch_corpus_sample_matches_live_cxxfilt() {
    let text = gunzip(CORPUS);
    let cases = cases(&text);
    let sample: Vec<_> = cases.iter().step_by(20).collect();
    let input: String = sample.iter().map(|c| format!("{}\n", c.mangled)).collect();
    let child = Command::new("c++filt")
        .arg("-i")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            cupmon_test_skip::skipped!("live c++filt check: cannot run c++filt ({e})");
            return;
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "c++filt -i: {}", output.status);
    let live = String::from_utf8(output.stdout).unwrap();
    let live: Vec<_> = live.lines().collect();
    assert_eq!(live.len(), sample.len());
    let live_cases: Vec<_> = sample
        .iter()
        .zip(&live)
        .map(|(c, printed)| Case {
            mangled: c.mangled,
            reference: printed,
            cxa: c.cxa,
        })
        .collect();
    let (bad, shown) = mismatches(&live_cases, "live c++filt -i", 20);
    assert_eq!(bad, 0, "{bad} of {} differ:\n{shown}", sample.len());
    let drift = sample
        .iter()
        .zip(&live)
        .filter(|(c, printed)| c.reference != **printed)
        .count();
    eprintln!(
        "live c++filt -i: {} symbols; it prints {drift} differently from the corpus's c++filt",
        sample.len()
    );
}

/// The issue: cpp_demangle printed `{lambda(c10::BFloat16 const)#1}&`, so this copy kernel
/// never joined torch.profiler's by name.
#[test]
fn regression_bfloat16_copy_kernel_lambda_keeps_const_after_the_closure() {
    let mangled = "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implIZZZNS0_\
                   23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE10_\
                   clEvEUlN3c108BFloat16EE_EEvS4_RKT_EUliE_EEviT1_";
    let closure = "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}\
                   ::operator()() const::{lambda()#12}::operator()() const::\
                   {lambda(c10::BFloat16)#1}";
    let inner = format!(
        "at::native::gpu_kernel_impl<{closure}>(at::TensorIteratorBase&, {closure} const&)\
         ::{{lambda(int)#1}}"
    );
    let want = format!("void at::native::elementwise_kernel<128, 4, {inner}>(int, {inner})");
    assert_eq!(demangle(mangled), want);
}
