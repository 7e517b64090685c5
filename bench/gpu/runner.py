"""Running one benchmark process: logs, timeout, peak RSS, RSS sampling, dump stats.

Peak RSS comes from wait4() on the process the driver started. Linux reports, for a
reaped child, the larger of its own peak RSS and that of the descendants it reaped, so
for `cupmon run -- CMD` it is the peak of the workload (cupmon's CLI process is far
smaller), and for a bare run it is the workload itself: the same quantity in every
configuration.
"""

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass

# Markers the driver looks for in a workload's stdout (see empty_kernel.cu, torch_common.py).
BENCH_PREFIX = "BENCH "
DUMP_FILES = ("cupti_monitor_raw_buffers.bin", "cupti_monitor_meta.bin")


@dataclass
class Proc:
    """What one process run produced."""

    cmd: list
    log: str                 # path prefix of the .out/.err logs
    rc: int = None
    timed_out: bool = False
    wall_s: float = 0.0
    maxrss_kb: int = 0
    bench: dict = None       # the workload's BENCH json line, if printed
    error: str = None        # why this run counts as failed (None: it did not)

    def stderr_tail(self, lines=15):
        return tail(self.log + ".err", lines)


def tail(path, lines=15):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"<cannot read {path}: {e}>"
    return "\n".join(text.splitlines()[-lines:])


def shell_line(cmd, env_extra=None):
    """The command as one copy-pasteable shell line (for logs and --dry-run)."""
    import shlex

    env = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in (env_extra or {}).items())
    return (env + " " if env else "") + " ".join(shlex.quote(str(c)) for c in cmd)


def parse_bench_line(path):
    """The last `BENCH {json}` line of a stdout log, or None."""
    found = None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(BENCH_PREFIX):
                    found = line[len(BENCH_PREFIX):]
    except OSError:
        return None
    if found is None:
        return None
    try:
        return json.loads(found)
    except ValueError:
        return None


def announced_pid(path):
    """The pid of a `BENCH_PID <pid>` line in a stdout log, or None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"BENCH_PID (\d+)", line)
                if m:
                    return int(m.group(1))
    except OSError:
        pass
    return None


def proc_status_kb(pid, key):
    """A `kB` field of /proc/<pid>/status (VmRSS, VmHWM), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_process(cmd, env_extra, log, timeout_s, drop_env=(), sampler=None, sample_every_s=1.0,
                cwd=None):
    """Run `cmd` with the environment plus `env_extra` (minus `drop_env`), stdout and
    stderr to `log`.out/.err; kill its whole process group past `timeout_s`.
    `sampler(pid, elapsed_s)` is called about every `sample_every_s` while it runs."""
    env = dict(os.environ)
    for k in drop_env:
        env.pop(k, None)
    env.update({k: str(v) for k, v in (env_extra or {}).items()})
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log + ".cmd", "w") as f:
        f.write(shell_line(cmd, env_extra) + "\n")
    res = Proc(cmd=[str(c) for c in cmd], log=log)
    t0 = time.monotonic()
    with open(log + ".out", "wb") as out, open(log + ".err", "wb") as err:
        try:
            p = subprocess.Popen(res.cmd, env=env, stdout=out, stderr=err, cwd=cwd,
                                 start_new_session=True)
        except OSError as e:
            res.rc, res.error = -1, f"cannot start: {e}"
            return res
        next_sample, killed_at = 0.0, None
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            elapsed = time.monotonic() - t0
            if sampler and elapsed >= next_sample:
                sampler(p.pid, elapsed)
                next_sample = elapsed + sample_every_s
            if elapsed > timeout_s and killed_at is None:
                res.timed_out, killed_at = True, elapsed
                _signal_group(p.pid, signal.SIGTERM)
            elif killed_at is not None and elapsed > killed_at + 10:
                _signal_group(p.pid, signal.SIGKILL)
            time.sleep(0.02)
    # Reaped by wait4 above; tell Popen so it does not try again.
    p.returncode = res.rc = os.waitstatus_to_exitcode(status)
    res.wall_s = time.monotonic() - t0
    res.maxrss_kb = ru.ru_maxrss
    res.bench = parse_bench_line(log + ".out")
    if res.timed_out:
        res.error = f"timed out after {timeout_s:.0f} s (killed)"
    elif res.rc != 0:
        res.error = f"exit code {res.rc}"
    elif res.bench is None:
        res.error = "no BENCH line on stdout"
    return res


