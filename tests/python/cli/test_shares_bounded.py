"""No command prints a share above 100%: where events are counted more than once (lines of one
device overlapping, or several GPUs' work read as one device, as the older nsys-jax layout was
before each launching thread became a GPU) the share is clipped to 1 with one warning."""
from __future__ import annotations

import io
import json
import subprocess
import zipfile

import pytest

COMMANDS = [["summary"], ["ops"], ["ops", "--group-by", "kernel"], ["ops", "--group-by", "module"],
            ["ops", "--group-by", "category"], ["ops", "--include-warmup", "--include-autotuning"],
            ["timeline"], ["modules"], ["collectives"], ["kernels"], ["flame"], ["hosts"]]


def shares(x, path=""):
    """Every number under a key naming a share, with where it is."""
    if isinstance(x, dict):
        for k, v in x.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and "share" in k:
                yield f"{path}.{k}", v
            yield from shares(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from shares(v, f"{path}[{i}]")


def run_all(jaxprof_bin, path):
    """{command: (json, stderr)} over COMMANDS."""
    out = {}
    for c in COMMANDS:
        r = subprocess.run([str(jaxprof_bin), c[0], str(path), *c[1:], "--format", "json"],
                           capture_output=True, text=True, check=True)
        out[" ".join(c)] = (json.loads(r.stdout), r.stderr)
    return out


def assert_bounded(results):
    for command, (doc, _) in results.items():
        for where, v in shares(doc):
            assert 0 <= v <= 1.0, (command, where, v)
        for d in doc.get("devices", []):
            if "busy_ns" in d and "span_ns" in d:
                assert d["busy_ns"] <= d["span_ns"], (command, d.get("device"))


def overlapping_trace(path):
    """One GPU, two streams running the same op at the same times: its self time is twice the
    device's busy time."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:GPU:0"}}]
    for tid in (1, 2):
        ev.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid,
                   "args": {"name": f"Stream #{tid}"}})
        for k in range(3):
            ev.append({"ph": "X", "name": "fusion.1", "pid": 1, "tid": tid, "ts": k * 200,
                       "dur": 150, "args": {"hlo_op": "fusion.1", "hlo_module": "jit_f",
                                            "program_id": "1"}})
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def test_overlapping_streams_clip_with_a_warning(jaxprof_bin, tmp_path):
    results = run_all(jaxprof_bin, overlapping_trace(tmp_path / "overlap.trace.json"))
    assert_bounded(results)
    ops, err = results["ops"]
    assert ops["devices"][0]["groups"][0]["share"] == 1.0
    assert "1 share above 100% shown as 100%" in err and "200.0%" in err
    assert any("above 100%" in w for w in ops["warnings"])
    summary, err = results["summary"]
    assert summary["ops"][0]["share"] == 1.0 and "200.0%" in err


def test_older_nsys_jax_layout(jaxprof_bin, archives, tmp_path):
    """The case that printed 100.1%: an older-layout archive driving several GPUs from one
    process, built as in tests/python/formats/test_nsys_jax_older_layout.py (here process 0's
    ranges on two threads)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    trace = "nvtx_gpu_proj_trace/trace.parquet"
    proc0 = archives[0]
    with zipfile.ZipFile(proc0) as z:
        t = pq.read_table(io.BytesIO(z.read(trace)))
    d = t.to_pydict()
    offset = max(x for x in d["RangeId"] if x is not None) + 1
    moved = dict(d)
    for key in ("RangeId", "ParentId"):
        moved[key] = [None if x is None else x + offset for x in d[key]]
    moved["TID"] = [x + 1000 for x in d["TID"]]
    buf = io.BytesIO()
    pq.write_table(pa.table({k: d[k] + moved[k] for k in d}, schema=t.schema), buf)
    dest = tmp_path / "older.zip"
    drop = ("thread-metadata.parquet", "device-metadata.parquet")
    with zipfile.ZipFile(proc0) as z, zipfile.ZipFile(dest, "w") as out:
        for info in z.infolist():
            if info.filename not in drop:
                out.writestr(info, buf.getvalue() if info.filename == trace else z.read(info))
    results = run_all(jaxprof_bin, dest)
    assert_bounded(results)
    timeline, _ = results["timeline"]
    assert len(timeline["devices"]) == 2
    assert not any("above 100%" in err for _, err in results.values())
