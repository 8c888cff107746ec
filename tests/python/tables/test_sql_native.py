"""`jaxprof sql` through DuckDB's C API in the command itself (src/jaxprof/sql/) against the same
command handing over to Python (JAXPROF_SQL_NATIVE=off): the same bytes on stdout and stderr and
the same exit code, for every format and the result types the native path writes; the rest (other
types, Parquet) handed over with the same output."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
jaxprof = pytest.importorskip("jaxprof")

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "tests" / "data" / "jax_cpu_8dev"

# Every type the native path writes (sums: hugeint and decimal; avg: double; integers of each
# width; booleans), strings with quotes, commas, unicode, trailing spaces and newlines, nulls,
# empty results, repeated names, and queries that read a table twice or filter it.
QUERIES = [
    "SELECT name, sum(duration_ps) AS total FROM device_ops GROUP BY name ORDER BY name",
    "SELECT * FROM device_ops ORDER BY device, timeline_start_ps LIMIT 40",
    "SELECT * FROM device_ops LIMIT 25",
    "SELECT * FROM module_executions ORDER BY ALL LIMIT 20",
    "SELECT * FROM steps ORDER BY ALL",
    "SELECT * FROM host_ranges ORDER BY ALL LIMIT 30",
    "SELECT * FROM compiles ORDER BY ALL",
    "SELECT * FROM compile_passes ORDER BY ALL LIMIT 20",
    "SELECT avg(duration_ps) a, stddev(duration_ps) s, sum(duration_ps) / 3 d, "
    "min(duration_ps) * 1.5 f, sum(1.25) dec, 0.0::DECIMAL(18, 10) z, 1e21::DOUBLE big, "
    "1e-7::DOUBLE small, 1e9::DOUBLE plain, 12345678901.0::DOUBLE sci, -0.0::DOUBLE nz, "
    "'nan'::DOUBLE nn, 'inf'::DOUBLE inf, 'a\"b,c' q, NULL::VARCHAR nul, true t, 2::HUGEINT h, "
    "3::UBIGINT u, (-5)::TINYINT i, 1e16::DOUBLE e16, 1e-5::DOUBLE e5, 0.1::DOUBLE tenth, "
    "(-123.4500)::DECIMAL(9, 4) negdec, 1234567.891::DECIMAL(38, 3) bigdec, "
    "0.00000001::DECIMAL(18, 8) tiny, 12::DECIMAL(4, 0) whole FROM device_ops",
    "SELECT 'é漢字😀' u, 'tab\there' t, 'new\nline' n, 'trail  ' w, '' e, 'x\u0085' nel, "
    "'q\"\"q' qq, '\\' b, chr(1) || chr(127) c",
    "SELECT hlo_op, count(*) n FROM device_ops GROUP BY ALL ORDER BY n DESC, hlo_op NULLS FIRST",
    "SELECT warmup, autotuning, count(*) n, max(step) m FROM device_ops GROUP BY ALL ORDER BY ALL",
    "SELECT 1 AS a WHERE false",
    "SELECT name FROM device_ops WHERE false",
    "SELECT 1 AS a, 2 AS a, 'x' AS b, 3 AS b",
    "SELECT count(*) n FROM device_ops WHERE duration_ps > 1000000",
    "SELECT a.name, count(*) n FROM device_ops a JOIN device_ops b USING (name, device) "
    "GROUP BY 1 ORDER BY 1",
    "SELECT device, program_id, sum(self_ps) FROM device_ops d WHERE name LIKE '%fusion%' "
    "AND step IS NOT NULL GROUP BY ALL ORDER BY ALL",
    "SELECT NULL::BIGINT a, NULL::VARCHAR b, NULL::DOUBLE c, NULL::BOOLEAN d",
    "select NAME from DEVICE_OPS order by 1 limit 3",
    "SELECT nope FROM device_ops",
    "SELECT * FROM nosuch",
    "SELECT 'a'::INT",
]
FIXTURE_QUERIES = [
    "SELECT * FROM kernels ORDER BY ALL LIMIT 30",
    "SELECT * FROM memory ORDER BY ALL LIMIT 30",
    "SELECT * FROM collectives ORDER BY ALL LIMIT 30",
    "SELECT category, count(*) n, sum(duration_ps) t, avg(duration_ps) a FROM device_ops "
    "GROUP BY ALL ORDER BY ALL",
    "SELECT module, opcode, sum(duration_ps) FROM device_ops GROUP BY ALL ORDER BY ALL",
]
FORMATS = ["json", "csv", "table"]


def _run(binary: Path, mode: str, *args, debug: bool = False):
    env = dict(os.environ, JAXPROF_PYTHON=sys.executable, JAXPROF_SQL_NATIVE=mode)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(jaxprof.__file__).parent.parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
    env.pop("JAXPROF_SQL_DEBUG", None)
    if debug:
        env["JAXPROF_SQL_DEBUG"] = "1"
    return subprocess.run([str(binary), "sql", *map(str, args)], capture_output=True, env=env)


def _same(binary: Path, profile: Path, query: str, fmt: str) -> None:
    native = _run(binary, "require", profile, query, "--format", fmt)
    python = _run(binary, "off", profile, query, "--format", fmt)
    assert (native.returncode, native.stdout, native.stderr) == \
        (python.returncode, python.stdout, python.stderr)


@pytest.fixture(scope="module")
def gpu_profile(xplane_fixtures):
    return xplane_fixtures / "mi300x_jax_conv.xplane.pb"


def test_native_path_is_taken(jaxprof_bin):
    r = _run(jaxprof_bin, "require", BUNDLED, QUERIES[0], debug=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode() == "jaxprof: sql: ran through DuckDB's C API\n"
    assert b"add_tanh_fusion" in r.stdout


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("query", QUERIES, ids=[f"query{i}" for i in range(len(QUERIES))])
def test_native_writes_what_python_writes(jaxprof_bin, query, fmt):
    _same(jaxprof_bin, BUNDLED, query, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("query", FIXTURE_QUERIES,
                         ids=[f"query{i}" for i in range(len(FIXTURE_QUERIES))])
def test_native_writes_what_python_writes_on_a_gpu_profile(jaxprof_bin, gpu_profile, query, fmt):
    _same(jaxprof_bin, gpu_profile, query, fmt)


def test_output_file(jaxprof_bin, tmp_path):
    for mode in ("require", "off"):
        r = _run(jaxprof_bin, mode, BUNDLED, QUERIES[0], "--format", "csv", "-o",
                 tmp_path / mode)
        assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    assert (tmp_path / "require").read_bytes() == (tmp_path / "off").read_bytes()


@pytest.mark.parametrize("args, reason", [
    (["SELECT DATE '2026-01-02' AS d"], "the result has a column of DuckDB type"),
    (["SELECT 1.5::FLOAT AS f"], "the result has a column of DuckDB type"),
    (["SELECT '{}'::JSON AS j"], "the result has a column of type JSON"),
    (["SELECT NULL AS n"], "the result has a column of DuckDB type"),
    (["CREATE TABLE t AS SELECT 1 AS a"], "the statement is not a SELECT"),
    (["SELECT 1 AS a; SELECT count(*) AS n FROM device_ops"], "the query has several statements"),
    (["SELEC 1"], "the query has no statement that parses"),
    ([""], "the query has no statement that parses"),
])
def test_other_queries_go_to_python(jaxprof_bin, args, reason):
    auto = _run(jaxprof_bin, "auto", BUNDLED, *args, "--format", "json", debug=True)
    python = _run(jaxprof_bin, "off", BUNDLED, *args, "--format", "json")
    said = f"jaxprof: sql: running Python: {reason}".encode()
    assert auto.stderr.startswith(said)
    assert (auto.returncode, auto.stdout, auto.stderr.split(b"\n", 1)[1]) == \
        (python.returncode, python.stdout, python.stderr)
    refused = _run(jaxprof_bin, "require", BUNDLED, *args, "--format", "json")
    assert refused.returncode == 2 and b"DuckDB's C API not used" in refused.stderr


def test_parquet_goes_to_python(jaxprof_bin, tmp_path):
    r = _run(jaxprof_bin, "auto", BUNDLED, QUERIES[0], "--format", "parquet", "-o",
             tmp_path / "r.parquet", debug=True)
    assert r.returncode == 0 and b"running Python: Parquet" in r.stderr
    assert (tmp_path / "r.parquet").stat().st_size > 0


def test_missing_library_goes_to_python(jaxprof_bin, monkeypatch):
    monkeypatch.setenv("JAXPROF_DUCKDB_LIBRARY", "/nonexistent/libduckdb.so")
    auto = _run(jaxprof_bin, "auto", BUNDLED, QUERIES[0], "--format", "json", debug=True)
    assert auto.returncode == 0 and b"running Python: no file /nonexistent" in auto.stderr
    assert b'"name": "add_tanh_fusion"' in auto.stdout
    refused = _run(jaxprof_bin, "require", BUNDLED, QUERIES[0])
    assert refused.returncode == 2 and refused.stdout == b""


def test_bad_profile_says_what_other_commands_say(jaxprof_bin, tmp_path):
    bad = tmp_path / "bad.xplane.pb"
    bad.write_bytes(b"\xff\xff\xff not a profile")
    sql = _run(jaxprof_bin, "require", bad, QUERIES[0])
    ops = subprocess.run([str(jaxprof_bin), "ops", str(bad)], capture_output=True)
    assert sql.returncode == ops.returncode == 2
    assert sql.stderr == ops.stderr and sql.stdout == b""


@pytest.mark.parametrize("mode", ["require", "off"])
def test_reader_going_away_is_not_an_error(jaxprof_bin, mode):
    env = dict(os.environ, JAXPROF_PYTHON=sys.executable, JAXPROF_SQL_NATIVE=mode)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(jaxprof.__file__).parent.parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
    p = subprocess.Popen([str(jaxprof_bin), "sql", str(BUNDLED), "SELECT * FROM range(2000000)",
                          "--format", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    assert p.stdout.readline() == b'"range"\n'
    p.stdout.close()
    assert p.wait() == 0 and p.stderr.read() == b""
