"""The tables (Profile.table, Profile.sql) against the commands: every figure a command reports is
recomputed from the tables, to the picosecond, on the bundled capture (its xplane and its Chrome
trace) and every shared fixture."""
from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
jaxprof = pytest.importorskip("jaxprof")

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "tests" / "data" / "jax_cpu_8dev"
FIXTURES = ["xplane/mi300x_jax_gemm.xplane.pb", "xplane/mi300x_jax_elementwise.xplane.pb",
            "xplane/mi300x_jax_conv.xplane.pb", "xplane/tpu_4chip_inference.xplane.pb",
            "xplane/tf_v100_8gpu_training.xplane.pb", "nsys-jax/pax_fsdp4_4proc_proc0.zip",
            "nsys-jax/pax_fsdp4_4proc_proc1.zip"]


def profile_paths(shared: Path | None):
    yield BUNDLED
    if shared is not None:
        for f in FIXTURES:
            if (shared / f).is_file():
                yield shared / f


# The bundled capture's Chrome trace (XLA's exporter writes it beside the xplane): the tables
# from trace JSON hold the commands' figures as well.
BUNDLED_TRACE = next(BUNDLED.glob("plugins/profile/*/*.trace.json.gz"))


@pytest.fixture(scope="module", params=["bundled", "bundled-trace-json"] + FIXTURES)
def path(request, shared_fixtures_or_none):
    if request.param == "bundled":
        return BUNDLED
    if request.param == "bundled-trace-json":
        return BUNDLED_TRACE
    if shared_fixtures_or_none is None or not (shared_fixtures_or_none / request.param).is_file():
        pytest.skip("shared fixture not found")
    return shared_fixtures_or_none / request.param


@pytest.fixture(scope="module")
def shared_fixtures_or_none():
    from ops_check import SHARED_FIXTURES
    return SHARED_FIXTURES if SHARED_FIXTURES.is_dir() else None


