"""`jaxprof sql` without pyarrow: the tables cross to DuckDB through the Arrow C stream interface
and the output is made from DuckDB's rows, byte for byte what the pyarrow path writes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
jaxprof = pytest.importorskip("jaxprof")

from jaxprof import _core, _tables, sql  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "tests" / "data" / "jax_cpu_8dev"
GROUP_BY = "SELECT name, sum(duration_ps) AS total FROM device_ops GROUP BY name ORDER BY name"

# Queries whose results hold every type the rows path writes itself, and the awkward values of
# each (nulls, quotes, exponents, decimals with many places, NaN, negative zero).
QUERIES = [
    GROUP_BY,
    "SELECT * FROM device_ops ORDER BY device, timeline_start_ps LIMIT 40",
    "SELECT * FROM module_executions ORDER BY ALL LIMIT 20",
    "SELECT * FROM collectives ORDER BY ALL LIMIT 20",
    "SELECT * FROM compile_passes ORDER BY ALL LIMIT 20",
    "SELECT avg(duration_ps) a, stddev(duration_ps) s, sum(duration_ps) / 3 d, "
    "min(duration_ps) * 1.5 f, sum(1.25) dec, 0.0::DECIMAL(18, 10) z, 1e21::DOUBLE big, "
    "1e-7::DOUBLE small, 1e9::DOUBLE plain, 12345678901.0::DOUBLE sci, -0.0::DOUBLE nz, "
    "'nan'::DOUBLE nn, 'a\"b,c' q, NULL::VARCHAR nul, true t, 2::HUGEINT h, 3::UBIGINT u, "
    "(-5)::TINYINT i FROM device_ops",
    "SELECT hlo_op, count(*) n FROM device_ops GROUP BY ALL ORDER BY n DESC, hlo_op NULLS FIRST",
    "SELECT 1 AS a WHERE false",
]


def _python_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(jaxprof.__file__).parent.parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
    return env


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_sql_imports_neither_pyarrow_nor_numpy(fmt):
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "jaxprof.sql", "sql",
                        str(BUNDLED), GROUP_BY, "--format", fmt],
                       capture_output=True, text=True, env=_python_env(), check=True)
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "duckdb" in imported and "jaxprof" in imported
    assert not imported & {"pyarrow", "numpy", "pandas"}
    assert "add_tanh_fusion" in r.stdout


@pytest.fixture(scope="module")
def connection():
    core = _core.load([str(BUNDLED)], "", [])
    con = duckdb.connect(":memory:")
    _tables.register(con, {n: _tables.arrow_table(core, n) for n in _tables.table_names()})
    yield con
    con.close()


@pytest.mark.parametrize("query", QUERIES, ids=[f"query{i}" for i in range(len(QUERIES))])
@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_rows_write_what_pyarrow_writes(connection, query, fmt, tmp_path):
    kind, (names, type_ids, rows) = sql._fetch(connection.sql(query), fmt)
    assert kind == "rows"
    sql._write_rows(names, type_ids, rows, fmt, str(tmp_path / "rows"))
    sql._write(_tables.arrow_result(connection.sql(query)), fmt, str(tmp_path / "arrow"))
    assert (tmp_path / "rows").read_bytes() == (tmp_path / "arrow").read_bytes()


def test_other_types_go_through_pyarrow(connection):
    kind, result = sql._fetch(connection.sql("SELECT DATE '2026-01-02' AS d"), "json")
    assert kind == "arrow" and result.num_rows == 1


def test_arrow_tables_read_again_and_whole():
    core = _core.load([str(BUNDLED)], "", [])
    for name in _tables.table_names():
        t = _tables.arrow_table(core, name)
        first, second = pa.table(t), pa.table(t)  # each read, a new stream over one table
        first.validate(full=True)
        assert first.equals(second) and first.num_rows == t.num_rows
        assert all(f.nullable and set(f.metadata) == {b"unit", b"meaning"} for f in first.schema)
