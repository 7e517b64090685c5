//! Kernel-name demangling that prints exactly what libstdc++'s `__cxa_demangle` prints
//! (what Kineto and PyTorch use; binutils' `c++filt`, which made the fixtures' expected
//! windows, differs only in spelling out `Ss` & co.). Built on a vendored
//! `cpp_demangle` patched where its output differed from libiberty's
//! (vendor/cpp_demangle/PATCHES.md). A name that does not demangle is returned unchanged.

use std::borrow::Cow;

use cpp_demangle::Symbol;

/// Demangle an Itanium C++ symbol as `__cxa_demangle` would; other names come back unchanged.
pub fn demangle(name: &str) -> Cow<'_, str> {
    if !name.starts_with("_Z") {
        return Cow::Borrowed(name);
    }
    let Ok(symbol) = Symbol::new(name.as_bytes()) else {
        return Cow::Borrowed(name);
    };
    match symbol.demangle() {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(name),
    }
}
