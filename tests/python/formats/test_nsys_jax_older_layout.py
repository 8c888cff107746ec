"""The mid-2024 nsys-jax layout: no `thread-metadata.parquet` (nor `device-metadata.parquet`),
only the GPU trace, the push/pop CSV and the HLO dumps. As nsys-jax's loader of that time did,
each thread that launched thunks is one GPU (in thread-id order within each program).

The archives are built from the shared fixtures: process 0 with the metadata members dropped,
and a one-process, two-GPU archive whose trace holds process 0's ranges on its main thread and
process 1's on another thread of the same process (range ids moved past process 0's)."""
from __future__ import annotations

import io
import json
import subprocess
import zipfile

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

TRACE = "nvtx_gpu_proj_trace/trace.parquet"
METADATA = ("thread-metadata.parquet", "device-metadata.parquet")


def rewrite(src, dest, drop=(), replace=None):
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dest, "w") as out:
        for info in z.infolist():
            if info.filename in drop:
                continue
            data = (replace or {}).get(info.filename)
            out.writestr(info, z.read(info) if data is None else data)
    return dest


def trace_table(archive):
    with zipfile.ZipFile(archive) as z:
        return pq.read_table(io.BytesIO(z.read(TRACE)))


def two_gpu_trace(proc0, proc1):
    """Process 1's ranges moved onto a second thread of process 0."""
    t0, t1 = trace_table(proc0), trace_table(proc1)
    d0, d1 = t0.to_pydict(), t1.to_pydict()
    offset = max(x for x in d0["RangeId"] if x is not None) + 1
    pid, tid = d0["PID"][0], max(d0["TID"]) + 1000
    for key in ("RangeId", "ParentId"):
        d1[key] = [None if x is None else x + offset for x in d1[key]]
    d1["TID"] = [tid + (t - p) for t, p in zip(d1["TID"], d1["PID"])]
    d1["PID"] = [pid] * len(d1["PID"])
    buf = io.BytesIO()
    pq.write_table(pa.table({k: d0[k] + d1[k] for k in d0}, schema=t0.schema), buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def older(archives, tmp_path_factory):
    d = tmp_path_factory.mktemp("older")
    proc0, proc1 = archives
    (d / "one").mkdir()
    one = rewrite(proc0, d / "one" / proc0.name, drop=METADATA)  # same name: same host name
    two = rewrite(proc0, d / "two_gpus.zip", drop=METADATA,
                  replace={TRACE: two_gpu_trace(proc0, proc1)})
    return {"one": one, "two": two}


def cli(jaxprof_bin, command, *args):
    r = subprocess.run([str(jaxprof_bin), command, *map(str, args), "--format", "json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout), r.stderr


def op_totals(ops_json):
    """{device: {(op, module): (count, total_ns)}} of `ops --format json`."""
    return {d["device"]: {(g["name"], g["module"]): (g["count"], g["total_ns"])
                          for g in d["groups"]} for d in ops_json["devices"]}


def leaf_thunk_ns(archive):
    """The archive's leaf thunk time, straight from the table: thunks with no thunk below them
    and an XlaModule range above them."""
    d = trace_table(archive).to_pydict()
    rows = {int(r): i for i, r in enumerate(d["RangeId"]) if r is not None}
    name, parent = d["Name"], d["ParentId"]

    def ancestors(i):
        while parent[i] is not None and int(parent[i]) in rows:
            i = rows[int(parent[i])]
            yield i
    thunks = [i for i in rows.values() if name[i].startswith("TSL:Thunk:")]
    with_child = {a for i in thunks for a in ancestors(i) if name[a].startswith("TSL:Thunk:")}
    return sum(d["Projected Duration"][i] for i in thunks if i not in with_child
               and any(name[a].startswith("TSL:XlaModule:") for a in ancestors(i)))


ALL = ("--include-warmup", "--include-autotuning")


def test_one_gpu_per_launching_thread(jaxprof_bin, archives, older):
    ops, err = cli(jaxprof_bin, "ops", older["two"], *ALL)
    assert "no member thread-metadata.parquet (the older nsys-jax layout): 2 GPU(s)" in err
    assert "GPU names and capabilities unknown" in err
    got = op_totals(ops)
    assert sorted(got) == ["/device:GPU:0", "/device:GPU:1"]
    # Each GPU holds exactly what its own process's archive (read with thread names) holds.
    for device, archive in zip(sorted(got), archives):
        want = op_totals(cli(jaxprof_bin, "ops", archive, *ALL)[0])
        assert got[device] == next(iter(want.values()))
    # The ops' total is the archive's leaf thunk time.
    total = sum(ns for d in got.values() for _, ns in d.values())
    assert total == leaf_thunk_ns(older["two"]) > 2e9
    for d in ops["devices"]:
        assert all(g["share"] <= 1.0 for g in d["groups"]), d["device"]
        assert d["busy_ns"] <= d["span_ns"]


def test_timeline_and_modules_per_gpu(jaxprof_bin, archives, older):
    # With everything counted: what is set apart for compiling follows the host ranges, and
    # the two-GPU archive has only process 0's.
    timeline, _ = cli(jaxprof_bin, "timeline", older["two"], *ALL)
    busy = {d["device"]: d["busy_ns"] for d in timeline["devices"]}
    alone = [cli(jaxprof_bin, "timeline", a, *ALL)[0]["devices"][0]["busy_ns"] for a in archives]
    assert [busy["/device:GPU:0"], busy["/device:GPU:1"]] == alone
    # Modules run on both GPUs, as when the two processes' archives are read together.
    def runs(*paths):
        out = cli(jaxprof_bin, "modules", *paths, *ALL)[0]["modules"]
        return {(m["name"], m["program_id"]): (m["devices"], m["executions"]) for m in out}
    got = runs(older["two"])
    assert got == runs(*archives)
    assert got[("pjit__wrapped_step_fn", 40)][0] == 2


def test_one_gpu_archive_reads_as_before(jaxprof_bin, proc0, older):
    """One launching thread: the same device and figures as with the metadata (a warning says
    the global id is assumed)."""
    for command in ("ops", "timeline", "modules", "collectives", "summary"):
        got, err = cli(jaxprof_bin, command, older["one"])
        want, _ = cli(jaxprof_bin, command, proc0)
        for out in (got, want):
            out.pop("input", None)
            out.pop("warnings", None)
        assert got == want, command
    assert "1 GPU(s) taken from the 1 thread(s)" in err


def test_missing_host_ranges_and_dumps_are_warned(jaxprof_bin, proc0, tmp_path):
    with zipfile.ZipFile(proc0) as z:
        drop = [n for n in z.namelist()
                if n.startswith("dump/") or n.startswith("report_nvtx_pushpop_trace")]
    path = rewrite(proc0, tmp_path / proc0.name, drop=drop)
    _, err = cli(jaxprof_bin, "ops", path)
    assert "(host NVTX ranges): no compile phases (compile)" in err
    assert "no HLO dump" in err and "collectives without message sizes" in err
