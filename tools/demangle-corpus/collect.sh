#!/usr/bin/env bash
# Builds a demangling test corpus from real C++ symbols: a varied, reproducible sample of
# the `_Z` names in shared objects (or in nm output), each with what binutils' `c++filt -i`
# prints for it, gzipped. cupmon-records' tests/demangle.rs checks cupmon's demangler
# (libstdc++'s __cxa_demangle, as Kineto calls it) against every line.
#
# usage: collect.sh [-n SIZE] [-s SEED] [-l LABEL] OUT.tsv.gz INPUT...
#   INPUT  a shared object or object file: its symbol tables (nm, nm -D), and, when it
#          carries CUDA device code (.nv_fatbin), the `_Z` strings of its .rodata: the
#          names the CUDA runtime registers kernels under, which CUPTI reports;
#          or a text file: nm output or one symbol per line (the last field is used).
#   -n     sample size (default 5000)      -s  sampling seed (default 1)
#   -l     where the inputs came from, for the header (default: their file names)
#
# Output lines: mangled TAB c++filt-output [TAB __cxa_demangle-output], the third field
# only where this machine's libstdc++ prints something else (for example an older
# libstdc++ rejecting a name a newer c++filt reads; it then prints the name unchanged).
# `-i` because __cxa_demangle never sets DMGL_VERBOSE: `std::ostream`, not
# `std::basic_ostream<char, std::char_traits<char> >`. Lines starting with # describe
# the corpus.
#
# The sample takes, in this order and each from what is left: every name the two
# demanglers disagree on (at most 3%), CUDA kernels (registered names of `void`
# functions, 40%), other `void` functions named *kernel* (host stubs, CPU kernels; 5%),
# names over 1024 bytes (3%), lambdas (12%), anonymous namespaces (6%), at::native (8%),
# special names such as vtables, guard variables and thunks (4%), clones (2%),
# templates (10%), then any.
#
# Example (the torch wheel from PyPI carries libtorch_cuda.so with its CUDA kernels):
#   pip download --no-deps --only-binary=:all: torch -d /tmp/w
#   unzip -q /tmp/w/torch-*.whl 'torch/lib/*' -d /tmp/w
#   tools/demangle-corpus/collect.sh -l "torch 2.x wheel" \
#       crates/cupmon-records/tests/data/demangle_corpus.tsv.gz /tmp/w/torch/lib/*.so
# Needs binutils (nm, objcopy, readelf, strings, c++filt), g++, coreutils, awk, gzip.
set -euo pipefail

size=5000 seed=1 label=
while getopts n:s:l: opt; do
    case $opt in
        n) size=$OPTARG ;;
        s) seed=$OPTARG ;;
        l) label=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -lt 2 ]; then
    sed -n '7,15p' "$0" >&2
    exit 2
fi
out=$1
shift
for tool in nm objcopy readelf strings c++filt g++ shuf awk gzip; do
    command -v "$tool" > /dev/null || { echo "collect.sh: $tool not found on PATH" >&2; exit 2; }