def _signal_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def find_dumps(root):
    """Directories under `root` holding a cupmon raw dump (cupmon run writes DIR/<pid>/)."""
    found = []
    for d, _, files in os.walk(root):
        if any(f in files for f in DUMP_FILES):
            found.append(d)
    return sorted(found)


def find_windows(root):
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if re.fullmatch(r"window-\d+\.json", f)]
    return sorted(out)


def dump_bytes(dump_dir):
    """Bytes of the always-on dump: everything in the dump directory except windows and
    their exported traces."""
    total = 0
    for d, _, files in os.walk(dump_dir):
        for f in files:
            if not f.startswith("window-"):
                total += os.path.getsize(os.path.join(d, f))
    return total


def tree_bytes(root):
    total = 0
    for d, _, files in os.walk(root):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(d, f))
            except OSError:
                pass
    return total


def parse_stats(text):
    """The numbers the benchmark needs from `cupmon stats` output: dropped records
    (None when the dump does not record them) and records per kind."""
    out = {"dropped_records": None, "records_by_kind": {}, "writer": None}
    in_kinds = False
    for line in text.splitlines():
        if line.startswith("dump writer:"):
            out["writer"] = line[len("dump writer:"):].strip()
            continue
        m = re.match(r"\s*dropped records:\s*(\d+)", line)
        if m:
            out["dropped_records"] = int(m.group(1))
            continue
        if re.match(r"records:\s*\d+", line):
            in_kinds = True
            continue
        m = re.match(r"\s+([A-Z_]+)\s+(\d+)\s*$", line)
        if in_kinds and m:
            out["records_by_kind"][m.group(1)] = int(m.group(2))
        elif in_kinds and not line.startswith(" "):
            in_kinds = False
    return out


def disk_probe(folder, mb, dry=False):
    """Write `mb` MB in 4 MiB blocks to a file in `folder` the way the dump writer does
    (buffered writes, no fsync), then once more with an fsync at the end; report MB/s and
    what bounds the page cache (dirty-page limits, the filesystem)."""
    out = {"folder": folder, "mb": mb, "fs": None, "write_mb_s": None, "write_fsync_mb_s": None,
           "sysctl": {}}
    for key in ("dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes"):
        try:
            with open(f"/proc/sys/vm/{key}") as f:
                out["sysctl"][key] = int(f.read())
        except (OSError, ValueError):
            pass
    if dry:
        out.update(write_mb_s=1000.0, write_fsync_mb_s=500.0, fs="dry-run")
        return out
    if mb <= 0:
        return out
    os.makedirs(folder, exist_ok=True)
    out["fs"] = _fs_type(folder)
    block = b"\x5a" * (4 << 20)
    path = os.path.join(folder, "disk-probe.bin")
    try:
        for key, sync in (("write_mb_s", False), ("write_fsync_mb_s", True)):
            t0 = time.perf_counter()
            with open(path, "wb") as f:
                for _ in range(max(1, mb * 1_000_000 // len(block))):
                    f.write(block)
                f.flush()
                if sync:
                    os.fsync(f.fileno())
            out[key] = round(mb / (time.perf_counter() - t0), 1)
            os.remove(path)
    except OSError as e:
        out["error"] = str(e)
    finally:
        if os.path.exists(path):
            os.remove(path)
    return out


def _fs_type(folder):
    """The filesystem type of the mount holding `folder` (longest matching mount point)."""
    best, fs = "", None
    real = os.path.realpath(folder)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and (real == parts[1] or real.startswith(parts[1].rstrip("/") + "/")) \
                        and len(parts[1]) >= len(best):
                    best, fs = parts[1], f"{parts[2]} on {parts[1]} ({parts[0]})"
    except OSError:
        pass
    return fs
