#!/usr/bin/env python3
"""Reads a Perfetto protobuf trace (.pftrace, or gzipped) with the protos of
the ``perfetto`` PyPI package (``perfetto_trace_pb2``; no trace processor,
which would need a download) and prints, as JSON, what a viewer would see:
the clock, tracks, event counts, names, interning, flows, and the slices per
track paired the way trace processor pairs them (sorted by timestamp, ties
in file order, an END closes its track's innermost open slice).

usage: check_pftrace.py TRACE [--names N]

Exit status: 0 when the trace reads cleanly, 1 when it breaks a rule
(listed under "errors"), 2 when it cannot be read at all.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
from typing import Iterator

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as err:  # pragma: no cover - the caller decides to skip
    print(f"check_pftrace: needs the perfetto and protobuf packages: {err}", file=sys.stderr)
    sys.exit(3)

SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
BEGIN, END, INSTANT, COUNTER = (
    pb.TrackEvent.TYPE_SLICE_BEGIN,
    pb.TrackEvent.TYPE_SLICE_END,
    pb.TrackEvent.TYPE_INSTANT,
    pb.TrackEvent.TYPE_COUNTER,
)
INTERNED_TABLES = {
    "event_names": "name",
    "event_categories": "name",
    "debug_annotation_names": "name",
    "debug_annotation_string_values": "str",
}


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError(f"byte {pos}: truncated varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def packets(data: bytes) -> Iterator[pb.TracePacket]:
    """The packets of a `Trace`, one at a time (a whole-trace parse of a big
    file would hold every packet at once)."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = read_varint(data, pos)
        if key != (1 << 3) | 2:
            raise ValueError(f"byte {start}: field key {key}, expected Trace.packet (10)")
        length, pos = read_varint(data, pos)
        if pos + length > len(data):
            raise ValueError(f"byte {start}: packet of {length} bytes runs past the end")
        p = pb.TracePacket()
        p.ParseFromString(data[pos : pos + length])
        pos += length
        yield p


def annotation_value(d, strings: dict) -> object:
    kind = d.WhichOneof("value")
    if kind == "string_value_iid":
        return strings[d.string_value_iid]
    if kind is not None:
        return getattr(d, kind)
    if d.dict_entries:
        return {k: v for k, v in (annotation(e, {}, strings) for e in d.dict_entries)}
    if d.array_values:
        return [annotation_value(e, strings) for e in d.array_values]
    return {}


def annotation(d, names: dict, strings: dict) -> tuple[str, object]:
    name = names.get(d.name_iid, d.name) if d.HasField("name_iid") else d.name
    return name, annotation_value(d, strings)


