"""DuckDB on a `cupmon export-parquet` directory: wall time of cupmon.sql's queries.

usage: python bench/parquet/duckdb_bench.py OUT [--threads 2] [--runs 3] [--queries top,count,...]
(needs the duckdb package: pip install 'cupmon[sql]'). A new connection per run;
the OS page cache is warm after the first. Wall time, and the process's CPU time
(user + system, all DuckDB threads): on a shared machine the wall time grows with the
others' load, the CPU time much less."""

from __future__ import annotations

import argparse
import importlib.util
import resource
import statistics
import tempfile
import time
from pathlib import Path

# cupmon.sql by path: it imports nothing from the package (no extension needed).
_spec = importlib.util.spec_from_file_location(
    "cupmon_sql", Path(__file__).resolve().parents[2] / "python" / "cupmon" / "sql.py"
)
sql = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sql)

QUERIES = {
    "count": "SELECT count(*) FROM kernels",
    "top": "SELECT * FROM top_kernels_per_rank(10)",
    "stragglers": "SELECT * FROM stragglers",
    "busy": "SELECT * FROM busy_per_minute",
    "overlap": "SELECT * FROM comm_overlap",
}


def cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--queries", default="count,top,stragglers,busy,overlap")
    p.add_argument("--memory-limit", default="16GB")
    a = p.parse_args()
    import duckdb

    print(f"duckdb {duckdb.__version__}, threads={a.threads}, memory_limit={a.memory_limit}, {a.runs} runs")
    for name in a.queries.split(","):
        times, cpus = [], []
        for _ in range(a.runs):
            # A new connection each run: nothing cached but the OS page cache.
            con = sql.connect(a.out)
            con.execute(f"SET threads = {a.threads}")
            con.execute(f"SET memory_limit = '{a.memory_limit}'")
            # Spills go to the temp dir, not to DuckDB's default ./.tmp in the cwd
            # (busy_per_minute on 100M rows spilled 5 GB there).
            con.execute(f"SET temp_directory = '{Path(tempfile.gettempdir()) / 'cupmon-duckdb-bench'}'")
            t, c = time.perf_counter(), cpu()
            rows = con.sql(QUERIES[name]).fetchall()
            times.append(time.perf_counter() - t)
            cpus.append(cpu() - c)
            con.close()
        print(
            f"{name:<11} {statistics.median(times):8.2f} s  [{min(times):.2f}..{max(times):.2f}]  "
            f"CPU {statistics.median(cpus):8.2f} s  [{min(cpus):.2f}..{max(cpus):.2f}]  "
            f"{len(rows)} rows"
        )


if __name__ == "__main__":
    main()
