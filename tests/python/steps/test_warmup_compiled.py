"""Warm-up is the first execution of a program on a device that the capture shows being compiled
(docs/steady-state.md), with real JAX on the CPU backend: a capture taken mid-loop, long after
compiling, sets nothing apart, and all its steps are steady; one that holds the first call,
compile and all, sets that first execution and the step that compiled apart, and nothing else. A
profile without host threads cannot tell, and keeps the first-execution rule."""
from __future__ import annotations

import json
import os
import re
import statistics
from decimal import Decimal
from pathlib import Path

import pytest

import ops_check as oc
import steps_oracle as so
import timeline_oracle as to
import xplane_oracle as xo

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

STEP = "jit_warmup_probe_step"


def probe_step():
    """A fresh jitted program (never compiled yet) and its inputs."""

    def warmup_probe_step(x, w):
        for _ in range(3):
            x = jnp.tanh(x @ w)
        return x

    x = jnp.ones((128, 128), jnp.float32)
    w = jnp.full((128, 128), 1.0 / 128, jnp.float32)
    jax.block_until_ready((x, w))
    return jax.jit(warmup_probe_step), x, w


def capture(path: Path, steps: int, compile_inside: bool) -> Path:
    """`steps` synchronous steps, each in a StepTraceAnnotation, inside jax.profiler.trace;
    without `compile_inside` the program is compiled and run five times before the trace starts."""
    step, x, w = probe_step()
    if not compile_inside:
        for _ in range(5):
            x = jax.block_until_ready(step(x, w))
    with jax.profiler.trace(str(path)):
        for i in range(steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                x = jax.block_until_ready(step(x, w))
    return path


def cli_json(binary, *args):
    proc = oc.run_cli(binary, [*map(str, args), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout, parse_float=Decimal)


def step_module(modules: dict) -> dict:
    (m,) = [m for m in modules["modules"] if m["name"] == STEP]
    return m


def oracle_warmups(path: Path) -> list:
    """The step program's executions on the one CPU device, as the oracle marks them."""
    (execs,) = to.module_executions(str(path)).values()
    return [x["warmup"] for x in execs if x["name"] == STEP]


@pytest.mark.parametrize("steps", [1, 3])
def test_capture_mid_loop_sets_nothing_apart(jaxprof_bin, tmp_path, steps):
    path = capture(tmp_path / "mid", steps, compile_inside=False)
    modules = cli_json(jaxprof_bin, "modules", path)
    m = step_module(modules)
    assert (m["executions"], m["warmup_executions"]) == (steps, 0)
    assert oracle_warmups(path) == [False] * steps
    # Every step is steady: none compiled, none holds a warm-up run.
    marks = modules["steps"]
    assert [s["number"] for s in marks["steps"]] == list(range(steps))
    assert not any(s["warmup"] or s["compiling"] for s in marks["steps"])
    assert marks["steady_steps"] == steps
    assert [s["warmup"] for s in so.steps(str(path))] == [False] * steps
    ops = cli_json(jaxprof_bin, "ops", path)
    assert ops["set_apart"]["warmup"]["executions"] == 0
    compiles = cli_json(jaxprof_bin, "compile", path)
    assert not [c for c in compiles["events"] if c.get("module") == STEP]


def test_capture_with_the_compile_sets_the_first_execution_apart(jaxprof_bin, tmp_path):
    path = capture(tmp_path / "first", 3, compile_inside=True)
    compiles = cli_json(jaxprof_bin, "compile", path)
    assert [c for c in compiles["events"] if c.get("module") == STEP], compiles["events"]
    modules = cli_json(jaxprof_bin, "modules", path)
    m = step_module(modules)
    assert (m["executions"], m["warmup_executions"]) == (3, 1)
    assert oracle_warmups(path) == [True, False, False]
    # Step 0 compiled and ran the warm-up: it alone is set apart.
    marks = modules["steps"]["steps"]
    assert [(s["compiling"], s["warmup"]) for s in marks] == \
        [(True, True), (False, False), (False, False)]
    assert modules["steps"]["steady_steps"] == 2
    assert [(s["compiling"], s["warmup"]) for s in so.steps(str(path))] == \
        [(True, True), (False, False), (False, False)]
    ops = cli_json(jaxprof_bin, "ops", path)
    assert ops["set_apart"]["warmup"]["executions"] == 1
    assert [n for n in ops["set_apart"]["warmup"]["modules"] if n.startswith(STEP)]


def without_host_threads(src: Path, dst: Path) -> Path:
    """A copy of a GPU capture with its /host:CPU plane removed: a device-only capture."""
    space = xo.load_xspace(str(src))
    keep = [p for p in space.planes if p.name != "/host:CPU"]
    assert len(keep) < len(space.planes)
    del space.planes[:]
    space.planes.extend(keep)
    dst.write_bytes(space.SerializeToString())
    return dst


def test_without_host_threads_every_first_execution_is_warmup(jaxprof_bin, tmp_path):
    # The MI300X GEMM capture: its programs were compiled before it began (its host threads
    # hold no compile), so no run is warm-up. Without the host threads nothing tells: the first
    # run of each program on the device is warm-up, as the rule falls back to.
    src = oc.require_profile(oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb")
    bare = without_host_threads(src, tmp_path / "bare.xplane.pb")
    with_host = cli_json(jaxprof_bin, "modules", src)["modules"]
    assert with_host and all(m["warmup_executions"] == 0 for m in with_host)
    modules = cli_json(jaxprof_bin, "modules", bare)["modules"]
    assert modules and all(m["warmup_executions"] == m["devices"] == 1 for m in modules)
    execs = [x for d in to.module_executions(str(bare)).values() for x in d]
    assert sum(x["warmup"] for x in execs) == len({(x["name"], x["program_id"]) for x in execs})
    assert cli_json(jaxprof_bin, "ops", bare)["set_apart"]["warmup"]["executions"] == \
        len(modules)


SUMMARY = re.compile(r"step (?P<device>[0-9.]+) ms on the device")


def test_step_profiler_from_the_first_step(tmp_path):
    """A StepProfiler capture from step 0 holds the compile: its summary gives the steady step's
    device time, the first run counted at the steady runs' mean (docs/python.md)."""
    jaxprof = pytest.importorskip("jaxprof")
    step, x, w = probe_step()
    lines = []
    prof = jaxprof.StepProfiler(tmp_path, every_n_steps=1000, max_profiles=1, first_step=0,
                                steps_per_profile=3, summarize=True, print_fn=lines.append)
    for i in range(4):
        with prof.step(i) as s:
            s.result = x = step(x, w)
    prof.close()
    (cap,) = prof.profiles
    (execs,) = to.module_executions(str(cap.path)).values()
    runs = [e for e in execs if e["name"] == STEP]
    assert [e["warmup"] for e in runs] == [True, False, False]
    steady_ms = statistics.mean(e["end"] - e["start"] for e in runs[1:]) / 1e9
    (line,) = lines
    m = SUMMARY.search(line)
    assert m, line
    assert abs(float(m["device"]) - steady_ms) <= 0.0051, (line, steady_ms)
