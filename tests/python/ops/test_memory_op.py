"""Copies and fills are decided in one place (src/jaxprof/analysis/ops/memory_op.h) from what the
profile says about an event: its stats, its stream, its HLO opcode, and only then its name. Every
command agrees: timeline, summary, kernels, ops categories, export. And against TraceLens's
memcpy split (its JAX GPU analyser: names starting with copy/memcpy/memset) on real profiles."""
from __future__ import annotations

import gzip
import json
import subprocess
from collections import defaultdict

import pytest

import xplane_oracle as xo
from xspace_builder import SpaceBuilder

US = 1_000_000  # ps


def run(binary, *args):
    proc = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_json(binary, *args):
    return json.loads(run(binary, *args, "--format", "json"))


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """One GPU: a kernel stream, a MemcpyOther stream of CopyDeviceToDevice events carrying
    memcpy_details, a mixed stream with a copy whose name says nothing, and a Memset stream."""
    space = SpaceBuilder()
    gpu = space.plane("/device:GPU:0")
    kernel = gpu.event_md("fusion_kernel", stats={"hlo_module": "jit_f"})
    d2d = gpu.event_md("CopyDeviceToDevice")
    opaque = gpu.event_md("dev2dev")
    fill = gpu.event_md("fill")
    s1 = gpu.line(1, "Stream #1(Kernel)")
    s2 = gpu.line(2, "Stream #2(MemcpyOther)")
    s3 = gpu.line(3, "Stream #3(Kernel,MemcpyD2D)")
    s4 = gpu.line(4, "Stream #4(Memset)")
    gpu.event(s1, kernel, 0, 10 * US, stats={"hlo_op": "fusion.1",
                                             "kernel_details": "regs:32 grid:1,1,1 block:1,1,1"})
    gpu.event(s2, d2d, 20 * US, 5 * US, stats={"memcpy_details": "kind_dst:device size:1024"})
    gpu.event(s2, d2d, 25 * US, 5 * US, stats={"memcpy_details": "kind_dst:device size:1024"})
    gpu.event(s3, opaque, 40 * US, 5 * US, stats={"memcpy_details": "kind_dst:device size:64"})
    gpu.event(s4, fill, 50 * US, 2 * US)
    path = tmp_path_factory.mktemp("copies") / "copies.xplane.pb"
    space.write(path)
    return path


def test_timeline_counts_copies_as_memcpy(jaxprof_bin, copies):
    (d,) = run_json(jaxprof_bin, "timeline", copies)["devices"]
    assert d["compute_ns"] == 10_000
    assert d["memcpy_ns"] == 17_000 and d["memcpy_exposed_ns"] == 17_000
    assert d["span_ns"] == 52_000 and d["idle_ns"] == 52_000 - 27_000


def test_summary_exposed_memcpy(jaxprof_bin, copies):
    s = run_json(jaxprof_bin, "summary", copies)
    assert s["device"]["memcpy_exposed_ns"] == 17_000
    assert s["device"]["compute_ns"] == 10_000


def test_kernels_leave_copies_out(jaxprof_bin, copies):
    names = [k["name"] for k in run_json(jaxprof_bin, "kernels", copies)["kernels"]]
    assert names == ["fusion_kernel"]


def test_ops_category_says_memcpy(jaxprof_bin, copies):
    (d,) = run_json(jaxprof_bin, "ops", copies, "--group-by", "category")["devices"]
    cats = {g["name"]: g["total_ns"] for g in d["groups"]}
    assert cats["memcpy"] == 17_000
    by_op = run_json(jaxprof_bin, "ops", copies)["devices"][0]["groups"]
    assert {g["name"]: g["category"] for g in by_op}["dev2dev"] == "memcpy"


def test_export_category(jaxprof_bin, copies, tmp_path):
    out = tmp_path / "trace.json.gz"
    run(jaxprof_bin, "export", copies, "--perfetto", out)
    events = json.loads(gzip.decompress(out.read_bytes()))["traceEvents"]
    cats = {e["name"]: e["args"].get("category") for e in events
            if e.get("ph") == "X" and "args" in e and "category" in e.get("args", {})}
    assert cats["CopyDeviceToDevice"] == "memcpy"
    assert cats["dev2dev"] == "memcpy"
    assert cats["fill"] == "memcpy"


# --- TraceLens's split on the real profiles -----------------------------------------------------

def tracelens_memcpy_union(path):
    """Per GPU: the union of the stream events TraceLens's JAX analyser calls memcpy (the name,
    lowercased, starts with copy, memcpy or memset), in ps."""
    out = {}
    for d in xo.analyze_path(str(path)):
        iv = [(e.start_ps, e.end_ps) for e in d.events
              if e.kernel.lower().startswith(("copy", "memcpy", "memset"))]
        out[d.device] = xo.union_length(iv)
    return out


def test_tracelens_split_on_tf_v100(jaxprof_bin, xplane_fixtures):
    path = xplane_fixtures / "tf_v100_8gpu_training.xplane.pb"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    theirs = tracelens_memcpy_union(path)
    # TraceLens counts every event: compare with all work included (docs/steady-state.md).
    ours = {d["device"]: round(d["memcpy_ns"] * 1000)
            for d in run_json(jaxprof_bin, "timeline", path, "--include-autotuning",
                              "--include-warmup")["devices"]}
    assert any(v > 0 for v in theirs.values())
    assert ours == theirs


def test_tracelens_differs_on_rocm_copy_kernels(jaxprof_bin, xplane_fixtures):
    """The HIP runtime's __amd_rocclr_copyBuffer kernels: TraceLens's JAX analyser calls them
    compute (its PyTorch analyser reroutes them to memcpy); jaxprof calls them memcpy, by the
    copy opcode of their HLO op or, without one, by the name (docs/peers.md)."""
    path = xplane_fixtures / "mi300x_jax_gemm.xplane.pb"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    theirs = tracelens_memcpy_union(path)
    # TraceLens counts every event: compare with all work included (docs/steady-state.md).
    ours = {d["device"]: round(d["memcpy_ns"] * 1000)
            for d in run_json(jaxprof_bin, "timeline", path, "--include-autotuning",
                              "--include-warmup")["devices"]}
    assert all(v == 0 for v in theirs.values())
    assert sum(ours.values()) > 0
    copy_kernels = defaultdict(list)
    for d in xo.analyze_path(str(path)):
        for e in d.events:
            if "copybuffer" in e.kernel.lower():
                copy_kernels[d.device].append((e.start_ps, e.end_ps))
    for dev, iv in copy_kernels.items():
        assert ours[dev] == xo.union_length(iv)
