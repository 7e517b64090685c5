#!/usr/bin/env python3
"""Checks of a `cupmon run` on the GPU machine (used by tests/gpu/run.sh).

usage: check.py CUPMON_BIN NAME RUN_DIR PROGRAM_OUTPUT [--full-window] [--torch]
Prints one PASS/FAIL line per check and exits 1 if any failed.
"""
import collections
import glob
import gzip
import json
import os
import subprocess
import sys

from checks import check, exit_code


def expected_from(path):
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit(f"no JSON line in {path}")


def decode(cupmon, dump, out):
    subprocess.run([cupmon, "decode", dump, "-o", out], check=True, capture_output=True)
    return json.load(open(out))


def main():
    cupmon, name, run_dir, program_output = sys.argv[1:5]
    full_window = "--full-window" in sys.argv
    torch = "--torch" in sys.argv
    expected = expected_from(program_output)
    dumps = [d for d in glob.glob(os.path.join(run_dir, "*")) if os.path.isdir(d)]
    check(f"{name}: one dump directory", len(dumps) == 1, str(dumps))
    if len(dumps) != 1:
        return
    dump = dumps[0]
    meta = open(os.path.join(dump, "cupti_monitor_meta.bin"), "rb").read()[16:]
    print(f"INFO {name}: libcupti {json.loads(meta).get('cupti_library')}")
    everything = decode(cupmon, dump, os.path.join(run_dir, "all.window.json"))
    kinds = collections.Counter(e["kind"] for e in everything["events"])
    stats = subprocess.run([cupmon, "stats", dump], capture_output=True, text=True)
    check(f"{name}: cupmon stats reads the dump", stats.returncode == 0, stats.stderr.strip()[-300:])
    check(f"{name}: zero dropped records", "dropped records: 0" in stats.stdout,
          next((l for l in stats.stdout.splitlines() if "dropped" in l), "no dropped line"))
    names = {e["name"] for e in everything["events"] if e["kind"] == "kernel"}
    if not torch:
        check(f"{name}: every kernel recorded", kinds["kernel"] == expected["kernels"],
              f"{kinds['kernel']} recorded, {expected['kernels']} launched")
        check(f"{name}: every memcpy recorded", kinds["gpu_memcpy"] == expected["memcpy"],
              f"{kinds['gpu_memcpy']} vs {expected['memcpy']}")
        check(f"{name}: every memset recorded", kinds["gpu_memset"] == expected["memset"],
              f"{kinds['gpu_memset']} vs {expected['memset']}")
        want = {"void gpu_test::scale<float>(float*, float, int)",
                "void gpu_test::scale<double>(double*, double, int)",
                "void gpu_test::blocked_add<float, 256>(float*, float const*, int)",
                "gpu_test::(anonymous namespace)::hidden(int*)", "plain_c_kernel"}
        check(f"{name}: kernel names demangled like c++filt", want <= names, str(sorted(names)))
    else:
        check(f"{name}: kernels recorded", kinds["kernel"] > 0, str(dict(kinds)))
        check(f"{name}: torch kernel names demangled", any("at::native" in n for n in names),
              str(sorted(names)[:3]))
    check(f"{name}: no unresolved kernel names", not any(n.startswith("kernel@0x") for n in names))
    windows = sorted(glob.glob(os.path.join(dump, "window-*.json")))
    check(f"{name}: a trace window was written", len(windows) >= 1, str(windows))
    if not windows:
        return
    window = json.load(open(windows[0]))
    events = window["events"]
    wk = collections.Counter(e["kind"] for e in events)
    check(f"{name}: window has runtime and driver records", wk["cuda_runtime"] > 0 and wk["cuda_driver"] > 0, str(dict(wk)))
    api_corr = {e["correlation_id"] for e in events if e["kind"] in ("cuda_runtime", "cuda_driver")}
    gpu = [e for e in events if e["kind"] in ("kernel", "gpu_memcpy", "gpu_memset")]
    orphans = [e for e in gpu if e["correlation_id"] not in api_corr]
    check(f"{name}: every GPU op in the window has its launching API call", not orphans and len(gpu) > 0,
          f"{len(gpu)} GPU ops, {len(orphans)} without a launch record")
    if full_window:
        check(f"{name}: the whole-run window holds every kernel", wk["kernel"] == expected["kernels"],
              f"{wk['kernel']} vs {expected['kernels']}")
    tids = {e["thread_id"] for e in events if e["kind"] in ("cuda_runtime", "cuda_driver")}
    if torch:
        # Backward runs on autograd's own threads: all must be OS ids (small), main among them.
        pid_max = int(open("/proc/sys/kernel/pid_max").read())
        check(f"{name}: API thread ids are OS thread ids",
              expected["main_tid"] in tids and all(0 < t <= pid_max for t in tids),
              f"{sorted(tids)[:6]}, main {expected['main_tid']}")
    else:
        want_tids = {expected["main_tid"]} | ({expected["worker_tid"]} if expected.get("worker_tid") else set())
        check(f"{name}: API thread ids are OS thread ids", bool(tids) and tids <= want_tids,
              f"{sorted(tids)[:5]} vs {sorted(want_tids)}")
    if full_window and expected.get("worker_tid"):
        check(f"{name}: the second thread's launches carry its id", expected["worker_tid"] in tids)
    trace_path = windows[0].replace(".json", ".trace.json.gz")
    check(f"{name}: the window's trace was written", os.path.exists(trace_path), trace_path)
    if not os.path.exists(trace_path):
        return
    trace = json.load(gzip.open(trace_path, "rt"))
    tev = trace["traceEvents"]
    starts = {e["id"] for e in tev if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    finishes = [e for e in tev if e.get("ph") == "f" and e.get("cat") == "ac2g"]
    kernels_x = [e for e in tev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    check(f"{name}: an ac2g arrow into every kernel of the window",
          len(finishes) >= len(kernels_x) > 0 and all(f["id"] in starts for f in finishes),
          f"{len(kernels_x)} kernels, {len(finishes)} arrow ends, {len([f for f in finishes if f['id'] not in starts])} without a start")
    kineto = json.load(open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "h200-cupti13.0",
                                         "torch_mlp", "kineto_cpu_trace.json")))["deviceProperties"][0]
    ours = (trace.get("deviceProperties") or [{}])[0]
    check(f"{name}: deviceProperties as Kineto reports them for this H200", ours == kineto,
          f"differ in {sorted(k for k in set(ours) | set(kineto) if ours.get(k) != kineto.get(k))}")
    check(f"{name}: trace top level says how many records were dropped",
          trace.get("cupmon", {}).get("dropped_records") == 0, str(trace.get("cupmon")))


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
