"""jaxprof.autotune.time_candidates on real JAX (CPU): candidates of clearly different cost are
ranked right from device events, statistics match an independent computation from the samples,
a candidate that fails to compile is reported while the others are timed, and the wall-clock
path says so."""
from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jaxprof import autotune as at  # noqa: E402


def chain(k):
    # k dependent matmul+tanh steps: cost grows linearly in k.
    def f(x):
        for _ in range(k):
            x = jnp.tanh(x @ x)
        return x
    return f


X = None


def x128():
    global X
    if X is None:
        X = jnp.ones((128, 128), jnp.float32) / 128
    return X


def test_device_timing_ranks_candidates_and_keeps_every_run():
    r = at.time_candidates(chain, [16, 1, 4], (x128(),), repeats=12, seed=3)
    assert r.timing == "device"
    assert [c.config for c in r.ranked] == [1, 4, 16]
    assert r.winner.config == 1 and r.runner_up.config == 4
    assert r.significant and r.speedup > 1.5
    assert r.rounds == 1
    for c in r.candidates:
        # Every traced run was found in the profile, one sample per run, in its module.
        assert c.runs == len(c.wall_samples_ns) == len(c.span_samples_ns) == 12
        assert c.names == [f"jit_autotune_fn_{c.index}"]
        s = np.asarray(c.samples_ns)
        # Statistics from the C++ core against NumPy on the same samples.
        assert c.median_ns == pytest.approx(np.median(s))
        assert c.mean_ns == pytest.approx(s.mean())
        assert c.mad_ns == pytest.approx(np.median(np.abs(s - np.median(s))))
        assert s.min() <= c.ci95_ns[0] <= c.median_ns <= c.ci95_ns[1] <= s.max()
        # Busy time is within the run's device span, and the device time is below the wall
        # clock of call + block_until_ready.
        assert all(b <= sp + 1e-3 for b, sp in zip(c.samples_ns, c.span_samples_ns))
        assert c.median_ns < np.median(c.wall_samples_ns)
    assert r.speedup == pytest.approx(r.runner_up.median_ns / r.winner.median_ns)


def test_adaptive_repeats_stop_at_the_precision_target():
    r = at.time_candidates(chain, [1, 8], (x128(),), rel_precision=0.5, min_runs=4,
                           max_time_s=20)
    # A loose target is met within a round or two (a busy machine can spoil the first); a strict
    # one needs more rounds and runs.
    assert r.precision_reached and r.rounds <= 2
    assert all(c.rel_precision <= 0.5 for c in r.candidates)
    strict = at.time_candidates(chain, [1, 8], (x128(),), rel_precision=0.002, min_runs=4,
                                max_time_s=3)
    assert strict.rounds > r.rounds
    assert max(c.runs for c in strict.candidates) > 4
    if not strict.precision_reached:
        assert any("not reached" in w for w in strict.warnings)
    assert strict.winner.config == 1


def test_compile_failure_is_reported_and_others_still_timed():
    def factory(cfg):
        if cfg == "bad-shape":
            return lambda x: x.reshape(7, 5)  # fails while lowering
        if cfg == "bad-factory":
            raise ValueError("no such tile size")
        return chain(cfg)

    r = at.time_candidates(factory, [4, "bad-shape", 1, "bad-factory"], (x128(),), repeats=6)
    assert [c.config for c in r.ranked[:2]] == [1, 4]
    failed = {c.config: c.error for c in r.failed}
    assert set(failed) == {"bad-shape", "bad-factory"}
    assert failed["bad-shape"].startswith("compile failed: TypeError")
    assert "no such tile size" in failed["bad-factory"]
    assert all(c.runs == 0 and math.isnan(c.median_ns) for c in r.failed)
    assert [row["index"] for row in r.rows] == [2, 0, 1, 3]
    assert r.rows[2]["rank"] is None and r.rows[2]["error"] == failed["bad-shape"]
    text = repr(r)
    assert "#1 compile failed: TypeError" in text and "winner: #2" in text


def test_wall_clock_timing_is_said_and_ranks():
    r = at.time_candidates([chain(1), chain(32)], ["one", "many"], (x128(),), repeats=15,
                           timing="wall")
    assert r.timing == "wall" and r.data["timing"] == "wall"
    assert r.data["source"] == "wall clock"
    for c in r.candidates:
        assert c.runs == 15 and not c.span_samples_ns
        assert c.samples_ns == pytest.approx(c.wall_samples_ns)  # the samples are the wall times
        assert c.median_ns == pytest.approx(np.median(c.wall_samples_ns))
    # The ranking follows the wall-clock medians. (Which one wins is not asserted: on a busy
    # machine the wall clock is at the mercy of the scheduler, which is why device timing is
    # the default; bench/autotune_quality.py measures how often each method is right.)
    assert r.winner is min(r.candidates, key=lambda c: np.median(c.wall_samples_ns))


def test_falls_back_to_wall_clock_when_no_trace_can_start(tmp_path):
    # JAX runs one profiler trace at a time: inside the user's own trace, device timing is
    # impossible, and "auto" says it timed with the wall clock instead.
    jax.profiler.start_trace(str(tmp_path))
    try:
        r = at.time_candidates(chain, [16, 1], (x128(),), repeats=6)
        with pytest.raises(RuntimeError, match="timing='device': could not start"):
            at.time_candidates(chain, [16, 1], (x128(),), repeats=2, timing="device")
    finally:
        jax.profiler.stop_trace()
    assert r.timing == "wall"
    assert r.winner is min(r.candidates, key=lambda c: np.median(c.wall_samples_ns))
    assert any("could not start a profiler trace" in w and "wall clock" in w
               for w in r.warnings)
    assert all(c.runs == 6 and not c.span_samples_ns for c in r.candidates)
    assert "wall timing" in repr(r)


def test_all_failing_and_bad_arguments():
    r = at.time_candidates(lambda c: (lambda x: x.reshape(3, 3)), [1, 2], (x128(),))
    assert r.winner is None and len(r.failed) == 2
    assert "no candidate compiled and ran" in r.warnings
    assert "no winner" in repr(r)
    with pytest.raises(ValueError, match="timing"):
        at.time_candidates([chain(1)], None, (x128(),), timing="gpu")
    with pytest.raises(ValueError, match="factory needs candidates"):
        at.time_candidates(chain, None, (x128(),))
    with pytest.raises(ValueError, match="2 functions but 1 candidates"):
        at.time_candidates([chain(1), chain(2)], ["a"], (x128(),))


def test_result_renders():
    r = at.time_candidates({"a": chain(1), "b": chain(4)}, None, (x128(),), repeats=4)
    assert [c.config for c in r.candidates] == ["a", "b"]
    html = r._repr_html_()
    assert "<table>" in html and "winner: #0" in html
    pd = pytest.importorskip("pandas")
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df["config"]) == ["'a'", "'b'"]
    assert list(df["runs"]) == [4, 4]


def test_expand_grid():
    assert at.expand_grid({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(TypeError):
        at.expand_grid({"a": 3})
