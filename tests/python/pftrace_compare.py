#!/usr/bin/env python3
"""Compares a Perfetto protobuf trace (.pftrace, .pftrace.gz) with the Chrome
JSON trace of the same input, by meaning, as a viewer would see them: the
slices per thread (name, category, start and duration in ns, args), instants,
counter samples, flows (which slice each arrow leaves and enters), process and
thread names, and the top-level members. The .pftrace is read with the protos
of the ``perfetto`` PyPI package (``perfetto_trace_pb2``), not with cupmon's
own code; the JSON side follows Perfetto's JSON importer (``X`` slices on
their thread, counters named "NAME SERIES", flows bound to the enclosing
slice of their thread).

usage: pftrace_compare.py TRACE.json[.gz] TRACE.pftrace[.gz]
Prints the differences and the counts as JSON; exit status 1 when they differ.
"""

from __future__ import annotations

import collections
import gzip
import json
import math
import sys
from dataclasses import dataclass, field

from check_pftrace import packets, pb  # noqa: F401  (pb: perfetto_trace_pb2)

INT32_MIN = -(2**31)
# cupmon gives JSON pids and tids that fit no int32 ids from the bottom of the range.
SYNTHETIC_BELOW = INT32_MIN + (1 << 24)


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def round_half_away(v: float) -> int:
    """Rust's f64::round (ties away from zero); Python's round() ties to even."""
    if abs(v) >= 2.0**52:  # already an integer, and +0.5 would round
        return int(v)
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def canon(value: object) -> str:
    return json.dumps(value, sort_keys=True)


@dataclass
class View:
    """One trace as a viewer sees it; tracks are keyed by
    (pid or None, process name, tid or None, thread name)."""

    slices: collections.Counter = field(default_factory=collections.Counter)
    instants: collections.Counter = field(default_factory=collections.Counter)
    counters: collections.Counter = field(default_factory=collections.Counter)
    # Each end of an arrow: (slice (track, name, start ns), "out" or "in").
    flow_ends: collections.Counter = field(default_factory=collections.Counter)
    # Arrows with both ends on a slice.
    flows: int = 0
    metadata: dict = field(default_factory=dict)
    overlap_lane_slices: int = 0

    def counts(self) -> dict:
        return {
            "slices": sum(self.slices.values()),
            "instants": sum(self.instants.values()),
            "counter_values": sum(self.counters.values()),
            "flows": self.flows,
            "flow_ends": sum(self.flow_ends.values()),
            "threads": len({s[0] for s in self.slices}),
            "distinct_names": len({s[1] for s in self.slices}),
            "overlap_lane_slices": self.overlap_lane_slices,
        }


