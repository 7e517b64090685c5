#!/usr/bin/env python3
"""Judge one trial of tests/gpu/straggler.sh from `cupmon stragglers --json` and the
seconds after the start at which `cupmon status` first named a rank live.

usage: straggler_check.py MODE STRAGGLERS_JSON LIVE_FIRST_S LIVE_RANK [SLOW_RANK (1)]
  MODE slow: correct when SLOW_RANK is named (after the fact in every period that names
  anyone, with a spin kernel first; live within 120 s) and the other rank never is;
  MODE balanced: correct when nobody is named, after the fact or live.
Prints one line: `trial: ok ...` or `trial: wrong ...`."""
import json
import sys

mode, path, live_s, live_rank = sys.argv[1:5]
slow = f"rank {sys.argv[5] if len(sys.argv) > 5 else 1}"
a = json.load(open(path))
named = []
for p in a["periods"]:
    s = p.get("straggler")
    if s:
        k = s["kernels"][0]["kernel"]["name"] if s["kernels"] else "?"
        named.append((a["ranks"][s["rank"]]["label"], round(s["score"] * 100, 1), k))
scores = [[round(r["score"] * 100, 1) for r in p.get("scores", [])] for p in a["periods"]]
live_s = float(live_s) if live_s != "-" else None
if mode == "slow":
    after = bool(named) and all(n[0] == slow and "spin" in n[2] for n in named)
    live = live_rank == slow and live_s is not None and live_s <= 120
    ok = after and live
else:
    ok = not named and live_rank == "-"
print(f"trial: {'ok' if ok else 'wrong'} mode={mode} slow={slow if mode == 'slow' else '-'} "
      f"after-the-fact={named} live={live_rank} "
      f"at {live_s} s; scores per period (%): {scores}")
sys.exit(0 if ok else 1)
