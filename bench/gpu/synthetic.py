"""--dry-run: a stand-in for the process runner that writes the logs, BENCH lines, dump
directories (sparse files of plausible sizes), minimal-consumer info and `cupmon stats`
output a real run would, with made-up numbers. It lets the whole driver (wrapping,
parsing, statistics, goal checks, table, RESULTS.md) run on a machine without a GPU.

BENCH_DRY_FAIL=part:config:rep[,...] makes those runs fail (exit code 1, a stderr
message), to check how failures are reported.
"""

import json
import os
import random

from report import records_with_cupmon
from runner import Proc, parse_bench_line

# Added cost per configuration over bare, in the workload's unit; bare first.
MODEL = {
    "launch": {"bare": 2400.0, "floor": 250.0, "cupmon": 265.0, "window": 1500.0},
    "eager": {"bare": 70.0, "floor": 1.5, "cupmon": 1.6, "window": 12.0, "torchprof": 45.0},
    "train": {"bare": 5.0, "floor": 0.03, "cupmon": 0.035, "window": 0.3, "torchprof": 1.6},
}
BURST_RATES = {(1, 0): 0.42e6, (4, 0): 0.95e6, (1, 256): 1.6e6, (4, 256): 3.1e6}
KERNEL_RECORD_BYTES = 216  # CUPTI 13.0 kernel record


def _arg(cmd, flag, default=None):
    return cmd[cmd.index(flag) + 1] if flag in cmd else default


class DryExecutor:
    dry = True

    def __init__(self, seed=7):
        self.rng = random.Random(seed)
        self.pid = 40000
        self.fail = set(os.environ.get("BENCH_DRY_FAIL", "").split(",")) - {""}

    def run(self, cmd, env_extra, log, timeout_s, tag, drop_env=(), sampler=None):
        self.pid += 1
        part, config, rep = tag["part"], tag["config"], tag["rep"]
        os.makedirs(os.path.dirname(log), exist_ok=True)
        res = Proc(cmd=[str(c) for c in cmd], log=log, rc=0, wall_s=1.0 + self.rng.random(),
                   maxrss_kb=int((300 if part in ("launch", "burst", "memory") else 1800) * 1024
                                 * (1.1 if config in ("cupmon", "window") else 1.0)))
        bench, kernels = self._bench(part, config, cmd)
        failed = f"{part}:{config}:{rep}" in self.fail
        with open(log + ".cmd", "w") as f:
            f.write(" ".join(res.cmd) + "\n")
        with open(log + ".out", "w") as f:
            if not failed:
                f.write(f"BENCH_PID {self.pid}\nBENCH " + json.dumps(bench) + "\n")
        with open(log + ".err", "w") as f:
            f.write("synthetic stderr\nRuntimeError: injected failure (BENCH_DRY_FAIL)\n" if failed else "")
        if failed:
            res.rc, res.error = 1, "exit code 1"
            return res
        res.bench = parse_bench_line(log + ".out")
        if config == "floor":
            with open(env_extra["MINCON_INFO"], "w") as f:
                json.dump({"pid": self.pid, "cupti_api_version": 130000,
                           "libcupti": "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.2025.3.0",
                           "buffer_size": 4 << 20, "buffers_completed": kernels // 19000 + 1,
                           "dropped_records": 0, "failures": 0}, f)
        if records_with_cupmon(config):
            root = _arg(cmd, "-o") or env_extra.get("CUPMON_OUTPUT_DIR")
            d = os.path.join(root, str(self.pid))
            os.makedirs(d, exist_ok=True)
            # Sparse files: the sizes are right, the disk stays empty.
            with open(os.path.join(d, "cupti_monitor_raw_buffers.bin"), "wb") as f:
                f.truncate(kernels * KERNEL_RECORD_BYTES)
            with open(os.path.join(d, "cupti_monitor_meta.bin"), "wb") as f:
                f.write(b"CUPMMETA")
            with open(os.path.join(d, ".synthetic.json"), "w") as f:
                json.dump({"kernels": kernels}, f)
            if config == "window":
                with open(os.path.join(d, "window-0.json"), "wb") as f:
                    f.truncate(kernels * 600)
        if sampler is not None:
            for t in range(int(float(_arg(cmd, "--burst", 60))) + 1):
                sampler.record(t, 620 * 1024 + self.rng.randint(0, 4096))
            sampler.pid = self.pid
        return res

    def _bench(self, part, config, cmd):
        noise = lambda: 1 + self.rng.uniform(-0.01, 0.01)
        if part in ("burst", "memory"):
            t, g = int(_arg(cmd, "--threads", 1)), int(_arg(cmd, "--graph", 0))
            secs = float(_arg(cmd, "--burst"))
            rate = float(_arg(cmd, "--rate", 0)) or BURST_RATES.get((t, g), 1e6) * (0.97 if records_with_cupmon(config) else 1)
            kernels = int(rate * secs)
            return ({"workload": "empty_kernel", "mode": "burst", "pid": self.pid, "threads": t, "graph": g,
                     "seconds": secs, "kernels": kernels, "warmup_kernels": 256 * t,
                     "total_kernels": kernels + 256 * t, "rate": rate * noise()}, kernels + 256 * t)
        m = MODEL[part]
        v = (m["bare"] + (m[config] if config != "bare" else 0)) * noise()
        if part == "launch":
            n = int(_arg(cmd, "--launches"))
            return ({"workload": "empty_kernel", "mode": "loop", "pid": self.pid, "launches": n,
                     "warmup_kernels": 2000, "total_kernels": n + 2000, "seconds": v * n / 1e9,
                     "ns_per_launch": v}, n + 2000)
        steps = int(_arg(cmd, "--steps"))
        per_step = 10 if part == "eager" else 310
        warmup = 500 if part == "eager" else 20
        ms = v / 1e3 if part == "eager" else v
        return ({"workload": f"torch_{part}", "pid": self.pid, "steps": steps, "warmup": warmup, "settle": 5,
                 "seconds": ms * steps / 1e3, "ms_per_step": ms, "torch": "2.11.0+cu130 (synthetic)",
                 "torch_cuda": "13.0", "kernels_per_step": per_step,
                 "torch_profiler": config == "torchprof"}, (steps + warmup + 5) * per_step + 40)

    def stats(self, cupmon_bin, dump, log):
        with open(os.path.join(dump, ".synthetic.json")) as f:
            kernels = json.load(f)["kernels"]
        text = (f"dump:            {dump}\nCUPTI:           13.0 (9 chunks, 1.0 MB of activity buffers)\n"
                f"time span:       1.000 s from 1 (Unix ns)\ndropped records: 0\nrecords:         {kernels + 3}\n"
                f"  MEMCPY                            2\n  MEMSET                            1\n"
                f"  CONCURRENT_KERNEL      {kernels:>12}\nmemcpy bytes:    16\ndistinct kernels: 1\n"
                "dump writer: busy 0.05 s of 1.00 s; writing 0.04 s (on a CPU 0.03 s, waiting for a CPU "
                "0.00 s, blocked in the kernel 0.01 s); reading records 0.01 s; at most 1 buffers waiting\n")
        with open(log, "a") as f:
            f.write(text)
        return text
