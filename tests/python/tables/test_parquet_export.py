"""`jaxprof export --parquet` and `jaxprof.export_parquet` on a run of 4 hosts made by
bench/make_hosts.py (the bundled 8-device capture, one host planted 1.5x slower): every table of
every host read back with DuckDB (Hive partitions) and with dask.dataframe holds, per host, the
rows and the summed durations of that host's `Profile.table`; the files are those tables
themselves; the Dask path writes the same bytes; the hosts table puts the hosts on the run's
clock; a damaged host names its file and exits 2; the cross-host query of docs/tables.md prints
what the page shows."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

duckdb = pytest.importorskip("duckdb")
pq = pytest.importorskip("pyarrow.parquet")
import jaxprof  # noqa: E402
from jaxprof.parquet_export import host_inputs  # noqa: E402

import ops_check as oc  # noqa: E402

PAGE = oc.ROOT / "docs" / "tables.md"
# Every table of a profile, and the export's own hosts table.
TABLES = len(jaxprof.load(oc.DATA_DIR / "jax_cpu_8dev").tables()) + 1


def env_with_package():
    env = dict(os.environ, JAXPROF_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(jaxprof.__file__).parent.parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
    return env


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, jaxprof_bin):
    return oc.make_hosts(tmp_path_factory.mktemp("hosts"), jaxprof_bin, "--hosts", "4",
                         "--host-mb", "0.3", "--slow", "1", timeout=300)


@pytest.fixture(scope="module")
def exported(run_dir, tmp_path_factory, jaxprof_bin):
    """The run exported by the command (one process, host by host)."""
    out = tmp_path_factory.mktemp("export") / "tables"
    proc = subprocess.run([str(jaxprof_bin), "export", "--parquet", str(out), str(run_dir)],
                          capture_output=True, text=True, env=env_with_package(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}: {TABLES} tables of 4 hosts" in proc.stderr
    return out


def per_host_tables(run_dir):
    """{host: {table: Profile.table of the host's file alone}}."""
    out = {}
    for host, path in host_inputs(run_dir):
        p = jaxprof.load(path)
        out[host] = {name: p.table(name, include_warmup=True) for name in p.tables()}
        out[host]["hosts"] = p.base_ns
    return out


def test_tables_read_back_equal_each_host(run_dir, exported):
    tables = per_host_tables(run_dir)
    assert sorted(tables) == ["host0000", "host0001", "host0002", "host0003"]
    for name in jaxprof.load(host_inputs(run_dir)[0][1]).tables():
        # Every table with a duration_ps column: its sums are compared per host.
        timed = "duration_ps" in tables["host0000"][name].column_names
        sums = "sum(duration_ps)" if timed else "0"
        got = duckdb.sql(
            f"SELECT host, count(*), {sums} FROM read_parquet('{exported}/{name}/*/*.parquet', "
            "hive_partitioning = true) GROUP BY host ORDER BY host").fetchall()
        want = []
        for host, t in sorted(tables.items()):
            total = 0 if not timed else \
                sum(v for v in t[name]["duration_ps"].to_pylist() if v is not None)
            if t[name].num_rows:  # an empty file is read back as no group
                want.append((host, t[name].num_rows, total))
        assert [(h, n, int(s or 0)) for h, n, s in got] == want, name
        for host, t in tables.items():
            # The file is the table itself, less the host column (the partition key).
            f = pq.read_table(exported / name / f"host={host}" / "part.parquet")
            expect = t[name].drop_columns(["host"]) if "host" in t[name].column_names \
                else t[name]
            assert f.equals(expect, check_metadata=True), (name, host)


def test_dask_dataframe_reads_the_partitions(run_dir, exported):
    dd = pytest.importorskip("dask.dataframe")
    tables = per_host_tables(run_dir)
    df = dd.read_parquet(str(exported / "device_ops"))
    got = df.groupby("host", observed=True)["duration_ps"].agg(["count", "sum"]).compute()
    for host, t in tables.items():
        ops = t["device_ops"]
        assert int(got.loc[host, "count"]) == ops.num_rows
        assert int(got.loc[host, "sum"]) == sum(ops["duration_ps"].to_pylist())


def test_hosts_table_puts_hosts_on_the_runs_clock(run_dir, exported):
    # Loaded together, the hosts share one time zero (the earliest host's): each host's start
    # times shifted by its base_ns's distance from it are the multi-host profile's.
    together = jaxprof.load(run_dir).table("device_ops", include_warmup=True)
    want = duckdb.sql("SELECT host, sum(start_ps) FROM together GROUP BY 1 ORDER BY 1").fetchall()
    got = duckdb.sql(
        f"WITH h AS (SELECT host, base_ns - min(base_ns) OVER () AS shift "
        f"FROM read_parquet('{exported}/hosts/*/*.parquet', hive_partitioning = true)) "
        f"SELECT host, sum(start_ps + shift * 1000) FROM read_parquet("
        f"'{exported}/device_ops/*/*.parquet', hive_partitioning = true) JOIN h USING (host) "
        "GROUP BY 1 ORDER BY 1").fetchall()
    assert [(h, int(s)) for h, s in got] == [(h, int(s)) for h, s in want]


def files_of(directory):
    return {p.relative_to(directory): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file()}


def test_dask_writes_the_same_files(run_dir, exported, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        out = jaxprof.distributed.export_parquet(run_dir, tmp_path / "dask", client=client)
        assert out["hosts"] == ["host0000", "host0001", "host0002", "host0003"]
        bad = oc.BAD_FIXTURES / "tpu_inference_utf8_mangled.xplane.pb"
        if bad.is_file():
            with pytest.raises(Exception, match=re.escape(str(bad))):
                jaxprof.distributed.export_parquet([bad], tmp_path / "bad", client=client)
    finally:
        client.close()
        cluster.close()
    dask_files, one_files = files_of(tmp_path / "dask"), files_of(exported)
    assert sorted(dask_files) == sorted(one_files)
    assert len(one_files) == TABLES * 4
    for name, data in one_files.items():
        assert dask_files[name] == data, name


def test_python_api_equals_the_command(run_dir, exported, tmp_path):
    out = jaxprof.export_parquet(run_dir, tmp_path / "api", hosts=["host0001"])
    assert out["hosts"] == ["host0001"]
    got = files_of(tmp_path / "api")
    assert got and all(data == (exported / name).read_bytes() for name, data in got.items())


def test_threads_write_the_same_files(run_dir, exported, tmp_path):
    # The command's default is one thread per core; one thread, and more threads than hosts,
    # give the same bytes.
    for threads in (1, 8):
        out = jaxprof.export_parquet(run_dir, tmp_path / f"t{threads}", threads=threads)
        assert out["hosts"] == ["host0000", "host0001", "host0002", "host0003"]
        assert files_of(tmp_path / f"t{threads}") == files_of(exported)
    with pytest.raises(jaxprof.errors.InvalidOptionError, match="threads must be 1 or more"):
        jaxprof.export_parquet(run_dir, tmp_path / "t0", threads=0)


def test_files_encode_integers_as_deltas_and_strings_as_dictionaries(exported):
    pq = pytest.importorskip("pyarrow.parquet")
    meta = pq.ParquetFile(next((exported / "host_ranges").glob("*/part.parquet"))).metadata
    chunks = {meta.schema.column(i).name: meta.row_group(0).column(i)
              for i in range(meta.num_columns)}
    assert "DELTA_BINARY_PACKED" in chunks["start_ps"].encodings
    assert "RLE_DICTIONARY" in chunks["name"].encodings
    assert chunks["start_ps"].statistics is not None and chunks["name"].statistics is None


def test_bad_input_names_the_file(jaxprof_bin, run_dir, tmp_path):
    bad = oc.BAD_FIXTURES / "tpu_inference_utf8_mangled.xplane.pb"
    if not bad.is_file():
        pytest.skip("no damaged fixture")
    good = host_inputs(run_dir)[0][1]
    proc = subprocess.run([str(jaxprof_bin), "export", "--parquet", str(tmp_path / "out"), good,
                           str(bad)], capture_output=True, text=True, env=env_with_package())
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "Traceback" not in proc.stderr
    # A directory that holds files already is refused, as are flags of the trace export.
    for args, says in (([str(tmp_path / "out"), good], "not empty"),
                       ([str(tmp_path / "x"), good, "--steps", "1"], "--steps"),
                       ([str(tmp_path / "y"), str(tmp_path / "missing.xplane.pb")],
                        "missing.xplane.pb")):
        proc = subprocess.run([str(jaxprof_bin), "export", "--parquet", *args],
                              capture_output=True, text=True, env=env_with_package())
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr


def test_cross_host_query_of_the_page(run_dir, exported, jaxprof_bin):
    query, shown = re.search(r'<!-- cross-host query -->\n```python\n.*?duckdb\.sql\("""\n'
                             r'(.*?)"""\).*?```\n\n```text\n(.*?)```', PAGE.read_text(),
                             re.S).groups()
    query = query.replace("tables/", f"{exported}/")
    assert str(duckdb.sql(query)).rstrip("\n") + "\n" == shown
