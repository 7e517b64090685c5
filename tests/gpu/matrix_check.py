#!/usr/bin/env python3
"""The checks tests/gpu/cupti_matrix.sh adds to check.py for one CUPTI version: the
dump was made with the libcupti and the CUDA runtime the row is about, a kernel's
duration and the streams as the program measured them, and the CUDA graph.

usage: matrix_check.py CUPMON_BIN NAME DUMP PROGRAM_OUTPUT API_VERSION LIBCUPTI RUNTIME_MAJOR
Prints one PASS/FAIL line per check (NAME record: ..., NAME graph: ...); exits 1 if any
failed. The program is tests/gpu/workload.cu, whose JSON line is the truth.
"""
import collections
import glob
import json
import os
import subprocess
import sys

from check import expected_from
from checks import check, exit_code

SCALE_F = "void gpu_test::scale<float>(float*, float, int)"
SCALE_D = "void gpu_test::scale<double>(double*, double, int)"
ADD = "void gpu_test::blocked_add<float, 256>(float*, float const*, int)"
SPIN = "gpu_test::spin_ns(unsigned long long)"


def main():
    cupmon, name, dump, program_output, api, libcupti, runtime_major = sys.argv[1:8]
    truth = expected_from(program_output)
    meta = json.loads(open(os.path.join(dump, "cupti_monitor_meta.bin"), "rb").read()[16:])
    rec, graph = f"{name} record", f"{name} graph"
    check(f"{rec}: cuptiGetVersion is the wheel's CUPTI_API_VERSION",
          meta.get("cupti_version") == int(api), f"{meta.get('cupti_version')} vs {api}")
    used = os.path.realpath(meta.get("cupti_library") or "")
    check(f"{rec}: the carried libcupti was used", used == os.path.realpath(libcupti),
          f"{meta.get('cupti_library')}")
    check(f"{rec}: the program ran on CUDA {runtime_major}'s runtime",
          truth.get("runtime", 0) // 1000 == int(runtime_major),
          f"cudaRuntimeGetVersion {truth.get('runtime')}, driver {truth.get('driver')}, "
          f"built with CUDART_VERSION {truth.get('headers')}")

    out = os.path.join(os.path.dirname(dump.rstrip("/")), "matrix.window.json")
    subprocess.run([cupmon, "decode", dump, "-o", out], check=True, capture_output=True)
    events = json.load(open(out))["events"]
    kernels = [e for e in events if e["kind"] == "kernel"]
    memsets = [e for e in events if e["kind"] == "gpu_memset"]

    # Duration: the 2 ms kernel against the CUDA events around it on its stream (the
    # events also hold the launch's own start-up: a few microseconds).
    spins = [e for e in kernels if e["name"] == SPIN]
    if len(spins) == 1:
        ms = (spins[0]["end_ns"] - spins[0]["start_ns"]) / 1e6
        want = truth["spin_ms"]
        check(f"{rec}: the 2 ms kernel's duration matches cudaEventElapsedTime",
              2.0 <= ms <= want + 0.02 and ms >= want * 0.95,
              f"recorded {ms:.4f} ms, events {want:.4f} ms")
    else:
        check(f"{rec}: the 2 ms kernel recorded once", False, f"{len(spins)} records")

    # Streams: the program's launches, outside the graph, as it made them.
    plain = [e for e in kernels if not e.get("graph_id")]
    by_name = collections.defaultdict(set)
    for e in plain:
        by_name[e["name"]].add(e["stream_id"])
    s1, s2 = by_name[SCALE_F], by_name[SCALE_D]
    ok = (len(s1) == 1 and len(s2) == 1 and s1 != s2 and by_name[ADD] == s2
          and by_name[SPIN] == s1 and by_name["gpu_test::(anonymous namespace)::hidden(int*)"] == s1)
    check(f"{rec}: kernels on the streams the program launched them on", ok,
          f"s1 {sorted(s1)}, s2 {sorted(s2)}, blocked_add {sorted(by_name[ADD])}, spin {sorted(by_name[SPIN])}")
    loop_memsets = {e["stream_id"] for e in memsets if not e.get("graph_id")}
    check(f"{rec}: memsets on s2", loop_memsets == s2, f"{sorted(loop_memsets)} vs {sorted(s2)}")
    same_ids = s1 == {truth.get("s1")} and s2 == {truth.get("s2")}
    print(f"INFO {rec}: CUPTI's stream ids {'equal' if same_ids else 'differ from'} "
          f"cudaStreamGetId's ({sorted(s1)}, {sorted(s2)} vs {truth.get('s1')}, {truth.get('s2')})")

    # The graph: captured once (scale<float>, a memset, blocked_add), launched twice.
    gk = [e for e in kernels if e.get("graph_id")]
    gm = [e for e in memsets if e.get("graph_id")]
    check(f"{graph}: 2 launches x 2 kernel nodes recorded with a graph id", len(gk) == 4,
          f"{len(gk)} kernels with a graph id")
    check(f"{graph}: 2 launches x 1 memset node recorded with a graph id", len(gm) == 2,
          f"{len(gm)} memsets with a graph id")
    check(f"{graph}: the graph's kernels are scale<float> and blocked_add",
          sorted(e["name"] for e in gk) == sorted([SCALE_F, SCALE_F, ADD, ADD]),
          str(sorted({e["name"] for e in gk})))
    nodes = {e.get("graph_node_id") for e in gk}
    check(f"{graph}: one graph node id per kernel node", len(nodes) == 2 and 0 not in nodes,
          str(sorted(nodes)))
    check(f"{graph}: one graph", len({e["graph_id"] for e in gk + gm}) == 1,
          str(sorted({e["graph_id"] for e in gk + gm})))
    # API calls: from the dump, and from its windows (the run has one over all of it).
    api = list(events)
    for w in glob.glob(os.path.join(dump, "window-*.json")):
        api += json.load(open(w))["events"]
    launches = {e["correlation_id"] for e in api if e["kind"] == "cuda_runtime"
                and (e.get("api_name") or "").startswith("cudaGraphLaunch")}
    check(f"{graph}: every graph op belongs to a cudaGraphLaunch call",
          len(launches) == 2 and all(e["correlation_id"] in launches for e in gk + gm),
          f"{len(launches)} cudaGraphLaunch calls")


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
