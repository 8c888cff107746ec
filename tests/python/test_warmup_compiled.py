"""Warm-up is the first execution of a program on a device that the capture shows being compiled
(docs/steady-state.md), with real JAX on the CPU backend: a capture taken mid-loop, long after
compiling, sets nothing apart; one that holds the first call, compile and all, sets that first
execution apart and no other."""
from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import pytest

import ops_check as oc

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

STEP = "jit_warmup_probe_step"


def capture(path: Path, steps: int, compile_inside: bool) -> Path:
    """`steps` synchronous steps of a fresh jitted program inside jax.profiler.trace; without
    `compile_inside` the program is compiled and run five times before the trace starts."""

    def warmup_probe_step(x, w):
        for _ in range(3):
            x = jnp.tanh(x @ w)
        return x

    step = jax.jit(warmup_probe_step)
    x = jnp.ones((128, 128), jnp.float32)
    w = jnp.full((128, 128), 1.0 / 128, jnp.float32)
    jax.block_until_ready((x, w))
    if not compile_inside:
        for _ in range(5):
            x = jax.block_until_ready(step(x, w))
    with jax.profiler.trace(str(path)):
        for _ in range(steps):
            x = jax.block_until_ready(step(x, w))
    return path


def cli_json(binary, *args):
    proc = oc.run_cli(binary, [*map(str, args), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout, parse_float=Decimal)


def step_module(modules: dict) -> dict:
    (m,) = [m for m in modules["modules"] if m["name"] == STEP]
    return m


@pytest.mark.parametrize("steps", [1, 3])
def test_capture_mid_loop_sets_nothing_apart(jaxprof_bin, tmp_path, steps):
    path = capture(tmp_path / "mid", steps, compile_inside=False)
    m = step_module(cli_json(jaxprof_bin, "modules", path))
    assert (m["executions"], m["warmup_executions"]) == (steps, 0)
    ops = cli_json(jaxprof_bin, "ops", path)
    assert ops["set_apart"]["warmup"]["executions"] == 0
    compiles = cli_json(jaxprof_bin, "compile", path)
    assert not [c for c in compiles["events"] if c.get("module") == STEP]


def test_capture_with_the_compile_sets_the_first_execution_apart(jaxprof_bin, tmp_path):
    path = capture(tmp_path / "first", 3, compile_inside=True)
    compiles = cli_json(jaxprof_bin, "compile", path)
    assert [c for c in compiles["events"] if c.get("module") == STEP], compiles["events"]
    m = step_module(cli_json(jaxprof_bin, "modules", path))
    assert (m["executions"], m["warmup_executions"]) == (3, 1)
    ops = cli_json(jaxprof_bin, "ops", path)
    assert ops["set_apart"]["warmup"]["executions"] == 1
    assert [n for n in ops["set_apart"]["warmup"]["modules"] if n.startswith(STEP)]
