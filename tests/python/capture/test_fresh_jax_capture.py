"""Capture new profiles with real JAX (CPU backend, 8 host devices) during the test run and check
jaxprof on them: against the independent oracle, and against what the program is known to do
(4 training steps sharded over 8 devices; two matmuls run 10 times, the 512x512 one slower)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ops_check as oc
import xplane_oracle as xo

jax = pytest.importorskip("jax", reason="jax is needed to capture profiles (pip install jax)")


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("capture")
    script = oc.ROOT / "tests" / "data" / "capture_cpu_profiles.py"
    proc = subprocess.run([sys.executable, str(script), "--out", str(out)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.mark.parametrize("group_by", ["hlo-op", "module", "kernel"])
def test_fresh_8_device_capture_matches_oracle(jaxprof_bin, captured, group_by):
    path = captured / "jax_cpu_8dev"
    got = oc.run_ops_json(jaxprof_bin, path, ["--group-by", group_by])
    oc.compare_ops(got, xo.ops(oc.oracle_devices(str(path)), group_by), group_by,
                   label=f"fresh capture --group-by {group_by}")


def test_fresh_8_device_capture_structure(jaxprof_bin, captured):
    got = oc.run_ops_json(jaxprof_bin, captured / "jax_cpu_8dev")
    devices = got["devices"]
    assert [d["device"] for d in devices] == [f"/device:CPU:{i}" for i in range(8)]
    for d in devices:
        names = {g["name"] for g in d["groups"]}
        # The data-parallel gradient is an all-reduce on every device.
        assert any(g["opcode"] == "all-reduce" for g in d["groups"]), names
        # Every op ran once per traced step (4 steps) of its module.
        counts = {g["count"] for g in d["groups"] if g["module"] == "jit_train_step"}
        assert counts == {4}, (d["device"], counts)
        assert 0 < d["busy_ns"] <= d["span_ns"]
        assert abs(float(sum(g["share"] for g in d["groups"])) - 1.0) < 1e-9


def test_fresh_matmul_capture_orders_the_big_matmul_first(jaxprof_bin, captured):
    got = oc.run_ops_json(jaxprof_bin, captured / "jax_cpu_matmul")
    (device,) = got["devices"]
    big, small = device["groups"][:2]
    assert big["count"] == small["count"] == 10
    assert big["op_name"].endswith("dot_general") and small["op_name"].endswith("dot_general")
    # 512^3 against 256^3 multiply-adds: the big one must take clearly longer.
    assert big["total_ns"] > 2 * small["total_ns"]


def test_fresh_8_device_capture_steps(jaxprof_bin, captured):
    import test_steps_oracle as ts

    got = ts.check_against_oracle(jaxprof_bin, captured / "jax_cpu_8dev")
    # The capture script runs 4 annotated steps; global_sse compiles in step 0.
    assert [s["number"] for s in got["steps"]] == [0, 1, 2, 3]
    assert [s["warmup"] for s in got["steps"]] == [True, False, False, False]
