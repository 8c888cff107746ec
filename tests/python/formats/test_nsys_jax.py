"""jaxprof on nsys-jax archives: the CLI reproduces the process-0 reference figures (from the
nsys-jax rules), including compile time from the host NVTX ranges, and, where pyarrow is
installed, per-module thunk counts match an independent reading of the projected NVTX trace that
follows nsys-jax's own selection of innermost thunks."""
from __future__ import annotations

import collections
import io
import json
import subprocess
import zipfile

import pytest


def ops_json(jaxprof_bin, *args):
    # Every op event, the reference's count: autotuning and warm-up included.
    out = subprocess.run([str(jaxprof_bin), "ops", *map(str, args), "--format", "json",
                          "--include-autotuning", "--include-warmup"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_reference_figures_process0(jaxprof_bin, archives):
    d = ops_json(jaxprof_bin, archives[0], "--group-by", "module")
    (dev,) = d["devices"]
    assert dev["device"] == "/device:GPU:0"
    assert dev["events"] == 13827
    step = next(g for g in dev["groups"] if g.get("program_id") == 40)
    assert step["name"] == "pjit__wrapped_step_fn"
    assert step["count"] == 5 * 2610


def test_modules_keep_the_program_id(jaxprof_bin, archives):
    # Module ranges are named without the program id ("TSL:XlaModule:#hlo_module=NAME,
    # program_id=N#" gives the name only): it comes from the range itself.
    out = subprocess.run([str(jaxprof_bin), "modules", archives[0], "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    mods = json.loads(out)["modules"]
    step = next(m for m in mods if m["name"] == "pjit__wrapped_step_fn")
    assert step["program_id"] == 40
    # The reference's five runs: the first is warm-up, the mean is over the other four.
    runs_ns = [147966759, 143040768, 127312430, 127464524, 126859056]
    assert (step["executions"], step["warmup_executions"]) == (5, 1)
    assert step["warmup_total_ns"] == runs_ns[0]
    assert step["mean_ns"] == pytest.approx(sum(runs_ns[1:]) / 4, abs=1e-3)
    assert step["ops_per_execution"] == 2610


def test_two_processes(jaxprof_bin, archives):
    d = ops_json(jaxprof_bin, *archives)
    assert sorted(dev["device"] for dev in d["devices"]) == ["/device:GPU:0", "/device:GPU:1"]


def independent_thunk_counts(path):
    pq = pytest.importorskip("pyarrow.parquet")
    with zipfile.ZipFile(path) as z:
        rows = pq.read_table(io.BytesIO(z.read("nvtx_gpu_proj_trace/trace.parquet"))).to_pylist()
    rows = [r for r in rows if r["RangeId"] is not None]
    by_id = {int(r["RangeId"]): r for r in rows}

    def kind(r):
        n = r["Name"]
        return "module" if n.startswith("TSL:XlaModule:") else "thunk" if n.startswith("TSL:Thunk:") else ""

    has_child, module_of = set(), {}
    for r in rows:
        if kind(r) != "thunk":
            continue
        up = r["ParentId"]
        while up is not None and int(up) in by_id:
            p = by_id[int(up)]
            if kind(p) == "module":
                module_of[int(r["RangeId"])] = p["Name"]
                break
            if kind(p) == "thunk":
                has_child.add(int(up))
            up = p["ParentId"]
    counts = collections.Counter()
    for rid, name in module_of.items():
        if rid not in has_child:
            counts[name.split("hlo_module=")[1].split(",")[0].rstrip("#")] += 1
    return counts


def test_thunk_counts_match_independent_reading(jaxprof_bin, archives):
    expected = independent_thunk_counts(archives[0])
    d = ops_json(jaxprof_bin, archives[0], "--group-by", "module")
    got = collections.Counter()
    for g in d["devices"][0]["groups"]:
        got[g["name"]] += g["count"]
    assert got == expected
    assert sum(expected.values()) == 13827


def compile_json(jaxprof_bin, *args):
    out = subprocess.run([str(jaxprof_bin), "compile", *map(str, args), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_compile_reference_figures_process0(jaxprof_bin, archives):
    d = compile_json(jaxprof_bin, archives[0])
    assert d["compiles"] == 17
    assert d["wall_ns"] == 69388404880  # 69,388.405 ms of XlaCompile ranges
    assert sum(p["wall_ns"] for p in d["phases"]) == d["wall_ns"]
    step = next(e for e in d["events"] if e.get("program_id") == 40)
    assert step["module"] == "pjit__wrapped_step_fn"
    assert step["wall_ns"] == 51131029367  # 51,131.029 ms
    assert step["worker_threads"] == 4
    for e in d["events"]:
        assert sum(p["wall_ns"] for p in e["phases"]) == e["wall_ns"]


def xla_compile_walls(path):
    """The wall time of every XlaCompile range, read straight from the CSV with the stdlib."""
    import csv
    import lzma
    with zipfile.ZipFile(path) as z:
        text = lzma.decompress(z.read("report_nvtx_pushpop_trace.csv.xz")).decode()
    return [int(r["Duration (ns)"]) for r in csv.DictReader(io.StringIO(text))
            if r["Name"].startswith("TSL:XlaCompile:")]


def test_compile_matches_independent_reading(jaxprof_bin, archives):
    for path in archives:
        walls = xla_compile_walls(path)
        d = compile_json(jaxprof_bin, path)
        assert sorted(e["wall_ns"] for e in d["events"]) == sorted(walls)


def test_compile_passes_only(jaxprof_bin, archives):
    d = compile_json(jaxprof_bin, archives[0], "--passes-only")
    names = [p["name"] for p in d["passes"]]
    assert "priority-fusion" in names
    assert not any("program_id" in n or "module=" in n or n.startswith("Xla") for n in names)
    for e in d["events"]:
        assert all(s["phase"] == "hlo-passes" for s in e["steps"])


def test_compile_two_processes_summed_once(jaxprof_bin, archives):
    each = sum(compile_json(jaxprof_bin, p)["wall_ns"] for p in archives)
    assert compile_json(jaxprof_bin, *archives)["wall_ns"] == each
