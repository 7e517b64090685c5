#!/bin/sh
# Regenerates demangle_cases.tsv (mangled TAB what `c++filt` prints) from the names in
# demangle_names.txt plus every name in the fixtures' kernel_names.tsv. The expected
# strings are committed so the test runs without binutils. Run from this directory.
set -eu
fixtures=../../../../tests/fixtures/h200-cupti13.0
{ cat demangle_names.txt; cut -f2 "$fixtures"/*/kernel_names.tsv; } | sort -u > /tmp/demangle_names.$$
c++filt < /tmp/demangle_names.$$ | paste /tmp/demangle_names.$$ - > demangle_cases.tsv
rm -f /tmp/demangle_names.$$
echo "$(wc -l < demangle_cases.tsv) cases, c++filt: $(c++filt --version | head -1)"

# libstdcxx_symbols.tsv.gz: every symbol g++ emits for libstdcxx_symbols.cpp (an STL-heavy
# file), with c++filt's output: a regression corpus for the vendored demangler.
g++ -std=c++17 -O0 -c libstdcxx_symbols.cpp -o /tmp/libstdcxx_symbols.$$.o
nm /tmp/libstdcxx_symbols.$$.o | awk '{print $NF}' | grep '^_Z' | sort -u > /tmp/libstdcxx_symbols.$$
c++filt < /tmp/libstdcxx_symbols.$$ | paste /tmp/libstdcxx_symbols.$$ - | gzip -9 > libstdcxx_symbols.tsv.gz
rm -f /tmp/libstdcxx_symbols.$$ /tmp/libstdcxx_symbols.$$.o