def check(data: bytes, top_names: int) -> dict:
    errors: list[str] = []
    tables: dict[int, dict[str, dict[int, str]]] = {}
    cleared: set[int] = set()
    tracks: dict[int, dict] = {}
    clock = {"primary_trace_clock": None, "defaults_timestamp_clock_id": None, "packets_overriding_clock": 0}
    counts = collections.Counter()
    names = collections.Counter()
    interned_entries = collections.Counter()
    flows_out: set[int] = set()
    flows_in: set[int] = set()
    timeline = []  # (ts, file index, track, type, name)
    first_args = {}
    n = 0
    for i, p in enumerate(packets(data)):
        n += 1
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED:
            cleared.add(seq)
            tables[seq] = {t: {} for t in INTERNED_TABLES}
        if p.sequence_flags & SEQ_NEEDS_INCREMENTAL_STATE and seq not in cleared:
            errors.append(f"packet {i}: needs incremental state, none cleared on sequence {seq}")
        if p.HasField("trace_packet_defaults"):
            clock["defaults_timestamp_clock_id"] = p.trace_packet_defaults.timestamp_clock_id
        if p.HasField("clock_snapshot") and p.clock_snapshot.HasField("primary_trace_clock"):
            clock["primary_trace_clock"] = pb.BuiltinClock.Name(p.clock_snapshot.primary_trace_clock)
        if p.HasField("timestamp_clock_id"):
            clock["packets_overriding_clock"] += 1
        t = tables.setdefault(seq, {t: {} for t in INTERNED_TABLES})
        if p.HasField("interned_data"):
            for table, text in INTERNED_TABLES.items():
                for e in getattr(p.interned_data, table):
                    value = getattr(e, text)
                    t[table][e.iid] = value.decode() if isinstance(value, bytes) else value
                    interned_entries[table] += 1
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            info = {"uuid": d.uuid, "name": d.name or None, "parent": d.parent_uuid or None}
            if d.HasField("process"):
                info.update(pid=d.process.pid, process_name=d.process.process_name, labels=list(d.process.process_labels))
            if d.HasField("thread"):
                info.update(pid=d.thread.pid, tid=d.thread.tid, thread_name=d.thread.thread_name)
            if d.HasField("counter"):
                info.update(counter_unit=pb.CounterDescriptor.Unit.Name(d.counter.unit))
            tracks[d.uuid] = info
        if p.HasField("track_event"):
            e = p.track_event
            counts[pb.TrackEvent.Type.Name(e.type)] += 1
            if e.track_uuid not in tracks:
                errors.append(f"packet {i}: event on undeclared track {e.track_uuid}")
            name = None
            if e.HasField("name_iid"):
                name = t["event_names"].get(e.name_iid)
                if name is None:
                    errors.append(f"packet {i}: name_iid {e.name_iid} not interned before")
            elif e.HasField("name"):
                name = e.name
            if e.type in (BEGIN, INSTANT):
                names[name] += 1
            flows_out.update(e.flow_ids)
            flows_in.update(e.terminating_flow_ids)
            if e.type in (BEGIN, END):
                timeline.append((p.timestamp, i, e.track_uuid, e.type, name))
            if e.type == BEGIN and name not in first_args and e.debug_annotations:
                try:
                    first_args[name] = dict(
                        annotation(a, t["debug_annotation_names"], t["debug_annotation_string_values"])
                        for a in e.debug_annotations
                    )
                except KeyError as err:
                    errors.append(f"packet {i}: annotation iid {err} not interned before")
    timeline.sort(key=lambda x: (x[0], x[1]))
    stacks: dict[int, list] = collections.defaultdict(list)
    slices_per_track = collections.Counter()
    max_depth = collections.Counter()
    for ts, i, track, kind, name in timeline:
        stack = stacks[track]
        if kind == BEGIN:
            stack.append((ts, name))
            max_depth[track] = max(max_depth[track], len(stack))
        elif not stack:
            errors.append(f"packet {i}: END on track {track} with no open slice")
        else:
            stack.pop()
            slices_per_track[track] += 1
    for track, stack in stacks.items():
        if stack:
            errors.append(f"track {track}: {len(stack)} slices never closed")

    def label(uuid: int) -> str:
        d = tracks.get(uuid, {})
        return d.get("name") or d.get("thread_name") or d.get("process_name") or str(uuid)

    return {
        "packets": n,
        "clock": clock,
        "tracks": sorted(tracks.values(), key=lambda d: d["uuid"]),
        "events": dict(counts),
        "distinct_names": len(names),
        "names": dict(names.most_common(top_names)),
        "interned_entries": dict(interned_entries),
        "slices_per_track": {f"{label(u)} [{u}]": c for u, c in sorted(slices_per_track.items())},
        "max_depth_per_track": {f"{label(u)} [{u}]": c for u, c in sorted(max_depth.items())},
        "flows": {
            "starts": len(flows_out),
            "ends": len(flows_in),
            "connected": len(flows_out & flows_in),
        },
        "first_args": first_args,
        "errors": errors,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--names", type=int, default=20, help="most frequent names to list")
    a = ap.parse_args()
    try:
        with open(a.trace, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        report = check(data, a.names)
    except (OSError, ValueError, EOFError) as err:
        print(f"check_pftrace: {a.trace}: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # protobuf's DecodeError and friends
        print(f"check_pftrace: {a.trace}: not a Perfetto trace: {err}", file=sys.stderr)
        return 2
    json.dump(report, sys.stdout, indent=1, default=str)
    print()
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
