//! Kineto's rules around `__cxa_demangle` (libkineto/src/Demangle.cpp): over 1024 bytes or
//! rejected means unchanged. The names demangle as `c++filt -i` (binutils 2.40) prints them.

use cupmon_demangle::{demangle, KINETO_MAX_SYMBOL_LEN};

/// The function `x…x()` mangled (`_ZN` <4-digit length> `x…x` `Ev`) in exactly `total`
/// bytes, and its demangled form.
fn mangled_of_len(total: usize) -> (String, String) {
    let ident_len = total - 3 - 4 - 2;
    let ident = "x".repeat(ident_len);
    (format!("_ZN{ident_len:04}{ident}Ev"), format!("{ident}()"))
}

#[test]
fn names_up_to_the_limit_demangle_and_longer_ones_stay_mangled() {
    // Leading zeros in a <source-name> length are accepted by __cxa_demangle.
    let (at_limit, want) = mangled_of_len(KINETO_MAX_SYMBOL_LEN);
    assert_eq!(at_limit.len(), 1024);
    assert_eq!(demangle(&at_limit), want);

    let (over, _) = mangled_of_len(KINETO_MAX_SYMBOL_LEN + 1);
    assert_eq!(over.len(), 1025);
    // GCC 12's libstdc++ rejects it too (libiberty's recursion limit, 2 components per
    // byte against 2048); the length check keeps it so with any C++ runtime.
    assert_eq!(
        demangle(&over),
        over,
        "Kineto shows names over 1024 bytes mangled"
    );
}

#[test]
fn names_that_are_not_mangled_come_back_unchanged() {
    for name in [
        "ampere_sgemm_128x64_nn",
        "kernel@0x7f3a2c001000",
        "_Z",
        "",
        "_ZN2at6native6launch", // a nested name that is never closed
        "_Z9short",             // a source name longer than what follows
        "caf\u{e9}_kernel",
    ] {
        assert_eq!(demangle(name), name, "{name:?}");
    }
}

#[test]
fn bare_type_names_demangle_as_kineto_shows_them() {
    // __cxa_demangle is libiberty's d_demangle with DMGL_TYPES: a whole-string type
    // demangles. Kineto passes every kernel name through it, so it shows these too.
    assert_eq!(demangle("i"), "int");
    assert_eq!(demangle("3foo"), "foo");
    assert_eq!(demangle("PKc"), "char const*");
}

#[test]
fn a_name_holding_a_nul_comes_back_unchanged() {
    let name = "_ZN2at6native6launchEv\0tail";
    assert_eq!(demangle(name), name);
}

#[test]
fn std_abbreviations_print_short_as_without_dmgl_verbose() {
    // c++filt spells these out unless given -i; __cxa_demangle never does.
    assert_eq!(demangle("_ZNSolsEi"), "std::ostream::operator<<(int)");
    assert_eq!(demangle("_Z1fSs"), "f(std::string)");
}

#[test]
fn clone_suffixes_and_special_names() {
    assert_eq!(demangle("_Z3barv.cold"), "bar() [clone .cold]");
    assert_eq!(demangle("_ZTVN2at6TensorE"), "vtable for at::Tensor");
    assert_eq!(
        demangle("_ZGVZN2at6native4initEvE1x"),
        "guard variable for at::native::init()::x"
    );
}

#[test]
fn many_threads_at_once() {
    // __cxa_demangle keeps no global state; the monitor's worker and the CLI call it
    // from several threads.
    let name = "_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii";
    let want = "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, \
                c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)";
    let threads: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(move || (0..2000).all(|_| demangle(name) == want)))
        .collect();
    for t in threads {
        assert!(t.join().unwrap());
    }
}