done
for f in "$@"; do
    [ -r "$f" ] || { echo "collect.sh: cannot read input $f" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One name per line, `_Z` and the characters Itanium manglings use (c++filt reads its
# input as words of exactly these).
only_mangled() { grep -E '^_Z[A-Za-z0-9_.$]+$' || true; }

: > "$tmp/symbols"
: > "$tmp/registered"
for f in "$@"; do
    if [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; then
        { nm "$f" 2> /dev/null || true; nm -D "$f" 2> /dev/null || true; } |
            awk '{ print $NF }' | only_mangled >> "$tmp/symbols"
        # grep -q would stop reading early, and readelf's SIGPIPE fail the pipeline.
        if readelf -SW "$f" | grep '\.nv_fatbin' > /dev/null; then
            objcopy -O binary --only-section=.rodata "$f" "$tmp/rodata"
            # Linkers merge string tails, so a name can follow another string's bytes.
            strings -a -n 8 "$tmp/rodata" | grep -o '_Z[A-Za-z0-9_.$]*' >> "$tmp/registered" || true
        fi
    else
        awk '{ print $NF }' "$f" | only_mangled >> "$tmp/symbols"
    fi
done
sort -u -o "$tmp/symbols" "$tmp/symbols"
sort -u -o "$tmp/registered" "$tmp/registered"
sort -u "$tmp/symbols" "$tmp/registered" > "$tmp/names"
[ -s "$tmp/names" ] || { echo "collect.sh: no _Z symbols in the inputs" >&2; exit 2; }

g++ -O1 -o "$tmp/cxa_demangle" "$here/../../crates/cupmon-records/tests/data/cxa_demangle.cc"
c++filt -i < "$tmp/names" > "$tmp/filt"
"$tmp/cxa_demangle" < "$tmp/names" > "$tmp/cxa"

# pool: category TAB mangled TAB c++filt TAB __cxa_demangle. A .rodata string is kept
# only when c++filt reads it (others are pieces of longer strings).
paste "$tmp/names" "$tmp/filt" "$tmp/cxa" |
    awk -F '\t' -v OFS='\t' -v reg="$tmp/registered" -v sym="$tmp/symbols" '
        BEGIN {
            while ((getline n < reg) > 0) registered[n] = 1
            while ((getline n < sym) > 0) symbol[n] = 1
        }
        {
            m = $1; f = $2; c = $3
            if (!(m in symbol) && f == m) next
            if (f != c) cat = "disagree"
            else if (f ~ /^void / && (m in registered)) cat = "kernel"
            else if (f ~ /^void / && m ~ /[Kk]ernel/) cat = "kernel_named"
            else if (length(m) > 1024) cat = "long"
            else if (f ~ /\{lambda\(/) cat = "lambda"
            else if (f ~ /\(anonymous namespace\)/) cat = "anonymous"
            else if (f ~ /at::native::/) cat = "at_native"
            else if (f ~ /^(vtable|VTT|construction vtable|typeinfo|guard variable|non-virtual thunk|virtual thunk|covariant return thunk|reference temporary|TLS|transaction clone)/) cat = "special"
            else if (f ~ /\[clone /) cat = "clone"
            else if (f ~ /</) cat = "template"
            else cat = "other"
            print cat, m, f, c
        }' > "$tmp/pool"

# Reproducible sampling: shuf reads its randomness from a stream made from the seed.
random() { yes "cupmon-demangle-corpus-$seed"; }
: > "$tmp/sample"
take() { # category percent
    local want=$(($2 * size / 100))
    awk -F '\t' -v c="$1" '$1 == c' "$tmp/pool" | shuf -n "$want" --random-source=<(random) >> "$tmp/sample" || true
}
take disagree 3
take kernel 40
take kernel_named 5
take long 3
take lambda 12
take anonymous 6
take at_native 8
take special 4
take clone 2
take template 10
# Fill up from whatever is left.
left=$((size - $(wc -l < "$tmp/sample")))
if [ "$left" -gt 0 ]; then
    cut -f2 "$tmp/sample" | sort > "$tmp/taken"
    awk -F '\t' -v t="$tmp/taken" 'BEGIN { while ((getline n < t) > 0) taken[n] = 1 } !($2 in taken)' "$tmp/pool" |
        shuf -n "$left" --random-source=<(random) >> "$tmp/sample" || true
fi

libstdcxx=$(ldd "$tmp/cxa_demangle" | awk '/libstdc\+\+/ { print $3 }')
{
    echo "# cupmon demangle corpus, made by tools/demangle-corpus/collect.sh -n $size -s $seed"
    echo "# from: ${label:-$(for f in "$@"; do basename "$f"; done | paste -sd ' ')}"
    echo "# $(wc -l < "$tmp/pool") distinct names, $(wc -l < "$tmp/sample") sampled; per category:" \
        "$(cut -f1 "$tmp/sample" | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }' | sed 's/, $//')"
    echo "# expected: $(c++filt --version | head -1) with -i; third field: __cxa_demangle of" \
        "$(basename "$(readlink -f "$libstdcxx")") where it differs"
    sort -t "$(printf '\t')" -k2,2 "$tmp/sample" |
        awk -F '\t' -v OFS='\t' '{ if ($3 == $4) print $2, $3; else print $2, $3, $4 }'
} | gzip -9 -n > "$out"

echo "collect.sh: $(wc -l < "$tmp/sample") of $(wc -l < "$tmp/pool") names into $out" \
    "($(wc -c < "$out") bytes); c++filt and __cxa_demangle disagree on" \
    "$(awk -F '\t' '$1 == "disagree"' "$tmp/pool" | wc -l) of the pool" >&2
