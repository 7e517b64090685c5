#!/usr/bin/env python3
"""The flight recorder on real CUPTI: a dump is compressed segments and decodes to the
same kernels as PyTorch's raw layout (`--raw`) of the same workload; os._exit loses
nothing; a program under a one-hour flush period exits promptly; the last second of a
dump slices out.

usage: recorder_check.py CUPMON DUMP_DIR SCRATCH"""
import glob
import json
import os
import subprocess
import sys
import time

from checks import check, exit_code

cupmon, dump, scratch = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


def kernels_of(d):
    """Kernel records of a dump, from its decoded window."""
    out = d.rstrip("/") + ".window.json"
    r = run(cupmon, "decode", d, "-o", out)
    if r.returncode != 0:
        return None, r.stderr[-300:]
    events = json.load(open(out))["events"]
    return [e for e in events if e["kind"] == "kernel"], ""


def only_dump(parent):
    dirs = sorted(glob.glob(os.path.join(parent, "*/")))
    return dirs[0].rstrip("/") if dirs else None


segs = sorted(glob.glob(os.path.join(dump, "segments", "seg-*.cupmr")))
check("recorder: the dump is compressed segments (no raw file)",
      bool(segs) and not os.path.exists(os.path.join(dump, "cupti_monitor_raw_buffers.bin")),
      f"{len(segs)} segment files")
raw_parent = os.path.join(scratch, "k-raw")
r = run(cupmon, "run", "--raw", "-o", raw_parent, "--", os.path.join(scratch, "workload"), "20", "0.01")
raw_dump = only_dump(raw_parent)
seg_k, err1 = kernels_of(dump)
raw_k, err2 = kernels_of(raw_dump) if raw_dump else (None, r.stderr[-300:])
if seg_k is not None and raw_k is not None:
    key = lambda e: (e["name"], tuple(e["grid"]), tuple(e["block"]))
    same_names = sorted(map(key, seg_k)) == sorted(map(key, raw_k))
    check("recorder: segments and --raw hold the same kernels (names, grids, blocks)",
          len(seg_k) == len(raw_k) > 0 and same_names, f"{len(seg_k)} vs {len(raw_k)} kernels")
    seg_bytes = sum(os.path.getsize(s) for s in segs)
    raw_bytes = os.path.getsize(os.path.join(raw_dump, "cupti_monitor_raw_buffers.bin"))
    print(f"INFO recorder: {len(seg_k)} kernels: segments {seg_bytes} B "
          f"({seg_bytes / max(1, len(seg_k)):.1f} B/kernel incl. API-free always-on records), "
          f"raw {raw_bytes} B ({raw_bytes / max(1, len(raw_k)):.1f} B/kernel)")
else:
    check("recorder: both dumps decode", False, err1 + err2)

# os._exit after 27,000 launches: everything since the last flush used to be lost.
code = ("import torch, os\n"
        "x = torch.zeros(1024, device='cuda')\n"
        "torch.cuda.synchronize()\n"
        "for _ in range(27000): x.add_(1)\n"
        "torch.cuda.synchronize()\n"
        "os._exit(0)\n")
exit_parent = os.path.join(scratch, "k-exit")
r = run(cupmon, "run", "--flush-period", "10s", "-o", exit_parent, "--", "python3", "-c", code)
d = only_dump(exit_parent)
ks, err = kernels_of(d) if d else (None, r.stderr[-300:])
adds = [k for k in (ks or []) if "add" in k["name"].lower() or "Functor" in k["name"]]
check("recorder: os._exit after 27,000 launches keeps them all (flush period 10 s)",
      ks is not None and len(adds) >= 27000, f"{len(adds)} add kernels of {len(ks or [])}; {err}")

# A short program under a one-hour flush period ends promptly.
t0 = time.time()
r = run(cupmon, "run", "--flush-period", "1h", "-o", os.path.join(scratch, "k-prompt"), "--",
        os.path.join(scratch, "workload"), "1")
took = time.time() - t0
check("recorder: a short program under --flush-period 1h exits promptly", r.returncode == 0 and took < 15,
      f"{took:.1f} s, exit {r.returncode}")

# The last second of the dump, sliced.
help_text = run(cupmon, "decode", "--help").stdout
if "--last" not in help_text:
    print("SKIPPED: recorder: this cupmon has no decode --last (time slices)")
else:
    out = dump + ".last.json"
    r = run(cupmon, "decode", dump, "--last", "1s", "-o", out)
    if r.returncode == 0:
        ev = [e for e in json.load(open(out))["events"] if e["kind"] == "kernel"]
        last_end = max((e["end_ns"] for e in seg_k or []), default=0)
        in_last = [e for e in seg_k or [] if e["end_ns"] > last_end - 1_000_000_000]
        check("recorder: decode --last 1s gives exactly the kernels of the last second",
              len(ev) == len(in_last) > 0, f"{len(ev)} sliced, {len(in_last)} end in the last second, "
              f"of {len(seg_k or [])}; {r.stderr[-200:]}")
    else:
        check("recorder: decode --last 1s", False, r.stderr[-300:])
sys.exit(exit_code())
