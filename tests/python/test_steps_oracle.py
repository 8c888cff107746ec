"""Per-step times of `jaxprof modules --format json` against steps_oracle.py: the committed
8-device capture (4 StepTraceAnnotation steps, step 0 compiles global_sse) and profiles without
step annotations."""
from __future__ import annotations

import json
from decimal import Decimal

import ops_check as oc
import steps_oracle as so


def _ps(ns) -> int:
    v = Decimal(str(ns)) * 1000
    assert v == v.to_integral_value(), f"{ns} ns is not whole picoseconds"
    return int(v)


def modules_steps(binary, path):
    proc = oc.run_cli(binary, ["modules", str(path), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout.decode(), parse_float=Decimal)["steps"]


def check_against_oracle(binary, path):
    got = modules_steps(binary, path)
    want = so.steps(str(path))
    assert got["source"] == ("host-annotation" if want else "none")
    assert len(got["steps"]) == len(want)
    for g, w in zip(got["steps"], want):
        assert g["number"] == w["number"]
        assert (_ps(g["start_ns"]), _ps(g["end_ns"])) == (w["start"], w["end"])
        assert g["executions"] == w["executions"], g["number"]
        assert _ps(g["device_ns"]) == w["device"], g["number"]
        assert g["warmup"] == w["warmup"], g["number"]
        mods = {(m["name"], m["program_id"]): m["executions"] for m in g["modules"]}
        assert mods == dict(w["modules"])
    steady = [w for w in want if not w["warmup"]] or want
    if want:
        assert got["steady_steps"] == len(steady)
        mean = sum(w["end"] - w["start"] for w in steady) / len(steady)
        assert abs(float(got["steady_mean_ns"]) * 1000 - mean) <= 1  # a mean: not whole ps
    return got


def test_cpu_8dev_steps_match_oracle(jaxprof_bin):
    got = check_against_oracle(jaxprof_bin, oc.ROOT / "tests" / "data" / "jax_cpu_8dev")
    steps = got["steps"]
    assert [s["number"] for s in steps] == [0, 1, 2, 3]
    # Step 0 compiles global_sse (tests/data/README.md): the warm-up step, reported apart.
    assert [s["warmup"] for s in steps] == [True, False, False, False]
    assert got["steady_steps"] == 3
    # Each step runs both programs once on each of the 8 devices.
    assert all(s["executions"] == 16 for s in steps)
    assert _ps(steps[0]["duration_ns"]) > 10 * _ps(steps[1]["duration_ns"])


def test_cpu_matmul_has_no_steps(jaxprof_bin):
    got = check_against_oracle(jaxprof_bin, oc.ROOT / "tests" / "data" / "jax_cpu_matmul")
    assert got == {"source": "none", "steady_steps": 0, "steady_mean_ns": 0,
                   "steady_device_mean_ns": 0, "steps": []}
