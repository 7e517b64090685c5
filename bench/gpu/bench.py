#!/usr/bin/env python3
"""cupmon overhead and throughput benchmark driver (issue 7). See README.md.

    bench.py run [--parts quick|memory|all|launch,eager,train,burst,memory] [--dry-run]
    bench.py report OUT1/results.json [OUT2/results.json ...] [-o RESULTS.md]

`run` is what bench/gpu/run.sh calls after building the CUDA workload and the minimal
consumer. It runs every configuration of a workload interleaved, writes logs under
$OUT/logs, and rewrites $OUT/results.json (raw numbers) and $OUT/RESULTS.md after every
part, so a run cut short by the device's time limit still leaves what it measured.
`report` merges the results of several commands into one RESULTS.md.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time

import report
from runner import (announced_pid, disk_probe, dump_bytes, find_dumps, find_windows, parse_stats,
                    proc_status_kb, run_process, shell_line, tree_bytes)
from synthetic import DryExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
PART_GROUPS = {
    "quick": ["launch", "burst", "eager", "train"],
    "memory": ["memory"],
    "all": ["launch", "burst", "eager", "train", "memory"],
}
# Rough seconds per part on the H200 (torch start-up dominates b and c); used to keep
# room for the remaining parts when trimming repetitions to the time budget.
PART_ESTIMATE_S = {"launch": 60, "burst": 50, "eager": 105, "train": 135, "memory": 80}
# Environment a bare run must not inherit, or it would not be bare.
INJECTION_ENV = ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "CUPMON_OUTPUT_DIR", "MINCON_INFO")


def env_int(name, default):
    return int(os.environ.get(name, default))


def env_float(name, default):
    return float(os.environ.get(name, default))


class Budget:
    def __init__(self, seconds):
        self.t0 = time.monotonic()
        self.seconds = seconds

    def elapsed(self):
        return time.monotonic() - self.t0

    def left(self):
        return self.seconds - self.elapsed()


class Executor:
    """Runs processes and `cupmon stats` for real (DryExecutor fakes both)."""

    dry = False

    def run(self, cmd, env_extra, log, timeout_s, tag, drop_env=(), sampler=None):
        return run_process(cmd, env_extra, log, timeout_s, drop_env=drop_env, sampler=sampler)

    def stats(self, cupmon_bin, dump, log):
        p = subprocess.run([cupmon_bin, "stats", dump], capture_output=True, text=True, timeout=300)
        with open(log, "a") as f:
            f.write(f"$ {cupmon_bin} stats {dump}\n{p.stdout}{p.stderr}\n")
        if p.returncode != 0:
            raise RuntimeError(f"cupmon stats {dump} exited {p.returncode}: {p.stderr.strip()[-500:]}")
        return p.stdout


class Suite:
    def __init__(self, args, executor):
        self.a = args
        self.x = executor
        self.budget = Budget(args.budget)
        self.out = os.path.abspath(args.out)
        self.scratch = os.path.abspath(args.scratch)
        self.shm_scratch = os.path.abspath(args.shm_scratch)
        self.empty_kernel = os.path.join(args.build, "empty_kernel")
        self.floor_so = os.path.join(args.build, "libminimal_consumer.so")
        self.cupmon = os.path.abspath(args.cupmon_bin)
        self.inject = os.path.abspath(args.cupmon_inject)
        self.python = args.python
        self.cupmon_ok = executor.dry or (os.access(self.cupmon, os.X_OK))
        self.results = {"meta": {}, "workloads": {}, "failures": [], "notes": []}
        self.noted_no_dropped = False

    # ------------------------------------------------------------ plumbing

    def log(self, msg):
        print(f"[{self.budget.elapsed():6.1f}s] {msg}", flush=True)

    def note(self, msg):
        self.log("NOTE: " + msg)
        self.results["notes"].append(msg)

    def fail(self, part, config, rep, proc=None, error=None, cmd=None):
        f = {"part": part, "config": config, "rep": rep,
             "error": error or (proc.error if proc else "?"),
             "cmd": cmd or (shell_line(proc.cmd) if proc else ""),
             "rc": proc.rc if proc else None,
             "log": proc.log if proc else "",
             "stderr_tail": proc.stderr_tail() if proc else ""}
        self.results["failures"].append(f)
        self.log(f"FAILED {part} / {config} rep {rep}: {f['error']}" + (f" (log {f['log']}.*)" if f["log"] else ""))
        for line in f["stderr_tail"].splitlines():
            print("    | " + line, flush=True)

    def save(self):
        os.makedirs(self.out, exist_ok=True)
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump(self.results, f, indent=1)
        with open(os.path.join(self.out, "RESULTS.md"), "w") as f:
            f.write(report.render_markdown(self.results))

    def wrap(self, config, cmd, dump_root, info_path):
        """(command, extra env, env to drop) of `cmd` run in `config`."""
        if config == "bare":
            return cmd, {}, INJECTION_ENV
        if config == "floor":
            return cmd, {"CUDA_INJECTION64_PATH": self.floor_so, "MINCON_INFO": info_path}, INJECTION_ENV
        if config == "torchprof":
            return cmd + ["--torch-profiler"], {}, INJECTION_ENV
        # cupmon configurations. CUPMON_INJECT is passed along in case `cupmon run` looks
        # for the injection library there rather than next to its binary.
        env = {"CUPMON_INJECT": self.inject}
        if config.startswith("cupmon_env:"):  # a burst variant: one setting changed
            var, value = config.split(":", 1)[1].split("=", 1)
            env[var] = value
        if config == "cupmon" and self.a.cupmon_via == "env":
            env.update({"CUDA_INJECTION64_PATH": self.inject, "LD_PRELOAD": self.inject,
                        "CUPMON_OUTPUT_DIR": dump_root})
            return cmd, env, ()
        # The window stays open for the whole run (at most 1d, what --window-for allows).
        window = ["--window-at", "0s", "--window-for", "1d"] if config == "window" else []
        return [self.cupmon, "run", "-o", dump_root] + window + ["--"] + cmd, env, INJECTION_ENV

    def run_config(self, part, config, rep, cmd, timeout_s, sampler=None):
        """Run `cmd` in `config`; returns (proc, per-run numbers). Collects and then deletes
        the cupmon dump (dumps live in the scratch folder, never under $OUT)."""
        name = f"{config}-r{rep}".replace(":", "-").replace("=", "-")
        log = os.path.join(self.out, "logs", part, name)
        scratch = self.shm_scratch if config == "cupmon_tmpfs" else self.scratch
        dump_root = os.path.join(scratch, part, name)
        info_path = os.path.join(self.scratch, part, name + ".mincon.json")
        shutil.rmtree(dump_root, ignore_errors=True)
        os.makedirs(os.path.dirname(dump_root), exist_ok=True)
        if os.path.exists(info_path):  # a stale one would hide a consumer that never loaded
            os.remove(info_path)
        full_cmd, env, drop = self.wrap(config, cmd, dump_root, info_path)
        if self.a.dry_run:
            print("    $ " + shell_line(full_cmd, env), flush=True)
        proc = self.x.run(full_cmd, env, log, timeout_s, {"part": part, "config": config, "rep": rep},
                          drop_env=drop, sampler=sampler)
        r = {"rep": rep, "ok": proc.error is None, "rc": proc.rc, "wall_s": round(proc.wall_s, 3),
             "maxrss_kb": proc.maxrss_kb, "bench": proc.bench}
        if config == "floor":
            self._collect_floor(r, info_path, part)
        if report.records_with_cupmon(config):
            self._collect_dump(r, proc, dump_root, log)
        if not self.a.keep_dumps:
            shutil.rmtree(dump_root, ignore_errors=True)
        if proc.error is None and r.get("error"):
            proc.error = r["error"]
            r["ok"] = False
        if proc.error:
            r["error"] = proc.error
            self.fail(part, config, rep, proc)
        return proc, r

    def _collect_floor(self, r, info_path, part):
        try:
            with open(info_path) as f:
                info = json.load(f)
        except (OSError, ValueError) as e:
            r["error"] = f"minimal consumer wrote no info ({e}): was it loaded?"
            return
        r["dropped"] = info.get("dropped_records")
        r["floor_info"] = info
        # torch brings its own libcupti, which the consumer then shares (same soname):
        # record which one each workload measured.
        self.results["meta"].setdefault("libcupti_by_part", {})[part] = info.get("libcupti")
        if info.get("failures"):
            r["error"] = f"minimal consumer: {info['failures']} CUPTI call(s) failed (see stderr)"
        if not self.results["meta"].get("cupti_info"):
            self.results["meta"]["cupti_info"] = info
            v = info.get("cupti_api_version", 0)
            self.results["meta"]["cupti"] = (f"{v // 10000}.{v // 100 % 100} (API version {v}), "
                                             f"{info.get('libcupti')}")

    def _collect_dump(self, r, proc, dump_root, log):
        dumps = find_dumps(dump_root)
        windows = find_windows(dump_root)
        r["window_bytes"] = sum(os.path.getsize(w) for w in windows) if windows else None
        r["dump_dirs"] = len(dumps)
        if not dumps:
            if proc.error is None:
                r["error"] = f"no cupmon dump under {dump_root} ({tree_bytes(dump_root)} bytes there)"
            return
        kernels, dropped, total, writers = 0, 0, 0, []
        try:
            for d in dumps:
                s = parse_stats(self.x.stats(self.cupmon, d, log + ".stats"))
                kernels += s["records_by_kind"].get("CONCURRENT_KERNEL", 0)
                dropped = None if dropped is None or s["dropped_records"] is None else dropped + s["dropped_records"]
                total += dump_bytes(d)
                writers += [s["writer"]] if s.get("writer") else []
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            r["error"] = str(e)
            return
        r.update(kernels_recorded=kernels, dropped=dropped, dump_bytes=total, writer="; ".join(writers) or None)
        if dropped is None and not self.noted_no_dropped:
            self.noted_no_dropped = True
            self.note(f"{log}: the dump does not record dropped records (`cupmon stats` says so)")
        if proc.error is None and r.get("window_bytes") is None and "--window-at" in proc.cmd:
            r["error"] = f"no window-N.json written under {dump_root}"

    def built(self, part, path, what):
        """Whether a build output exists; a missing one is one reported failure, not one
        per run."""
        if self.x.dry or os.path.exists(path):
            return True
        self.fail(part, what, "-", error=f"{path} missing: the build failed "
                  f"(see {self.out}/logs/build-{what}.log)")
        return False

    def trim_reps(self, part, rep, reps, rep_s, later_parts):
        """Whether to stop `part` after `rep` repetitions to leave time for later parts."""
        reserve = sum(0.5 * PART_ESTIMATE_S[p] for p in later_parts)
        if rep < reps and self.budget.left() - reserve < rep_s * 1.1:
            self.note(f"{part}: stopped after {rep} of {reps} repetitions to stay within the "
                      f"{self.a.budget:.0f} s budget")
            return True
        return False

    # ------------------------------------------------------------ parts

    def workload_spec(self, part):
        a = self.a
        if part == "launch":
            return dict(cmd=[self.empty_kernel, "--launches", str(a.launches)], unit="ns/launch",
                        unit_ns=1, kernels_per_unit=1, reps=a.reps_launch,
                        configs=["bare", "floor", "cupmon", "window"],
                        value=lambda b: b["ns_per_launch"],
                        launched=lambda b: b["total_kernels"])
        script = os.path.join(HERE, f"torch_{part}.py")
        steps = a.eager_steps if part == "eager" else a.train_steps
        cmd = [self.python, script, "--steps", str(steps)]
        if part == "eager":
            return dict(cmd=cmd, unit="us/step", unit_ns=1e3, kernels_per_unit=10, reps=a.reps_torch,
                        configs=["bare", "floor", "cupmon", "window", "torchprof"],
                        value=lambda b: b["ms_per_step"] * 1e3,
                        launched=lambda b: (b["warmup"] + b["settle"] + b["steps"]) * b["kernels_per_step"])
        return dict(cmd=cmd, unit="ms/step", unit_ns=1e6, kernels_per_unit=None, reps=a.reps_torch,
                    configs=["bare", "floor", "cupmon", "window", "torchprof"],
                    value=lambda b: b["ms_per_step"], launched=lambda b: None)

    def part_overhead(self, part, later_parts):
        spec = self.workload_spec(part)
        if part == "launch" and not self.built(part, self.empty_kernel, "empty_kernel"):
            return
        configs = [c for c in spec["configs"] if self.cupmon_ok or c not in ("cupmon", "window")]
        if self.a.configs:  # a subset, e.g. more repetitions of one comparison; bare stays
            keep = {"bare"} | set(self.a.configs.split(","))
            configs = [c for c in configs if c in keep]
        if len(configs) < len(spec["configs"]):
            self.note(f"{part}: cupmon configurations skipped: {self.cupmon} is not an executable")
        if "floor" in configs and not self.built(part, self.floor_so, "minimal_consumer"):
            configs.remove("floor")
        w = {"unit": spec["unit"], "unit_ns": spec["unit_ns"], "kernels_per_unit": spec["kernels_per_unit"],
             "order": configs, "cmd": shell_line(spec["cmd"]), "configs": {c: [] for c in configs}}
        self.results["workloads"][part] = w
        timeout = 180 if part == "launch" else 240
        for rep in range(1, spec["reps"] + 1):
            t_rep = time.monotonic()
            # Rotate the starting configuration so no configuration always runs first.
            k = (rep - 1) % len(configs)
            for config in configs[k:] + configs[:k]:
                proc, r = self.run_config(part, config, rep, spec["cmd"], timeout)
                if proc.bench:
                    r["value"] = spec["value"](proc.bench)
                    r["kernels_launched"] = spec["launched"](proc.bench)
                    self.results["meta"].setdefault("torch", None)
                    if "torch" in proc.bench and not self.results["meta"]["torch"]:
                        self.results["meta"]["torch"] = f"{proc.bench['torch']} (CUDA {proc.bench['torch_cuda']})"
                elif r["ok"]:
                    r["ok"], r["error"] = False, "no result"
                w["configs"][config].append(r)
                self.log(f"{part} rep {rep}/{spec['reps']} {config:<9} " + self.describe(r, spec["unit"]))
                self.check_counts(part, config, r)
            self.save()
            if self.trim_reps(part, rep, spec["reps"], time.monotonic() - t_rep, later_parts):
                break
        if part == "train":
            # Kernels per step, for the per-kernel added cost: from what cupmon recorded.
            per_step = [r["kernels_recorded"] / (r["bench"]["warmup"] + r["bench"]["settle"] + r["bench"]["steps"])
                        for r in w["configs"].get("cupmon", []) if r.get("ok") and r.get("kernels_recorded")]
            if per_step:
                w["kernels_per_unit"] = sorted(per_step)[len(per_step) // 2]
                self.note(f"train: ~{w['kernels_per_unit']:.0f} kernels per step (cupmon's count over all "
                          f"steps, start-up kernels included)")

    def describe(self, r, unit):
        if not r["ok"]:
            return f"FAILED ({r.get('error') or 'see above'})"
        s = f"{r['value']:.4g} {unit}, peak RSS {r['maxrss_kb'] / 1024:.0f} MiB, wall {r['wall_s']:.1f} s"
        if r.get("kernels_recorded") is not None:
            s += f", kernels recorded {r['kernels_recorded']}, dropped {r.get('dropped')}"
        elif r.get("dropped") is not None:
            s += f", dropped {r['dropped']}"
        return s

    def check_counts(self, part, config, r):
        """Every launched kernel must be in the dump. The launch workload knows its exact
        count; the torch ones know a lower bound (set-up kernels come on top)."""
        want, got = r.get("kernels_launched"), r.get("kernels_recorded")
        if not (r["ok"] and want and got is not None):
            return
        if got < want or (part == "launch" and got != want):
            self.note(f"{part} / {config} rep {r['rep']}: {got} kernels recorded, {want} launched")

    def part_burst(self):
        """Find a launch mode that reaches the target rate under the floor (so the rate is
        what CUPTI itself allows), then run it for BURST_SECONDS under the floor and under
        cupmon always-on with default settings."""
        a, part = self.a, "burst"
        b = self.results["burst"] = {"calibration": [], "seconds": a.burst_seconds}
        if not self.built(part, self.empty_kernel, "empty_kernel"):
            b["note"] = "burst: not run, empty_kernel was not built"
            return
        # Calibrate under the floor; bare if the floor was not built.
        ref = "floor" if self.built(part, self.floor_so, "minimal_consumer") else "bare"
        if a.burst_mode:
            t, g = (int(v) for v in a.burst_mode.split(":"))
            b["chosen"], b["chosen_why"] = {"threads": t, "graph": g}, "BURST_MODE"
        else:
            best = None
            for i, mode in enumerate(a.burst_modes.split(",")):
                t, g = (int(v) for v in mode.split(":"))
                cmd = [self.empty_kernel, "--burst", str(a.burst_calibrate_s), "--threads", str(t), "--graph", str(g)]
                proc, r = self.run_config(part, ref, f"cal{i}", cmd, a.burst_calibrate_s + 60)
                c = {"config": ref, "threads": t, "graph": g, "ok": r["ok"], "error": proc.error,
                     "rate": proc.bench["rate"] if proc.bench else 0}
                b["calibration"].append(c)
                self.log(f"burst calibration threads={t} graph={g}: "
                         + (f"{c['rate'] / 1e6:.2f}M kernels/s" if c["ok"] else "FAILED"))
                if c["ok"] and (best is None or c["rate"] > best["rate"]):
                    best = c
                if c["ok"] and c["rate"] >= a.burst_target:
                    break
            if best is None:
                b["note"] = "burst: every calibration run failed"
                self.save()
                return
            b["chosen"] = {"threads": best["threads"], "graph": best["graph"]}
            b["chosen_why"] = (f"first mode at >= {a.burst_target / 1e6:.2f}M/s under {report.CONFIG_LABELS[ref]}"
                               if best["rate"] >= a.burst_target else "fastest mode; none reached the target")
        t, g = b["chosen"]["threads"], b["chosen"]["graph"]
        cmd = [self.empty_kernel, "--burst", str(a.burst_seconds), "--threads", str(t), "--graph", str(g)]
        # How fast the scratch disk takes a dump-sized stream of writes: a dump writer
        # that falls behind on a disk slower than the record rate needs is the disk's limit.
        b["disk"] = disk_probe(self.scratch, a.disk_probe_mb, dry=self.x.dry)
        self.log("burst disk probe: " + report.disk_line(b["disk"]))
        configs = [ref]
        if self.cupmon_ok:
            configs.append("cupmon")
            # The same run with the dump in memory (tmpfs) separates cupmon's own limit
            # from the disk's.
            shm = os.path.dirname(self.shm_scratch)
            shm_free = shutil.disk_usage(shm).free if os.path.isdir(shm) else 0
            if a.burst_tmpfs and shm_free >= a.shm_min_gb * 1e9:
                configs.append("cupmon_tmpfs")
            elif a.burst_tmpfs:
                b["tmpfs_note"] = (f"no tmpfs run: {shm} has {shm_free / 1e9:.1f} GB free, "
                                   f"{a.shm_min_gb} GB wanted")
            configs += [f"cupmon_env:{v}" for v in a.burst_variants.split(",") if "=" in v]
        else:
            b["note"] = f"burst under cupmon skipped: {self.cupmon} is not an executable"
        for config in configs:
            proc, r = self.run_config(part, config, 1, cmd, a.burst_seconds + 120)
            if proc.bench:
                r.update(rate=proc.bench["rate"], seconds=proc.bench["seconds"],
                         kernels_launched=proc.bench["total_kernels"])
            b[config] = r
            recorded = f"recorded {r.get('kernels_recorded')}, " if report.records_with_cupmon(config) else ""
            self.log(f"burst {config}: " + (f"{r['rate'] / 1e6:.3f}M kernels/s, launched {r['kernels_launched']}, "
                                            f"{recorded}dropped {r.get('dropped')}" if r["ok"] else "FAILED"))
        self.save()

    def part_memory(self):
        """Always-on run of MEMORY_SECONDS at a moderate rate; VmRSS of the monitored
        process (the empty_kernel child of `cupmon run`) sampled every second."""
        a, part = self.a, "memory"
        m = self.results["memory"] = {"seconds": a.memory_seconds, "rate": a.memory_rate, "samples": []}
        if not self.built(part, self.empty_kernel, "empty_kernel"):
            m["note"] = "not run: empty_kernel was not built"
            return
        if not self.cupmon_ok:
            m["note"] = f"skipped: {self.cupmon} is not an executable"
            self.save()
            return
        sampler = RssSampler(m, os.path.join(self.out, "logs", part, "cupmon-r1.out"))
        cmd = [self.empty_kernel, "--burst", str(a.memory_seconds), "--rate", str(a.memory_rate)]
        proc, r = self.run_config(part, "cupmon", 1, cmd, a.memory_seconds + 120, sampler=sampler)
        m.update(pid=sampler.pid, maxrss_kb=r["maxrss_kb"], kernels_recorded=r.get("kernels_recorded"),
                 dropped=r.get("dropped"), dump_bytes=r.get("dump_bytes"), error=proc.error,
                 kernels_launched=proc.bench["total_kernels"] if proc.bench else None)
        if proc.bench:
            m["achieved_rate"] = proc.bench["rate"]
        if not m["samples"]:
            m["note"] = "no VmRSS samples: the workload never printed BENCH_PID (see the log)"
        self.log("memory: " + "; ".join(report.memory_lines(m)))
        self.save()

    # ------------------------------------------------------------ meta

    def collect_meta(self, parts):
        meta = self.results["meta"]
        meta.update(
            date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            host=platform.node(), cpus=os.cpu_count(), parts=parts, dry_run=self.a.dry_run,
            out=self.out, budget_s=self.a.budget, command=self.a.command,
            reps=f"launch {self.a.reps_launch}, torch {self.a.reps_torch}",
            cupmon_bin=self.cupmon, cupmon_inject=self.inject, cupmon_via=self.a.cupmon_via,
            settings={k: v for k, v in vars(self.a).items() if k not in ("func",)},
        )
        meta["gpu"], meta["driver"] = "unknown", "unknown"
        smi = self.capture(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
        if smi:
            first = smi.splitlines()[0].split(",")
            meta["gpu"], meta["driver"] = first[0].strip(), first[-1].strip()
        nvcc = self.capture([os.path.join(self.a.cuda, "bin", "nvcc"), "--version"])
        meta["cuda"] = next((l.strip() for l in (nvcc or "").splitlines() if "release" in l), "unknown")
        meta["cupmon_version"] = (self.capture([self.cupmon, "--version"]) or "unavailable").strip()
        meta.setdefault("cupti", "unknown (no minimal-consumer run)")
        if self.a.dry_run:
            meta.update(gpu="(dry run)", driver="(dry run)")

    def capture(self, cmd):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return p.stdout if p.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            return None


class RssSampler:
    """Samples VmRSS of the monitored process, which announces its pid with a
    `BENCH_PID <pid>` line once its CUDA context exists (so the first sample already
    includes the context, and no guessing in the process tree under `cupmon run`)."""

    def __init__(self, memory, stdout_log):
        self.m, self.stdout_log, self.pid, self.t0 = memory, stdout_log, None, None

    def __call__(self, root_pid, elapsed):
        if self.pid is None:
            self.pid = announced_pid(self.stdout_log)
            self.t0 = elapsed
        if self.pid is not None:
            kb = proc_status_kb(self.pid, "VmRSS")
            if kb is not None:
                self.record(elapsed - self.t0, kb)

    def record(self, t, kb):
        self.m["samples"].append([round(t, 2), kb])


def cmd_run(a):
    parts = []
    for p in a.parts.split(","):
        parts += PART_GROUPS.get(p, [p])
    unknown = [p for p in parts if p not in PART_ESTIMATE_S]
    if unknown:
        sys.exit(f"unknown part(s) {unknown}; choose from {list(PART_ESTIMATE_S)} or {list(PART_GROUPS)}")
    suite = Suite(a, DryExecutor() if a.dry_run else Executor())
    suite.collect_meta(parts)
    suite.log(f"parts {parts}; budget {a.budget:.0f} s; out {suite.out}; scratch {suite.scratch}")
    if not suite.cupmon_ok:
        suite.note(f"cupmon binary {suite.cupmon} not found or not executable: cupmon configurations skipped")
    for i, part in enumerate(parts):
        later = parts[i + 1:]
        if suite.budget.left() < 0.5 * PART_ESTIMATE_S[part]:
            suite.note(f"{part}: not run, {suite.budget.left():.0f} s of the budget left")
            continue
        suite.log(f"=== {part}")
        try:
            if part == "burst":
                suite.part_burst()
            elif part == "memory":
                suite.part_memory()
            else:
                suite.part_overhead(part, later)
        except Exception as e:  # a broken part must not take the others down
            import traceback

            suite.fail(part, "-", "-", error=f"driver error: {e!r}")
            traceback.print_exc()
        suite.save()
    print()
    print(report.render_text(suite.results), flush=True)
    print(f"\nwrote {suite.out}/RESULTS.md and {suite.out}/results.json", flush=True)
    return 1 if suite.results["failures"] else 0


def cmd_report(a):
    rs = []
    for path in a.results:
        with open(path) as f:
            rs.append(json.load(f))
    merged = report.merge(rs)
    print(report.render_text(merged))
    if a.output:
        with open(a.output, "w") as f:
            f.write(report.render_markdown(merged))
        print(f"wrote {a.output}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run benchmark parts")
    e = os.environ.get
    r.add_argument("--parts", default=e("BENCH_PARTS", "quick"),
                   help="comma list of launch,burst,eager,train,memory or a group: quick, memory, all")
    r.add_argument("--out", default=e("OUT") or os.path.join(HERE, "..", "out", "gpu"))
    r.add_argument("--scratch", default=e("BENCH_SCRATCH", "/tmp/cupmon-bench-scratch"),
                   help="where dumps go (deleted after measuring; never under --out)")
    r.add_argument("--build", default=e("BENCH_BUILD", os.path.join(HERE, "..", "out", "gpu-build")))
    r.add_argument("--cuda", default=e("CUDA_HOME", "/usr/local/cuda"))
    r.add_argument("--cupmon-bin", default=e("CUPMON_BIN", ".gpu/cupmon"))
    r.add_argument("--cupmon-inject", default=e("CUPMON_INJECT", ".gpu/libcupmon_inject.so"))
    r.add_argument("--cupmon-via", choices=["run", "env"], default=e("BENCH_CUPMON_VIA", "run"),
                   help="always-on through `cupmon run` or by setting the injection environment")
    r.add_argument("--python", default=e("BENCH_PYTHON", sys.executable))
    r.add_argument("--budget", type=float, default=env_float("BENCH_BUDGET_S", 450),
                   help="seconds; repetitions are trimmed and parts skipped to stay within it")
    r.add_argument("--reps-launch", type=int, default=env_int("BENCH_REPS_LAUNCH", 5))
    r.add_argument("--reps-torch", type=int, default=env_int("BENCH_REPS_TORCH", 3))
    r.add_argument("--launches", type=int, default=env_int("BENCH_LAUNCHES", 200000))
    r.add_argument("--eager-steps", type=int, default=env_int("BENCH_EAGER_STEPS", 8000))
    r.add_argument("--train-steps", type=int, default=env_int("BENCH_TRAIN_STEPS", 300))
    r.add_argument("--burst-seconds", type=float, default=env_float("BURST_SECONDS", 10))
    r.add_argument("--burst-target", type=float, default=env_float("BURST_TARGET", 1.2e6),
                   help="calibration stops at the first mode reaching this rate under the floor")
    r.add_argument("--burst-calibrate-s", type=float, default=env_float("BURST_CALIBRATE_S", 2))
    r.add_argument("--burst-modes", default=e("BURST_MODES", "1:0,4:0,1:256,4:256,8:512"),
                   help="threads:graph_nodes candidates, tried in order")
    r.add_argument("--burst-mode", default=e("BURST_MODE"), help="threads:graph_nodes; skips calibration")
    r.add_argument("--disk-probe-mb", type=int, default=env_int("DISK_PROBE_MB", 2048),
                   help="MB written in 4 MiB blocks to the scratch folder before the burst (0: no probe)")
    r.add_argument("--shm-scratch", default=e("BENCH_SHM_SCRATCH", "/dev/shm/cupmon-bench-scratch"),
                   help="tmpfs folder for the burst run with the dump in memory")
    r.add_argument("--burst-variants", default=e("BURST_VARIANTS", ""),
                   help="extra burst runs under cupmon, each with one setting: VAR=VALUE,...")
    r.add_argument("--burst-tmpfs", type=int, default=env_int("BURST_TMPFS", 1),
                   help="1: also run the burst with the dump on tmpfs (separates the disk's limit)")
    r.add_argument("--configs", default=e("BENCH_CONFIGS", ""),
                   help="only these configurations of launch/eager/train (bare always runs): "
                        "floor,cupmon,window,torchprof")
    r.add_argument("--shm-min-gb", type=float, default=env_float("BENCH_SHM_MIN_GB", 4))
    r.add_argument("--memory-seconds", type=float, default=env_float("MEMORY_SECONDS", 60))
    r.add_argument("--memory-rate", type=float, default=env_float("MEMORY_RATE", 200000))
    r.add_argument("--keep-dumps", action="store_true", default=bool(e("BENCH_KEEP_DUMPS")))
    r.add_argument("--dry-run", action="store_true", default=bool(e("BENCH_DRY_RUN")),
                   help="print the commands and feed synthetic numbers through the whole pipeline")
    r.add_argument("--command", default=e("BENCH_COMMAND", " ".join(sys.argv)),
                   help="the command line recorded in RESULTS.md")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="merge results.json files into one table and RESULTS.md")
    p.add_argument("results", nargs="+")
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_report)
    a = ap.parse_args()
    sys.exit(a.func(a))


if __name__ == "__main__":
    main()