def fits_i32(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and INT32_MIN <= v < 2**31


# ---------------------------------------------------------------- JSON side


def json_view(path: str) -> View:
    trace = json.loads(read_bytes(path))
    base = int(trace.get("baseTimeNanoseconds", 0))
    events = [e for e in trace["traceEvents"] if isinstance(e, dict)]
    pnames: dict = {}
    tnames: dict = {}
    for e in events:
        if e.get("ph") == "M" and isinstance(e.get("args"), dict):
            name = e["args"].get("name")
            if e.get("name") == "process_name" and isinstance(name, str):
                pnames[e.get("pid", 0)] = name
            elif e.get("name") == "thread_name" and isinstance(name, str):
                tnames[(e.get("pid", 0), e.get("tid", 0))] = name

    def pkey(pid):
        default = "" if fits_i32(pid) else str(pid)
        return (pid if fits_i32(pid) else None, pnames.get(pid, default))

    def tkey(pid, tid):
        default = "" if fits_i32(tid) else str(tid)
        return pkey(pid) + (tid if fits_i32(tid) else None, tnames.get((pid, tid), default))

    def ns(us) -> int:
        return base + round_half_away(float(us) * 1000.0)

    v = View()
    v.metadata = {k: val for k, val in trace.items() if k != "traceEvents"}
    by_thread = collections.defaultdict(list)  # (pid, tid) -> [(start, end, file index, slice)]
    for i, e in enumerate(events):
        ph = e.get("ph")
        pid, tid = e.get("pid", 0), e.get("tid", 0)
        if ph == "X":
            start, dur = ns(e["ts"]), round_half_away(float(e["dur"]) * 1000.0)
            ident = (tkey(pid, tid), e.get("name", ""), start)
            v.slices[(tkey(pid, tid), e.get("name", ""), e.get("cat", ""), start, dur, canon(e.get("args", {})))] += 1
            by_thread[(pid, tid)].append((start, start + dur, i, ident))
        elif ph in ("i", "I", "R"):
            scope = e.get("s", "t")
            where = ("global",) if scope == "g" else pkey(pid) if scope == "p" else tkey(pid, tid)
            v.instants[(where, e.get("name", ""), e.get("cat", ""), ns(e["ts"]), canon(e.get("args", {})))] += 1
        elif ph == "C":
            prefix = e.get("name", "") + (f" id: {e['id']}" if "id" in e else "")
            for k, val in e.get("args", {}).items():
                v.counters[(pkey(pid), f"{prefix} {k}", ns(e["ts"]), float(val))] += 1
    # Flows as Perfetto binds them: events in time order (ties in file order),
    # a flow event goes to the innermost slice of its thread open at its time.
    outs, ins = set(), set()
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph not in ("s", "t", "f") or "id" not in e:
            continue
        spans = by_thread.get((e.get("pid", 0), e.get("tid", 0)), [])
        ts = ns(e["ts"])
        if ph == "f" and e.get("bp") != "e":
            later = [s for s in spans if s[0] >= ts]
            bound = min(later, key=lambda s: (s[0], s[2]))[3] if later else None
        else:
            inside = [s for s in spans if s[0] <= ts <= s[1] and (s[0], s[2]) < (ts, i)]
            bound = max(inside, key=lambda s: (s[0], -s[1], s[2]))[3] if inside else None
        if bound is None:
            continue
        v.flow_ends[(bound, "in" if ph == "f" else "out")] += 1
        (ins if ph == "f" else outs).add((e.get("cat"), e.get("name"), e["id"]))
    v.flows = len(outs & ins)
    return v


# ----------------------------------------------------------- Perfetto side


def annotation_value(d, names: dict, strings: dict) -> object:
    kind = d.WhichOneof("value")
    if kind == "string_value_iid":
        return strings[d.string_value_iid]
    if kind == "legacy_json_value":
        return json.loads(d.legacy_json_value)
    if kind is not None:
        return getattr(d, kind)
    if d.dict_entries:
        return dict(annotation(e, names, strings) for e in d.dict_entries)
    if d.array_values:
        return [annotation_value(e, names, strings) for e in d.array_values]
    raise ValueError("an annotation without a value")


def annotation(d, names: dict, strings: dict) -> tuple:
    name = names[d.name_iid] if d.HasField("name_iid") else d.name
    return name, annotation_value(d, names, strings)


def pftrace_view(path: str) -> View:
    data = read_bytes(path)
    tables = {"event_names": {}, "event_categories": {}, "debug_annotation_names": {}, "debug_annotation_string_values": {}}
    descriptors: dict = {}
    timeline = []
    metadata = {}
    for i, p in enumerate(packets(data)):
        if p.HasField("interned_data"):
            for table in tables:
                for e in getattr(p.interned_data, table):
                    text = e.str if table == "debug_annotation_string_values" else e.name
                    tables[table][e.iid] = text.decode() if isinstance(text, bytes) else text
        if p.HasField("track_descriptor"):
            descriptors[p.track_descriptor.uuid] = p.track_descriptor  # the last one counts
        if p.HasField("chrome_events"):
            for m in p.chrome_events.metadata:
                kind = m.WhichOneof("value")
                metadata[m.name] = json.loads(m.json_value) if kind == "json_value" else getattr(m, kind)
        if p.HasField("track_event"):
            e = p.track_event
            name = tables["event_names"][e.name_iid] if e.HasField("name_iid") else e.name
            cats = [tables["event_categories"][c] for c in e.category_iids] + list(e.categories)
            args = dict(
                annotation(a, tables["debug_annotation_names"], tables["debug_annotation_string_values"])
                for a in e.debug_annotations
            )
            timeline.append((p.timestamp, i, e, name, cats[0] if cats else "", args))

    pnames = {d.process.pid: d.process.process_name for d in descriptors.values() if d.HasField("process")}

    def num(x: int):
        return None if x < SYNTHETIC_BELOW else x

    def key(uuid: int) -> tuple:
        """A thread's key; an overlap lane the writer opened counts as its thread."""
        d = descriptors[uuid]
        if d.HasField("thread"):
            t = d.thread
            return (num(t.pid), pnames.get(t.pid, ""), num(t.tid), t.thread_name)
        if d.HasField("process"):
            return (num(d.process.pid), d.process.process_name)
        if d.parent_uuid and descriptors[d.parent_uuid].HasField("thread"):
            return key(d.parent_uuid)
        if d.parent_uuid:
            return key(d.parent_uuid)
        return ("global",)

    def is_lane(uuid: int) -> bool:
        d = descriptors[uuid]
        return bool(d.parent_uuid) and not d.HasField("counter") and descriptors[d.parent_uuid].HasField("thread")

    v = View()
    v.metadata = metadata
    timeline.sort(key=lambda x: (x[0], x[1]))
    stacks = collections.defaultdict(list)
    outs, ins = set(), set()
    for ts, _, e, name, cat, args in timeline:
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stacks[e.track_uuid].append((ts, e, name, cat, args))
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            start, b, bname, bcat, bargs = stacks[e.track_uuid].pop()
            k = key(b.track_uuid)
            v.slices[(k, bname, bcat, start, ts - start, canon(bargs))] += 1
            v.overlap_lane_slices += is_lane(b.track_uuid)
            ident = (k, bname, start)
            for f in b.flow_ids:
                outs.add(f)
                v.flow_ends[(ident, "out")] += 1
            for f in b.terminating_flow_ids:
                ins.add(f)
                v.flow_ends[(ident, "in")] += 1
        elif e.type == pb.TrackEvent.TYPE_INSTANT:
            v.instants[(key(e.track_uuid), name, cat, ts, canon(args))] += 1
        elif e.type == pb.TrackEvent.TYPE_COUNTER:
            d = descriptors[e.track_uuid]
            value = e.double_counter_value if e.HasField("double_counter_value") else float(e.counter_value)
            v.counters[(key(d.parent_uuid), d.name, ts, value)] += 1
    v.flows = len(outs & ins)
    return v


def differences(a: View, b: View, limit: int = 10, ignore_metadata: tuple = ()) -> list:
    """What differs between the JSON view `a` and the Perfetto view `b`
    (top-level members named in `ignore_metadata` aside: `traceName` is the
    output's path by default)."""
    out = []
    for what in ("slices", "instants", "counters", "flow_ends"):
        x, y = getattr(a, what), getattr(b, what)
        only_json, only_pf = list((x - y).elements()), list((y - x).elements())
        if only_json or only_pf:
            out.append(
                {
                    what: f"{len(only_json)} only in the JSON, {len(only_pf)} only in the .pftrace",
                    "only_json": [repr(s) for s in only_json[:limit]],
                    "only_pftrace": [repr(s) for s in only_pf[:limit]],
                }
            )
    if a.flows != b.flows:
        out.append({"flows": [a.flows, b.flows]})
    for k in sorted((set(a.metadata) | set(b.metadata)) - set(ignore_metadata)):
        if canon(a.metadata.get(k)) != canon(b.metadata.get(k)):
            out.append({"metadata": k, "json": a.metadata.get(k), "pftrace": b.metadata.get(k)})
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = json_view(sys.argv[1]), pftrace_view(sys.argv[2])
    diffs = differences(a, b)
    json.dump({"json": a.counts(), "pftrace": b.counts(), "differences": diffs}, sys.stdout, indent=1)
    print()
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
