"""cupmon's Parquet datasets in DuckDB.

``cupmon export-parquet DUMPS -o OUT`` writes the datasets and ``OUT/cupmon.sql``,
the views and macros over them (``kernels``, ``memcpy``, ``memset``, ``api``,
``stacks``, ``dumps``, ``top_kernels``, ``busy_per_minute``, ``stragglers``,
``comm_overlap``).

>>> from cupmon import sql
>>> con = sql.connect("OUT")          # a duckdb connection with the views
>>> con.sql("SELECT * FROM stragglers ORDER BY minute_ns").show()

Needs the ``duckdb`` package: ``pip install 'cupmon[sql]'``. ``cupmon sql OUT ...``
runs this file's :func:`main` (the cupmon binary passes it to Python whole, so it
imports nothing from the cupmon package).
"""

from __future__ import annotations

import argparse
import os
import sys

INSTALL_HINT = (
    "cupmon sql needs the duckdb Python package, which {python} cannot import: "
    "pip install 'cupmon[sql]' (or pip install duckdb) into that Python, or point "
    "CUPMON_PYTHON at a Python that has it"
)

#: The queries ``cupmon sql`` names (``{top}``: kernels per rank).
QUERIES = {
    "top_kernels": "SELECT rank, host, pid, name, launches, round(total_ns / 1e6, 3) AS total_ms, "
    "round(mean_ns / 1e3, 3) AS mean_us, round(100 * share, 2) AS pct FROM top_kernels_per_rank({top})",
    "busy": "SELECT job, host, device, minute_start, busy_ns, round(100 * busy_fraction, 2) AS "
    "busy_pct FROM busy_per_minute ORDER BY job, host, device, minute_ns",
    "stragglers": "SELECT job, minute_start, ranks, slowest_rank, slowest_host, "
    "round(slowdown, 3) AS slowdown, busiest_rank, busiest_host, busiest_ns "
    "FROM stragglers ORDER BY job, minute_ns",
    "comm_overlap": "SELECT job, host, rank, pid, device, nccl_ns, compute_ns, overlap_ns, "
    "round(100 * overlap_fraction, 2) AS overlap_pct FROM comm_overlap "
    "ORDER BY job, rank, host, pid, device",
    # GPU time by the Python line that launched it (kernels' source_line: the innermost
    # user frame of the launching stack), the {top} lines of each process.
    "top_lines": "SELECT rank, host, pid, line, launches, round(total_ns / 1e6, 3) AS total_ms, "
    "round(100 * share, 2) AS pct FROM (SELECT job, host, rank, pid, coalesce(source_line, "
    "CASE WHEN stack_id = 0 THEN '(no Python frames)' ELSE '(no stack noted)' END) AS line, "
    "count(*) AS launches, CAST(sum(duration_ns) AS BIGINT) AS total_ns, sum(duration_ns) / "
    "sum(sum(duration_ns)) OVER (PARTITION BY job, host, rank, pid) AS share FROM kernels "
    "GROUP BY job, host, rank, pid, line) QUALIFY row_number() OVER (PARTITION BY job, host, "
    "rank, pid ORDER BY total_ns DESC NULLS LAST, line) <= {top} "
    "ORDER BY rank NULLS LAST, host, pid, total_ns DESC NULLS LAST, line",
}


class DuckDBMissing(ImportError):
    """The duckdb package is not installed."""


def _duckdb():
    try:
        import duckdb
    except ImportError as e:
        raise DuckDBMissing(INSTALL_HINT.format(python=sys.executable)) from e
    return duckdb


def connect(out_dir: str, database: str = ":memory:"):
    """A DuckDB connection with ``OUT/cupmon.sql``'s views over ``out_dir``
    (wherever the export was written from)."""
    duckdb = _duckdb()
    path = os.path.join(out_dir, "cupmon.sql")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise FileNotFoundError(
            f"{out_dir}: no cupmon.sql ({e.strerror}); is it a `cupmon export-parquet` output?"
        ) from e
    con = duckdb.connect(database)
    # Set before the views are made: DuckDB reads the files a view names when it
    # creates it, and cupmon.sql keeps a cupmon_dir set before it (it names no path,
    # so an export that was moved or copied reads where it is now).
    con.execute("SET VARIABLE cupmon_dir = ?", [os.path.abspath(out_dir)])
    con.execute(text)
    return con


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="cupmon sql", description="Query cupmon's Parquet datasets")
    p.add_argument("dir")
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("-c", "--command", dest="query")
    q.add_argument("--top-kernels", action="store_true")
    q.add_argument("--busy", action="store_true")
    q.add_argument("--stragglers", action="store_true")
    q.add_argument("--comm-overlap", action="store_true")
    q.add_argument("--top-lines", action="store_true")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--csv", action="store_true")
    # For the cupmon binary, which shortens kernel names for its table: the column
    # names, then each row, as one JSON array a line.
    p.add_argument("--json-rows", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--max-rows", type=int, default=200)
    a = p.parse_args(argv)
    try:
        con = connect(a.dir)
    except DuckDBMissing as e:
        print(f"cupmon: error: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"cupmon: error: {e}", file=sys.stderr)
        return 2
    for name in QUERIES:
        if getattr(a, name):
            query = QUERIES[name].format(top=int(a.top))
            break
    else:
        query = a.query
    duckdb = _duckdb()
    try:
        if a.json_rows:
            import json

            cur = con.execute(query)
            if cur.description:
                print(json.dumps([d[0] for d in cur.description]))
                while True:
                    rows = cur.fetchmany(10000)
                    if not rows:
                        break
                    for row in rows:
                        print(json.dumps(list(row), default=str))
        elif a.csv:
            import csv

            # A cursor streams the rows (a relation would run the query again per call).
            cur = con.execute(query)
            w = csv.writer(sys.stdout, lineterminator="\n")
            if cur.description:
                w.writerow([d[0] for d in cur.description])
                while True:
                    rows = cur.fetchmany(10000)
                    if not rows:
                        break
                    w.writerows(rows)
        else:
            rel = con.sql(query)
            if rel is not None:
                rel.show(max_rows=a.max_rows, max_width=10_000, max_col_width=120)
        sys.stdout.flush()
    except duckdb.Error as e:
        print(f"cupmon: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `cupmon sql ... | head` is not a failure.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
