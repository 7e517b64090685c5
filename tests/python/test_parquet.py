"""`cupmon export-parquet` datasets queried through DuckDB: golden answers on the
H200 recordings, the planted straggler of a synthetic 16-rank run found every
minute, counts equal to `cupmon stats`, and `cupmon sql` as a command."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURE_NAMES, FIXTURES, ROOT, bench_parquet, cupmon_cmd, loud_skip

GOLDEN = ROOT / "tests" / "python" / "golden" / "parquet_fixtures.json"
MINUTE = 60_000_000_000


def connect(out):
    try:
        from cupmon import sql
    except ImportError as e:  # an old install without the module
        loud_skip(f"cupmon.sql cannot be imported: {e}")
    try:
        return sql.connect(str(out))
    except sql.DuckDBMissing as e:
        loud_skip(str(e))


def rows(con, query: str) -> list[dict]:
    rel = con.sql(query)
    return [dict(zip(rel.columns, r)) for r in rel.fetchall()]


def one(con, query: str):
    return con.execute(query).fetchone()


def rounded(v):
    """Floats to 9 significant digits: golden answers compare meaning, not bits."""
    if isinstance(v, float):
        return float(f"{v:.9g}") if math.isfinite(v) else repr(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


GOLDEN_QUERIES = {
    "top_kernels": "SELECT rank, host, pid, name, launches, timed, total_ns, min_ns, max_ns, share "
    "FROM top_kernels_per_rank(3)",
    "busy_per_minute": "SELECT * FROM busy_per_minute ORDER BY job, host, device, minute_ns",
    "stragglers": "SELECT * FROM stragglers ORDER BY job, minute_ns",
    "comm_overlap": "SELECT * FROM comm_overlap ORDER BY job, host, pid, device",
    "dumps": "SELECT job, host, rank, pid, first_ns, last_ns, kernels, memcpy, memset, api, "
    "exports, end_chunk, dropped_records, session_open, cupti_version "
    "FROM dumps ORDER BY pid",
    "memcpy_kinds": "SELECT copy_kind, src_kind, dst_kind, count(*) AS n, sum(bytes) AS bytes "
    "FROM memcpy GROUP BY ALL ORDER BY ALL",
    "api_top": "SELECT domain, name, count(*) AS calls, count(external_id) AS with_op "
    "FROM api GROUP BY ALL ORDER BY calls DESC, name LIMIT 8",
}


def test_golden_answers_on_the_h200_recordings(fixtures_export):
    con = connect(fixtures_export)
    got = {
        name: [{k: rounded(v) for k, v in r.items()} for r in rows(con, q)]
        for name, q in GOLDEN_QUERIES.items()
    }
    if os.environ.get("CUPMON_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    want = json.loads(GOLDEN.read_text())
    for name in GOLDEN_QUERIES:
        assert got[name] == want[name], f"{name} differs from {GOLDEN.name}"


def test_row_counts_and_sums_equal_cupmon_stats(fixtures_export):
    con = connect(fixtures_export)
    for fixture in FIXTURE_NAMES:
        stats = cupmon_cmd("stats", str(FIXTURES / fixture), "--top", "1000")
        assert stats.returncode == 0, stats.stderr
        text = stats.stdout
        pid = int(re.search(r'"pid":(\d+)', (FIXTURES / fixture / "cupti_monitor_meta.bin").read_bytes().decode("latin-1")).group(1))
        kernels = int(re.search(r"CONCURRENT_KERNEL\s+(\d+)", text).group(1))
        # Kernels CUPTI gave no time are counted by stats but left out of the export.
        kernels -= sum(int(n) for n in re.findall(r"\((\d+) launches? without times\)", text))
        memcpy_bytes = int(re.search(r"memcpy bytes:\s+(\d+)", text).group(1))
        (n,) = one(con, f"SELECT count(*) FROM kernels WHERE pid = {pid}")
        assert n == kernels, fixture
        (b,) = one(con, f"SELECT sum(bytes) FROM memcpy WHERE pid = {pid}")
        # stats counts every copy's bytes; the export has the timed copies only.
        import cupmon

        untimed_bytes = sum(
            e.get("bytes", 0)
            for e in cupmon.read_dump(str(FIXTURES / fixture))["events"]
            if e["kind"] == "gpu_memcpy" and e["start_ns"] == 0
        )
        assert b == memcpy_bytes - untimed_bytes, fixture
        # Total kernel time: the sum over `cupmon stats`' top kernels (all of them).
        listed = re.findall(r"^\s+([\d.]+)\s+(\d+)\s+\S+\s+.+$", text.split("top kernels by total GPU time:")[1], re.M)
        total_ms = sum(float(ms) for ms, _ in listed)
        (ns,) = one(con, f"SELECT sum(duration_ns) FROM kernels WHERE pid = {pid}")
        assert abs(ns / 1e6 - total_ms) < 0.001 * len(listed) + 1e-9, fixture


def test_stragglers_find_the_planted_slow_rank_every_minute(fleet_export):
    out, planted = fleet_export
    con = connect(out)
    got = {r["minute_ns"]: r for r in rows(con, "SELECT * FROM stragglers")}
    full = [m for m in planted["minutes"] if m["minute_ns"] in got and got[m["minute_ns"]]["ranks"] == 16]
    assert len(full) >= 5, f"only {len(full)} full minutes"
    for m in full:
        r = got[m["minute_ns"]]
        assert r["slowest_rank"] == m["rank"], f"minute {m['minute_ns']}: {r}"
        assert 1.15 < r["slowdown"] < 1.35, r
    # Busy time per device and minute: a union, never more than the minute.
    for r in rows(con, "SELECT * FROM busy_per_minute"):
        assert 0 < r["busy_ns"] <= MINUTE, r
    # NCCL kernels are those with a collective, parsed from their names at export
    # (a name merely containing "nccl" is not enough).
    got = rows(con, "SELECT collective, count(*) AS n, count(*) FILTER (WHERE name LIKE 'ncclDevKernel_%') AS named "
               "FROM kernels GROUP BY ALL ORDER BY ALL")
    assert {r["collective"] for r in got} == {"AllGather", "AllReduce", "Broadcast", "ReduceScatter", None}, got
    for r in got:
        assert r["named"] == (r["n"] if r["collective"] else 0), r
    # NCCL overlaps compute in every process (the all-reduce runs beside the step).
    overlap = rows(con, "SELECT * FROM comm_overlap")
    assert len(overlap) == 16
    for r in overlap:
        assert 0 < r["overlap_ns"] <= min(r["nccl_ns"], r["compute_ns"]), r


def test_cupmon_sql_runs_the_named_queries(fixtures_export):
    out = str(fixtures_export)
    done = cupmon_cmd("sql", out, "--top-kernels", "--top", "2", "--csv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "rank,host,pid,name,launches,total_ms,mean_us,pct"
    assert len(lines) == 1 + 2 * 2
    assert any("sgemm" in l or "gemm" in l for l in lines[1:]), lines
    for flag in ["--busy", "--stragglers", "--comm-overlap"]:
        done = cupmon_cmd("sql", out, flag)
        assert done.returncode == 0, (flag, done.stderr)
    done = cupmon_cmd("sql", out, "-c", "SELECT count(*) AS n FROM kernels", "--csv")
    assert done.stdout.splitlines() == ["n", "76"]
    done = cupmon_cmd("sql", out, "-c", "SELECT * FROM no_such_table")
    assert done.returncode == 2 and "no_such_table" in done.stderr


def test_gpu_busy_is_one_figure_in_stats_and_sql(tmp_path):
    """`cupmon run`'s summary said 2.7 % busy (copies counted), report and SQL 1.4 %
    (kernels only). One definition now (cupmon_records::GPU_BUSY: the union of a
    device's kernel intervals): `cupmon stats` (whose lines `cupmon run` prints) and
    the busy_per_minute view give the same busy time for each recording."""
    for fixture in FIXTURE_NAMES:
        out = tmp_path / fixture
        done = cupmon_cmd("export-parquet", str(FIXTURES / fixture), "-o", str(out))
        assert done.returncode == 0, done.stderr
        stats = cupmon_cmd("stats", str(FIXTURES / fixture))
        assert stats.returncode == 0, stats.stderr
        line = re.search(r"^GPU busy:\s+(.*)$", stats.stdout, re.M)
        assert line, stats.stdout
        got = {int(d): float(ms) for d, ms in re.findall(r"device (\d+) ([\d.]+) ms", line.group(1))}
        assert "copies and memsets are not counted" in stats.stdout
        con = connect(out)
        sql = dict(con.execute("SELECT device, sum(busy_ns) FROM busy_per_minute GROUP BY device").fetchall())
        assert sorted(got) == sorted(sql), (fixture, got, sql)
        for device, ns in sql.items():
            assert abs(ns / 1e6 - got[device]) < 0.0005 + 1e-9, (fixture, device, ns, got)


def test_cupmon_sql_on_a_moved_export(fixtures_export, tmp_path):
    """An export moved or copied elsewhere (another host, a bucket): cupmon.sql
    held the export's absolute path, which DuckDB read when it created the views,
    so `cupmon sql` failed with a traceback. Copied, and the original removed."""
    import shutil

    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(fixtures_export, moved)
    text = (moved / "cupmon.sql").read_text()
    assert str(fixtures_export) not in text
    hidden = tmp_path / "hidden"
    fixtures_export.rename(hidden)  # the original is gone while the copy is queried
    try:
        done = cupmon_cmd("sql", str(moved), "-c", "SELECT count(*) AS n FROM kernels", "--csv")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["n", "76"]
        con = connect(moved)
        assert one(con, "SELECT count(*) FROM kernels") == (76,)
        # The DuckDB shell's way: run inside the directory, no variable set.
        import duckdb

        cwd = os.getcwd()
        os.chdir(moved)
        try:
            con = duckdb.connect()
            con.execute(text)
            assert con.execute("SELECT count(*) FROM kernels").fetchone() == (76,)
        finally:
            os.chdir(cwd)
    finally:
        hidden.rename(fixtures_export)


def test_regression_cupmon_sql_top_kernels_printed_lines_of_900_characters(fixtures_export):
    out = str(fixtures_export)
    done = cupmon_cmd("sql", out, "--top-kernels", "--top", "10", env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["rank", "host", "pid", "name", "launches", "total_ms", "mean_us", "pct"]
    assert len(lines) > 10
    assert all(len(l) <= 100 for l in lines), max(lines, key=len)
    assert any("<…>(…)" in l for l in lines), lines
    full = cupmon_cmd("sql", out, "--top-kernels", "--top", "10", "--full-names", env={"COLUMNS": "100"})
    assert full.returncode == 0, full.stderr
    assert "…" not in full.stdout and max(map(len, full.stdout.splitlines())) > 100


KERNEL_COLUMNS = "start_ns, duration_ns, name, device, context, stream, correlation_id, graph_id, graph_node_id"


def window_kernels(dump) -> list[tuple]:
    """The dump's kernel records as `cupmon.read_dump` decodes them (cupmon-records,
    not the Parquet writer), as rows in the export's write order: by start, kernels
    of the same start in the order they came."""
    import cupmon

    # GPU ops CUPTI gave no time (start 0) are left out of the export, as out of traces.
    events = [
        e for e in cupmon.read_dump(str(dump))["events"] if e["kind"] == "kernel" and e["start_ns"] != 0
    ]
    order = sorted(range(len(events)), key=lambda i: (events[i]["start_ns"], i))
    rows = []
    for i in order:
        e = events[i]
        timed = e["start_ns"] != 0 and e["end_ns"] >= e["start_ns"]
        rows.append((
            e["start_ns"], e["end_ns"] - e["start_ns"] if timed else None, e["name"],
            e["device_id"], e["context_id"], e["stream_id"], e["correlation_id"],
            e["graph_id"] or None, e["graph_node_id"] or None,
        ))
    return rows


def parquet_kernels(con, files: str, where: str = "") -> list[tuple]:
    """The kernel rows as DuckDB reads them, by start (rows of one start, in one
    file, in the order the file has them)."""
    return con.execute(
        f"SELECT {KERNEL_COLUMNS} FROM read_parquet('{files}', file_row_number = true, filename = true) "
        f"{where} ORDER BY start_ns, filename, file_row_number"
    ).fetchall()


@pytest.fixture(scope="session")
def edges_export(tmp_path_factory) -> tuple:
    """bench/parquet's edge-case dump (150,000 kernels: two page boundaries in one
    file, 70,000 names, NULL graph ids and collectives among values), exported."""
    gen = bench_parquet()
    base = tmp_path_factory.mktemp("edges")
    dump, out = base / "dump", base / "out"
    subprocess.run([str(gen), "edges", str(dump)], check=True, capture_output=True)
    done = cupmon_cmd("export-parquet", str(dump), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return dump, out


def test_dictionary_columns_read_back_as_the_dump_recorded_them(edges_export, fixtures_export):
    """Every kernel row DuckDB reads equals its record, value for value, NULLs
    included: the edge-case dump (one file: 150,000 rows over pages of 106,496,
    17-bit name indices), and the H200 recordings."""
    import duckdb

    dump, out = edges_export
    con = duckdb.connect()
    files = str(out / "kernels" / "**" / "*.parquet")
    assert con.execute(f"SELECT count(DISTINCT filename) FROM read_parquet('{files}', filename = true)").fetchone() == (1,)
    got = parquet_kernels(con, files)
    want = window_kernels(dump)
    assert len(got) == len(want) == 150_000
    assert got == want
    # The columns the window has not: as bench-parquet's `edges` made them, from
    # the kernel's number (its correlation id).
    rows = con.execute(
        f"SELECT correlation_id, grid_x, registers_per_thread, dynamic_shared_memory, collective, "
        f"name, job FROM read_parquet('{files}')"
    ).fetchall()
    assert len({r[3] for r in rows}) == 70_001 and len({r[5] for r in rows}) == 70_000
    for corr, grid_x, regs, dynamic, collective, name, job in rows:
        i = (corr - 1000) // 2
        assert (grid_x, regs, dynamic) == (1 << (i % 11), 32 + i % 3, i % 70_001), corr
        assert collective == ("AllReduce" if name.startswith("ncclDevKernel_") else None), name
        assert job is None
    files = str(fixtures_export / "kernels" / "**" / "*.parquet")
    dumps = str(fixtures_export / "dumps" / "**" / "*.parquet")
    for fixture in FIXTURE_NAMES:
        pid = int(re.search(r'"pid":(\d+)', (FIXTURES / fixture / "cupti_monitor_meta.bin").read_bytes().decode("latin-1")).group(1))
        got = parquet_kernels(con, files, f"WHERE pid = {pid}")
        want = window_kernels(FIXTURES / fixture)
        (converted,) = con.execute(f"SELECT clock_converted FROM read_parquet('{dumps}') WHERE pid = {pid}").fetchone()
        if converted == 0:
            assert got == want, fixture
        else:
            # torch_mlp's times were on torch.profiler's clock: the export converts
            # them (the window keeps them raw); every other value is the record's.
            assert sorted(r[2:] for r in got) == sorted(r[2:] for r in want), fixture


def scalar(con, query: str):
    """The one value of `query` (its result read to the end)."""
    return con.sql(query).fetchall()[0][0]


def with_stacks(dump: Path, into: Path, corrs: list[int]) -> Path:
    """A copy of the raw dump `dump` whose kernels of correlation ids `corrs` have
    Python stacks, as cupmon writes them for a raw dump: stack 1 (torch's frame over
    train.py:42) for even ids, 2 (model.py:7) for odd ones but every fifth, which
    was launched from a thread without Python frames (stack 0)."""
    import shutil
    import struct

    shutil.copytree(dump, into)
    table = [
        {"frame": 1, "file": "/site/torch/nn/linear.py", "function": "forward", "line": 125,
         "origin": "torch"},
        {"frame": 2, "file": "train.py", "function": "step", "line": 42},
        {"frame": 3, "file": "model.py", "function": "block", "line": 7},
        {"stack": 1, "frames": [1, 2]},
        {"stack": 2, "frames": [3]},
    ]
    (into / "python_stacks.jsonl").write_text("".join(json.dumps(l) + "\n" for l in table))
    pairs = b"".join(
        struct.pack("<II", c, 0 if c % 5 == 0 else 1 if c % 2 == 0 else 2) for c in corrs
    )
    (into / "launch_stacks.bin").write_bytes(b"CUPMLSTK" + struct.pack("<I", 1) + pairs)
    return into


def test_kernels_join_their_python_stacks_and_sql_top_lines_ranks_them(tmp_path):
    plain = tmp_path / "plain"
    done = cupmon_cmd("export-parquet", str(FIXTURES / "torch_mlp"), "-o", str(plain))
    assert done.returncode == 0, done.stderr
    con = connect(plain)
    # Without stacks: no stacks rows, and kernels name none.
    assert scalar(con, "SELECT count(*) FROM stacks") == 0
    assert scalar(con, "SELECT count(stack_id) + count(source_line) FROM kernels") == 0
    corrs = [r["c"] for r in rows(con, "SELECT DISTINCT correlation_id AS c FROM kernels")]
    src = with_stacks(FIXTURES / "torch_mlp", tmp_path / "dump", corrs)
    out = tmp_path / "out"
    done = cupmon_cmd("export-parquet", str(src), "-o", str(out))
    assert done.returncode == 0, done.stderr
    con = connect(out)
    # Each kernel's source_line is its stack's user frame, found through the join.
    joined = rows(
        con,
        "SELECT k.stack_id, k.source_line, s.file || ':' || s.line AS frame_line, count(*) AS n "
        "FROM kernels k LEFT JOIN stacks s ON s.pid = k.pid AND s.stack_id = k.stack_id "
        "AND s.user_frame GROUP BY ALL ORDER BY ALL",
    )
    want = {0: None, 1: "train.py:42", 2: "model.py:7"}
    assert {r["stack_id"] for r in joined} == {0, 1, 2}, joined
    for r in joined:
        assert r["source_line"] == want[r["stack_id"]] == r["frame_line"], r
    # And each kernel joined the stack its correlation id was given, not just some stack.
    for r in rows(con, "SELECT correlation_id AS c, stack_id AS s FROM kernels"):
        assert r["s"] == (0 if r["c"] % 5 == 0 else 1 if r["c"] % 2 == 0 else 2), r
    assert scalar(con, "SELECT count(*) FROM stacks") == 3
    assert scalar(con, "SELECT count(*) FROM stacks WHERE origin = 'torch' AND NOT user_frame") == 1
    # --top-lines: GPU time per line, as summed here.
    done = cupmon_cmd("sql", str(out), "--top-lines", "--csv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "rank,host,pid,line,launches,total_ms,pct"
    by_line = {l.split(",")[3]: l.split(",") for l in lines[1:]}
    sums = rows(
        con,
        "SELECT coalesce(source_line, '(no Python frames)') AS line, count(*) AS n, "
        "round(sum(duration_ns) / 1e6, 3) AS ms FROM kernels GROUP BY ALL",
    )
    assert set(by_line) == {r["line"] for r in sums}, (lines, sums)
    for r in sums:
        got = by_line[r["line"]]
        assert (int(got[4]), float(got[5])) == (r["n"], r["ms"]), (got, r)
