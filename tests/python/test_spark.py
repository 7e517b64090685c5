"""The same Parquet files in Spark: PySpark's local mode runs docs/sql/spark/
(the views, top kernels per rank and stragglers in Spark's dialect) and must give
DuckDB's answers. Needs Java 17+ and pyspark (scripts/test-python.sh installs
pyspark); without them it says SKIPPED and why."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, loud_skip

SPARK_SQL = ROOT / "docs" / "sql" / "spark"


@pytest.fixture(scope="module")
def spark():
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        loud_skip(f"pyspark is not installed ({e}); scripts/test-python.sh installs it")
    if shutil.which("java") is None:
        loud_skip("no java on PATH: Spark needs a JRE 17+ (apt-get install openjdk-17-jre-headless)")
    s = (
        SparkSession.builder.master("local[2]")
        .appName("cupmon-parquet-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def statements(path: Path, **subst: str) -> list[str]:
    text = path.read_text()
    for k, v in subst.items():
        text = text.replace("${" + k + "}", v)
    out = []
    for stmt in text.split(";"):
        body = "\n".join(l for l in stmt.splitlines() if not l.strip().startswith("--")).strip()
        if body:
            out.append(body)
    return out


def make_views(spark, out: Path) -> None:
    for stmt in statements(SPARK_SQL / "views.sql", OUT=str(out)):
        dataset = stmt.split("/")[-1].split("'")[0]
        if (out / dataset).is_dir():  # a dataset the export had no rows for has no directory
            spark.sql(stmt)


def same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def compare(spark_rows, duck_rows, keys):
    assert len(spark_rows) == len(duck_rows)
    for s, d in zip(spark_rows, duck_rows):
        for k in keys:
            assert same(s[k], d[k]), (k, s, d)


def duck(out: Path, query: str) -> list[dict]:
    from cupmon import sql

    try:
        con = sql.connect(str(out))
    except sql.DuckDBMissing as e:
        loud_skip(str(e))
    rel = con.sql(query)
    return [dict(zip(rel.columns, r)) for r in rel.fetchall()]


@pytest.mark.parametrize("which", ["fleet", "fixtures"])
def test_top_kernels_in_spark_equal_duckdb(spark, which, fleet_export, fixtures_export):
    out = fleet_export[0] if which == "fleet" else fixtures_export
    make_views(spark, out)
    (query,) = statements(SPARK_SQL / "top_kernels.sql", TOP="3")
    got = [r.asDict() for r in spark.sql(query).collect()]
    want = duck(out, "SELECT * FROM top_kernels_per_rank(3)")
    compare(got, want, ["job", "host", "rank", "pid", "name", "launches", "timed", "total_ns", "min_ns", "max_ns", "mean_ns", "share"])


def test_stragglers_in_spark_equal_duckdb(spark, fleet_export):
    out, planted = fleet_export
    make_views(spark, out)
    (query,) = statements(SPARK_SQL / "stragglers.sql")
    got = [r.asDict() for r in spark.sql(query).collect()]
    want = duck(out, "SELECT * FROM stragglers ORDER BY job, minute_ns")
    compare(
        got,
        want,
        ["job", "minute_ns", "ranks", "slowest_rank", "slowest_host", "slowest_pid", "slowdown",
         "busiest_rank", "busiest_host", "busiest_pid", "busiest_ns"],
    )
    by_minute = {m["minute_ns"]: m["rank"] for m in planted["minutes"]}
    full = [r for r in got if r["ranks"] == 16]
    assert full and all(r["slowest_rank"] == by_minute[r["minute_ns"]] for r in full)
