//! Links the C++ runtime that provides `__cxa_demangle`, as a shared library: the cupmon
//! binary, the injection library (loaded into CUDA programs, which already have it) and
//! the Python extension (loaded next to torch) then all call the process's one copy, the
//! same function Kineto calls. MSVC has no `__cxa_demangle` (Kineto does not demangle
//! there either), so nothing is linked.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let runtime = match (os.as_str(), env.as_str()) {
        (_, "msvc") => return,
        // Apple's and the BSDs' system C++ runtime is LLVM's libc++ (with libc++abi).
        ("macos" | "ios" | "freebsd" | "openbsd", _) => "c++",
        _ => "stdc++",
    };
    println!("cargo:rustc-link-lib=dylib={runtime}");
}
