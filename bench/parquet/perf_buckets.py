"""Where the samples of a `perf record --call-graph dwarf` of bench-parquet went:
each sample in the first bucket one of its frames names (the export's parts, the
generator), with a second split by what the leaf is doing (zstd, RLE, delta
encoding, dictionary mapping, min/max, page faults).

usage: perf script -i perf.data > perf.txt; python3 perf_buckets.py perf.txt
"""
import re, collections, sys
# First match wins: a name that contains another (OptStrCol, StrCol) comes first.
buckets = [
 ("sort", ["RowOrder::sort","merge_late"]),
 ("OptStrCol", ["OptStrCol as cupmon_parquet::columns::Column>::write"]),
 ("StrCol", ["StrCol as cupmon_parquet::columns::Column>::write"]),
 ("OptI64Col", ["OptI64Col as cupmon_parquet::columns::Column>::write"]),
 ("I32Col", ["I32Col as cupmon_parquet::columns::Column>::write"]),
 ("U32Col", ["U32Col as cupmon_parquet::columns::Column>::write"]),
 ("I64Col", ["I64Col as cupmon_parquet::columns::Column>::write"]),
 ("constants", ["write_constant"]),
 ("correlate", ["correlate"]),
 ("ParquetFile::finish", ["ParquetFile::finish"]),
 ("ParquetFile::create", ["ParquetFile::create"]),
 ("write_row_group other", ["write_row_group"]),
 ("record", ["RecordExport::record"]),
 ("finish other", ["RecordExport::finish"]),
 ("generator", ["next_chunk","RankStream"]),
]
sub = collections.defaultdict(collections.Counter)
counts = collections.Counter(); total = 0
stack = []
def flush():
    global total
    if not stack: return
    total += 1
    for name, pats in buckets:
        if any(p in f for f in stack for p in pats):
            counts[name] += 1
            if any(k in f for f in stack for k in ("ZSTD_","HUF_","HIST_","FSE_")): sb="zstd"
            elif any("append_column" in f or "sys_write" in f for f in stack): sb="append/write"
            elif any("rle::" in f for f in stack): sb="rle"
            elif any("delta::" in f for f in stack): sb="delta enc"
            elif any("map_ints" in f or "map_syms" in f or "dense" in f or "sparse" in f for f in stack): sb="dict map"
            elif any("min_max" in f or "min_by" in f or "max_by" in f for f in stack): sb="min/max"
            elif any("page_fault" in f for f in stack): sb="faults"
            else: sb="other"
            sub[name][sb]+=1
            return
    counts["other"] += 1
for line in open(sys.argv[1]):
    line=line.rstrip('\n')
    if not line.strip():
        flush(); stack=[]; continue
    if line[0] in ' \t':
        parts=line.strip().split(' ',1)
        if len(parts)==2: stack.append(parts[1])
flush()
for k,v in counts.most_common():
    print(f"{100*v/total:5.1f}%  {k}   " + ", ".join(f"{s} {100*c/total:.1f}" for s,c in sub[k].most_common()))
print(total)
