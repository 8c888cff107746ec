"""Capture on anomaly: StepProfiler(on_slow_step=k) watches the wall time of every step without
profiling, and captures the steps after one that took k times the recent median, with real JAX on
the CPU backend. A planted slow step (a sleep, a big host transfer) fires exactly one capture;
normal steps fire none; a failing predicate never stops training."""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jaxprof = pytest.importorskip("jaxprof", reason="the jaxprof package is not installed (pip install .)")

# A normal step: a little device work and 20 ms of host work (an input pipeline). The slow-step
# threshold is a multiple of the median, so a long enough normal step puts it (here 100 ms at 5x)
# well above the scheduling and collection pauses of a loaded 2-core machine (one such pause of
# 22 ms once fired a capture when normal steps took 4 ms).
HOST_S = 0.02


def make_step():
    w = jnp.eye(128, dtype=jnp.float32) * 0.5
    f = jax.jit(lambda x: jnp.tanh(x @ w))
    x = jnp.ones((128, 128), jnp.float32)
    jax.block_until_ready(f(x))
    return f, x


def run(prof, steps: int, plant=None):
    f, x = make_step()
    for i in range(steps):
        with prof.step(i) as s:
            time.sleep(HOST_S)
            if plant is not None:
                plant(i)
            s.result = x = f(x)
            jax.block_until_ready(x)
    prof.close()
    return x


def sleep_at(*steps, seconds=0.25):
    def plant(i):
        if i in steps:
            time.sleep(seconds)
    return plant


def test_a_planted_slow_step_fires_exactly_one_capture(tmp_path: Path) -> None:
    lines = []
    prof = jaxprof.StepProfiler(tmp_path, max_profiles=0, on_slow_step=5.0, steps_per_profile=2,
                                summarize=True, print_fn=lines.append)
    run(prof, 80, sleep_at(40))
    assert [s.step_num for s in prof.slow_steps] == [40]
    slow = prof.slow_steps[0]
    assert slow.seconds > 0.25 and slow.seconds > 5 * slow.median_s
    (cap,) = prof.captures
    assert cap.ok and (cap.first_step, cap.last_step) == (41, 42)
    assert cap.path.name.endswith("_slow41") and list(cap.path.glob("*.xplane.pb"))
    assert cap.reason.startswith("slow step 40: ")
    (line,) = lines
    assert line.startswith("jaxprof: steps 41-42 (after slow step 40: "), line


def test_normal_steps_fire_nothing(tmp_path: Path) -> None:
    prof = jaxprof.StepProfiler(tmp_path, max_profiles=0, on_slow_step=5.0)
    run(prof, 80)
    assert prof.slow_steps == [] and prof.captures == []
    assert not (tmp_path / "plugins").exists()


def test_a_big_host_transfer_fires_a_capture(tmp_path: Path) -> None:
    big = np.ones((64, 1024, 1024), np.float32)  # 256 MB to the device and back

    def transfer(i):
        if i == 45:
            np.asarray(jax.device_put(big) + 1)

    prof = jaxprof.StepProfiler(tmp_path, max_profiles=0, on_slow_step=4.0)
    run(prof, 70, transfer)
    assert [s.step_num for s in prof.slow_steps] == [45]
    assert [c.first_step for c in prof.profiles] == [46]


def test_at_most_max_slow_profiles_and_apart(tmp_path: Path) -> None:
    # Slow steps at 25, 30 and 60: 30 falls within 20 steps of the capture fired by 25.
    prof = jaxprof.StepProfiler(tmp_path / "two", max_profiles=0, on_slow_step=5.0,
                                max_slow_profiles=2, slow_step_window=20)
    run(prof, 75, sleep_at(25, 30, 60))
    assert [s.step_num for s in prof.slow_steps] == [25, 60]
    assert [c.first_step for c in prof.profiles] == [26, 61]
    prof = jaxprof.StepProfiler(tmp_path / "one", max_profiles=0, on_slow_step=5.0,
                                slow_step_window=20)
    run(prof, 75, sleep_at(25, 60))
    assert [c.first_step for c in prof.profiles] == [26]


def test_a_predicate_decides_and_its_errors_do_not_stop_training(tmp_path: Path,
                                                                 caplog) -> None:
    seen = []

    def at_33(step_num, seconds, median_s):
        seen.append((step_num, seconds, median_s))
        return step_num == 33

    prof = jaxprof.StepProfiler(tmp_path / "p", max_profiles=0, on_slow_step=at_33)
    run(prof, 40)
    assert [c.first_step for c in prof.profiles] == [34]
    # Judged from the 11th step on (10 steps of history), each with the median before it.
    assert seen[0][0] == 10 and all(s > 0 and m > 0 for _, s, m in seen)

    def broken(step_num, seconds, median_s):
        raise RuntimeError("boom")

    prof = jaxprof.StepProfiler(tmp_path / "b", max_profiles=0, on_slow_step=broken)
    with caplog.at_level(logging.WARNING, logger="jaxprof"):
        x = run(prof, 30)
    assert x.shape == (128, 128) and prof.captures == []
    assert "on_slow_step failed at step 10" in caplog.text


def test_scheduled_and_anomaly_captures_together(tmp_path: Path) -> None:
    prof = jaxprof.StepProfiler(tmp_path, every_n_steps=100, max_profiles=1, first_step=5,
                                on_slow_step=5.0)
    run(prof, 60, sleep_at(40))
    assert [(c.first_step, c.reason is None) for c in prof.profiles] == [(5, True), (41, False)]


def test_bad_options() -> None:
    for kwargs in ({"on_slow_step": 1.0}, {"on_slow_step": "3"}, {"slow_step_window": 2,
                                                                  "on_slow_step": 3.0},
                   {"max_slow_profiles": -1}):
        with pytest.raises(ValueError):
            jaxprof.StepProfiler("/tmp/unused", **kwargs)