def cli_json(binary: Path, *args) -> dict:
    out = subprocess.run([str(binary), *map(str, args), "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out, parse_float=Decimal)


def ps(ns) -> int:
    """A JSON time (nanoseconds, exact to the picosecond) as integer picoseconds."""
    v = Decimal(ns) * 1000
    assert v == v.to_integral_value(), ns
    return int(v)


def test_device_ops_sum_to_ops(path, jaxprof_bin):
    p = jaxprof.load(path)
    t = p.table("device_ops")
    ops = cli_json(jaxprof_bin, "ops", path)
    want = {}
    for d in ops["devices"]:
        for g in d["groups"]:
            want[(d["device"], g.get("module", ""), g["name"])] = (
                ps(g["total_ns"]), ps(g["self_ns"]), int(g["count"]))
    got = defaultdict(lambda: [0, 0, 0])
    cols = t.select(["device", "module", "hlo_op", "name", "duration_ps", "self_ps"]).to_pydict()
    for dev, mod, hlo, name, dur, self_ in zip(*cols.values()):
        acc = got[(dev, mod or "", hlo if hlo is not None else name)]
        acc[0] += dur
        acc[1] += self_
        acc[2] += 1
    assert {k: tuple(v) for k, v in got.items()} == want
    # The same through SQL, on the whole table (warm-up rows are in it, flagged).
    by_sql = p.sql("SELECT device, coalesce(module, '') AS module, coalesce(hlo_op, name) AS op, "
                   "sum(duration_ps)::BIGINT AS total, sum(self_ps)::BIGINT AS self "
                   "FROM device_ops WHERE NOT warmup AND NOT autotuning GROUP BY ALL").to_pylist()
    assert {(r["device"], r["module"], r["op"]): (r["total"], r["self"]) for r in by_sql} == \
        {k: v[:2] for k, v in want.items()}


def test_executions_and_steps_match_modules(path, jaxprof_bin):
    p = jaxprof.load(path)
    modules = cli_json(jaxprof_bin, "modules", path)
    ex = p.table("module_executions", include_warmup=True).to_pylist()
    steady = defaultdict(int)
    counts = defaultdict(lambda: [0, 0])
    for r in ex:
        key = (r["module"] or "", r["program_id"])
        counts[key][0] += 1
        if r["role"] == "steady":
            steady[key] += r["duration_ps"]
        elif r["role"] == "warmup":
            counts[key][1] += 1
    for m in modules["modules"]:
        key = (m["name"], m.get("program_id"))
        assert counts[key][0] == m["executions"], key
        assert counts[key][1] == m["warmup_executions"], key
        if counts[key][0] > counts[key][1]:
            assert steady[key] == ps(m["total_ns"]), key
    # device_ops rows name their execution, and each execution holds as many rows as op events.
    ops = p.table("device_ops", include_warmup=True)
    per = defaultdict(int)
    for x in ops["execution"].to_pylist():
        if x is not None:
            per[x] += 1
    assert all(per[r["execution"]] == r["op_events"] for r in ex)

    steps = p.table("steps", include_warmup=True).to_pylist()
    want = modules["steps"]["steps"]
    assert len(steps) == len(want)
    for s, w in zip(steps, want):
        assert s["step"] == w["number"]
        assert (s["start_ps"], s["end_ps"]) == (ps(w["start_ns"]), ps(w["end_ns"]))
        assert s["device_ps"] == ps(w["device_ns"])
        assert s["executions"] == w["executions"]
        assert (s["warmup"], s["compiling"]) == (w["warmup"], w["compiling"])


def test_collective_waits_match_instances(path, jaxprof_bin):
    p = jaxprof.load(path)
    data = cli_json(jaxprof_bin, "collectives", path, "--instances")
    rows = p.table("collectives").to_pylist()
    by_instance = {}
    for r in rows:
        by_instance.setdefault(r["instance"], r)
        assert r["device"] is not None
    assert len(by_instance) == len(data["instances"])
    assert sum(r["wait_ps"] for r in by_instance.values()) == \
        sum(ps(i["wait_ns"]) for i in data["instances"])
    got = sorted((r["module"] or "", r["name"], r["index"], r["wait_ps"], r["devices"])
                 for r in by_instance.values())
    want = sorted((i["module"], i["name"], i["index"], ps(i["wait_ns"]), i["devices"])
                  for i in data["instances"])
    assert got == want
    assert len(rows) == sum(i["devices"] for i in data["instances"])


def test_compiles_match_compile(path, jaxprof_bin):
    p = jaxprof.load(path)
    data = cli_json(jaxprof_bin, "compile", path)
    rows = p.table("compiles").to_pylist()
    assert [(r["start_ps"], r["wall_ps"], r["module"] or "") for r in rows] == \
        [(ps(c["start_ns"]), ps(c["wall_ns"]), c["module"]) for c in data["events"]]
    assert sum(r["wall_ps"] for r in rows) == ps(data["wall_ns"])
    phases = [c for c in p.table("compiles").column_names if c.endswith("_ps") and c not in
              ("start_ps", "wall_ps", "worker_busy_ps")]
    assert all(sum(r[c] for c in phases) == r["wall_ps"] for r in rows)


def test_kernels_match_kernels(path, jaxprof_bin):
    # Every launch `kernels` counts, per kernel and launch configuration: count, total time and
    # the configuration it parses from kernel_details.
    data = cli_json(jaxprof_bin, "kernels", path, "--top", "0")
    rows = jaxprof.load(path).table("kernels").to_pylist()
    assert len(rows) == data["kernel_events"]
    assert sum(r["duration_ps"] for r in rows) == ps(data["total_ns"])
    got = defaultdict(lambda: [0, 0])
    for r in rows:
        g = got[(r["name"], r["details"] or "")]
        g[0] += 1
        g[1] += r["duration_ps"]
        got.setdefault(("config", r["details"] or ""), (
            [r["grid_x"], r["grid_y"], r["grid_z"]] if r["grid_x"] is not None else None,
            [r["block_x"], r["block_y"], r["block_z"]] if r["block_x"] is not None else None,
            r["registers"], r["shared_bytes"], r["occupancy_pct"]))
    want = {}
    for k in data["kernels"]:
        for c in k["configs"]:
            want[(k["name"], c["kernel_details"])] = [c["count"], ps(c["total_ns"])]
            occupancy = None if c["occupancy_pct"] is None else float(c["occupancy_pct"])
            assert got[("config", c["kernel_details"])] == (
                c["grid"], c["block"], c["registers"], c["shared_bytes"], occupancy)
    assert {k: v for k, v in got.items() if k[0] != "config"} == want


def test_memory_matches_memory(path, jaxprof_bin):
    # Per allocator: its events, first and last, and the figures `memory` reads off them (bytes
    # in use at the start, the end and the peak, the peak with reserved, the allocator's own).
    data = cli_json(jaxprof_bin, "memory", path)
    rows = jaxprof.load(path).table("memory").to_pylist()
    by = defaultdict(list)
    for r in rows:
        by[(r["host"], r["allocator"])].append(r)
    want = [(d["host"], d["device"], d["memory_space"], a) for d in data["devices"]
            for a in d["allocators"]]
    assert sorted(by) == sorted((h, a["allocator"]) for h, _, _, a in want)
    for host, device, space, a in want:
        events = by[(host, a["allocator"])]
        assert {(r["device"] or "", r["memory_space"] or "") for r in events} == \
            {(device or "", space or "")}
        assert [sum(r["event"] == k for r in events) for k in ("allocation", "deallocation")] == \
            [a["allocations"], a["deallocations"]]
        assert (events[0]["time_ps"], events[-1]["time_ps"]) == (ps(a["first_ns"]),
                                                                 ps(a["last_ns"]))
        in_use = [r["bytes_in_use"] for r in events if r["bytes_in_use"] is not None]
        assert (max(in_use, default=None), in_use[0] if in_use else None,
                in_use[-1] if in_use else None) == \
            (a["peak_bytes_in_use"], a["start_bytes_in_use"], a["end_bytes_in_use"])
        if a["peak_bytes_with_reserved"] is not None:
            assert max(r["bytes_in_use"] + (r["bytes_reserved"] or 0) for r in events
                       if r["bytes_in_use"] is not None) == a["peak_bytes_with_reserved"]
        peaks = [r["peak_bytes_in_use"] for r in events if r["peak_bytes_in_use"] is not None]
        assert max(peaks, default=None) == a["lifetime_peak_bytes_in_use"]


def test_bundled_filters_and_sql():
    p = jaxprof.load(BUNDLED)
    assert p.tables()[0] == "device_ops"
    whole = p.table("device_ops", include_warmup=True)
    steady = p.table("device_ops")
    assert steady.num_rows < whole.num_rows  # the warm-up executions are set apart
    cpu0 = p.table("device_ops", device="CPU:0")
    assert set(cpu0["device"].to_pylist()) == {"/device:CPU:0"}
    assert p.table("device_ops", device="re:CPU:[01]$").num_rows == 2 * cpu0.num_rows
    one = p.table("device_ops", steps=1, include_warmup=True)
    assert one.num_rows > 0 and set(one["step"].to_pylist()) == {1}
    # Strings are dictionary columns; nulls where nothing is known.
    assert pa.types.is_dictionary(whole.schema.field("hlo_op").type)
    assert whole.schema.field("duration_ps").metadata[b"unit"] == b"ps"
    n = p.sql("SELECT count(*) AS n FROM device_ops").to_pylist()[0]["n"]
    assert n == whole.num_rows
    with pytest.raises(duckdb.Error):
        p.sql("SELECT nope FROM device_ops")
    with pytest.raises(jaxprof.InvalidOptionError):
        p.table("nope")
    hr = p.table("host_ranges")
    parents = hr.filter(pa.compute.is_valid(hr["parent"]))
    assert parents.num_rows > 0


def _cli(binary: Path, *args, check=True):
    import os
    import sys

    env = dict(os.environ, JAXPROF_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(jaxprof.__file__).parent.parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          env=env, check=check)


def test_cli_sql_and_tables(jaxprof_bin, tmp_path):
    q = ("SELECT device, count(*) AS n, sum(duration_ps) AS total_ps FROM device_ops "
         "WHERE NOT warmup GROUP BY device ORDER BY device")
    rows = json.loads(_cli(jaxprof_bin, "sql", BUNDLED, q, "--format", "json").stdout)
    ops = cli_json(jaxprof_bin, "ops", BUNDLED)
    assert [r["device"] for r in rows] == [d["device"] for d in ops["devices"]]
    for r, d in zip(rows, ops["devices"]):
        assert type(r["total_ps"]) is int and type(r["n"]) is int  # integers stay integers
        assert r["total_ps"] == sum(ps(g["total_ns"]) for g in d["groups"])
        assert r["n"] == d["events"]
    csv = _cli(jaxprof_bin, "sql", BUNDLED, q, "--format", "csv").stdout.splitlines()
    assert csv[0] == '"device","n","total_ps"' and len(csv) == len(rows) + 1
    out = tmp_path / "r.parquet"
    _cli(jaxprof_bin, "sql", BUNDLED, q, "--format", "parquet", "-o", out)
    import pyarrow.parquet as pq
    assert pq.read_table(out).num_rows == len(rows)
    table = _cli(jaxprof_bin, "sql", BUNDLED, q).stdout
    assert table.splitlines()[0].split() == ["device", "n", "total_ps"]

    bad = _cli(jaxprof_bin, "sql", BUNDLED, "SELECT nope FROM device_ops", check=False)
    assert bad.returncode == 2 and "nope" in bad.stderr and bad.stdout == ""

    listing = json.loads(_cli(jaxprof_bin, "tables", BUNDLED, "--format", "json").stdout)
    assert [t["name"] for t in listing] == jaxprof.load(BUNDLED).tables()
    ops_table = listing[0]
    assert ops_table["rows"] == jaxprof.load(BUNDLED).table("device_ops",
                                                            include_warmup=True).num_rows
    assert {"name": "duration_ps", "type": "int64"}.items() <= ops_table["columns"][12].items()


def test_cli_names_what_to_install(jaxprof_bin):
    import os

    env = dict(os.environ, JAXPROF_PYTHON="/nonexistent/python3")
    r = subprocess.run([str(jaxprof_bin), "tables", str(BUNDLED)], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 2 and "jaxprof[sql]" in r.stderr


BUSY_SQL = """
WITH ops AS (
  SELECT device, timeline_start_ps AS s, timeline_start_ps + timeline_duration_ps AS e
  FROM device_ops WHERE NOT warmup AND NOT autotuning),
runs AS (
  SELECT device, s, e, max(e) OVER (PARTITION BY device ORDER BY s, e
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
  FROM ops)
SELECT device, sum(e - s)::BIGINT AS busy_ps FROM (
  SELECT device, min(s) AS s, max(e) AS e FROM (
    SELECT device, s, e, sum(CASE WHEN before IS NULL OR s > before THEN 1 ELSE 0 END)
                           OVER (PARTITION BY device ORDER BY s, e) AS run FROM runs)
  GROUP BY device, run)
GROUP BY device
"""


def test_busy_union_matches_timeline(path, jaxprof_bin):
    """The busy time of the recipes (docs/tables.md), a union of intervals in SQL, is the
    timeline's."""
    p = jaxprof.load(path)
    got = {r["device"]: r["busy_ps"] for r in p.sql(BUSY_SQL).to_pylist()}
    timeline = cli_json(jaxprof_bin, "timeline", path)
    want = {d["device"]: ps(d["busy_ns"]) for d in timeline["devices"]
            if d["events"]}
    assert got == want


def _filtered_by_pyarrow(table, device=None, steps=None, include_warmup=False):
    """What the filters mean, written with pyarrow.compute over the unfiltered table: the
    oracle for the rows the C++ drops in place."""
    import pyarrow.compute as pc
    names = set(table.column_names)
    mask = pa.array([True] * table.num_rows, pa.bool_())
    if device is not None and "device" in names:
        col = table["device"].cast("string")
        m = pc.match_substring_regex(col, device[3:]) if device.startswith("re:") \
            else pc.match_substring(col, device)
        mask = pc.and_(mask, pc.fill_null(m, False))
    if steps is not None and "step" in names:
        wanted = pa.array([steps] if isinstance(steps, int) else list(steps), pa.int64())
        mask = pc.and_(mask, pc.fill_null(pc.is_in(table["step"], value_set=wanted), False))
    if not include_warmup:
        for flag in ("warmup", "autotuning"):
            if flag in names:
                mask = pc.and_(mask, pc.invert(pc.fill_null(table[flag], False)))
        if "role" in names:
            mask = pc.and_(mask, pc.fill_null(pc.equal(table["role"].cast("string"), "steady"),
                                              False))
    return table.filter(mask)


def test_filters_drop_the_rows_pyarrow_would(path):
    p = jaxprof.load(path)
    cases = [{}, {"include_warmup": True, "device": "0"}, {"device": "re:[02]$"},
             {"steps": [1, 2]}, {"steps": 3, "include_warmup": True, "device": "re:."}]
    for name in p.tables():
        whole = p.table(name, include_warmup=True)
        for kw in cases:
            got = p.table(name, **kw)
            want = _filtered_by_pyarrow(whole, **kw)
            assert got.equals(want), (path, name, kw, got.num_rows, want.num_rows)
