#!/bin/sh
# Regenerates demangle_cases.tsv (mangled TAB what libstdc++'s __cxa_demangle prints,
# the demangler Kineto and PyTorch use) from the names in demangle_names.txt plus every
# name in the fixtures' kernel_names.tsv. The expected strings are committed so the test
# runs without a C++ toolchain. Run from this directory.
set -eu
g++ -O1 -o /tmp/cxa_demangle.$$ cxa_demangle.cc
demangle() { /tmp/cxa_demangle.$$; }
fixtures=../../../../tests/fixtures/h200-cupti13.0
{ cat demangle_names.txt; cut -f2 "$fixtures"/*/kernel_names.tsv; } | sort -u > /tmp/demangle_names.$$
demangle < /tmp/demangle_names.$$ | paste /tmp/demangle_names.$$ - > demangle_cases.tsv
rm -f /tmp/demangle_names.$$
echo "$(wc -l < demangle_cases.tsv) cases, libstdc++ of $(g++ --version | head -1)"

# libstdcxx_symbols.tsv.gz: every symbol g++ emits for libstdcxx_symbols.cpp (an STL-heavy
# file), with __cxa_demangle's output: a regression corpus for cupmon's demangler.
g++ -std=c++17 -O0 -c libstdcxx_symbols.cpp -o /tmp/libstdcxx_symbols.$$.o
nm /tmp/libstdcxx_symbols.$$.o | awk '{print $NF}' | grep '^_Z' | sort -u > /tmp/libstdcxx_symbols.$$
demangle < /tmp/libstdcxx_symbols.$$ | paste /tmp/libstdcxx_symbols.$$ - | gzip -9 > libstdcxx_symbols.tsv.gz
rm -f /tmp/libstdcxx_symbols.$$ /tmp/libstdcxx_symbols.$$.o /tmp/cxa_demangle.$$
