"""Capture API and the ejkernel-compatible Profiler, with real JAX on the CPU backend."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jaxprof = pytest.importorskip("jaxprof", reason="the jaxprof package is not installed (pip install .)")

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
SHARED = Path(os.environ.get("JAXPROF_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures"))


def mlp_problem():
    rng = np.random.default_rng(0)
    params = {
        "w1": jnp.asarray(rng.normal(size=(32, 64)).astype(np.float32) * 0.1),
        "b1": jnp.zeros(64, jnp.float32),
        "w2": jnp.asarray(rng.normal(size=(64, 8)).astype(np.float32) * 0.1),
    }
    x = jnp.asarray(rng.normal(size=(128, 32)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=(128, 8)).astype(np.float32))

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    @jax.jit
    def train_step(p, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads), value

    return params, x, y, train_step


def run_loop(prof, steps: int):
    params, x, y, train_step = mlp_problem()
    losses = []
    for i in range(steps):
        with prof.step(i) as s:
            params, value = train_step(params, x, y)
            s.result = (params, value)
        losses.append(float(value))
    prof.close()
    return losses


def test_step_profiler_captures_chosen_steps(tmp_path: Path) -> None:
    lines = []
    prof = jaxprof.StepProfiler(tmp_path / "logs", every_n_steps=4, max_profiles=2,
                                steps_per_profile=2, first_step=2, summarize=True,
                                print_fn=lines.append)
    losses = run_loop(prof, 14)
    assert losses[-1] < losses[0]
    # Windows start at 2 and 6; 10 would be the third, beyond max_profiles.
    assert [(c.first_step, c.last_step) for c in prof.captures] == [(2, 3), (6, 7)]
    assert prof.failures == 0 and all(c.ok for c in prof.captures)
    sessions = sorted((tmp_path / "logs" / "plugins" / "profile").iterdir())
    assert [s.name for s in sessions] == sorted(c.session for c in prof.captures)
    for s in sessions:
        assert len(list(s.glob("*.xplane.pb"))) == 1
    assert jaxprof.latest(tmp_path / "logs") == prof.captures[-1].path

    per_capture = []
    for c in prof.captures:
        p = jaxprof.load(c.path)
        names = set(p.events().name)
        assert "train" in names  # the step annotations
        ops = p.ops(group_by="module")
        per_capture.append(sum(r["count"] for r in ops.rows if r["name"] == "jit_train_step"))
    # Two steps in each capture: the same number of train_step op executions, and some.
    assert per_capture[0] == per_capture[1] > 0
    assert len(lines) == 2 and "top op" in lines[0] and "step" in lines[0]


def test_unwritable_log_dir_does_not_stop_training(tmp_path: Path, caplog) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    prof = jaxprof.StepProfiler(blocker / "logs", every_n_steps=2, max_profiles=3, first_step=0)
    with caplog.at_level(logging.WARNING, logger="jaxprof"):
        losses = run_loop(prof, 8)
    assert len(losses) == 8
    assert prof.failures == 3 and not prof.profiles
    assert "training continues" in caplog.text
    # The profiler is usable again afterwards.
    good = jaxprof.StepProfiler(tmp_path / "ok", every_n_steps=1, max_profiles=1, first_step=1)
    run_loop(good, 3)
    assert len(good.profiles) == 1


def test_annotations_appear_in_the_profile(tmp_path: Path) -> None:
    f = jax.jit(lambda a: jnp.sin(a) @ a)
    a = jnp.ones((64, 64))
    f(a).block_until_ready()

    @jaxprof.trace_function(name="my_traced_fn")
    def work(v):
        return f(v)

    with jaxprof.trace(tmp_path) as cap:
        with jaxprof.annotate("my_region"):
            jax.block_until_ready(work(a))
        with jaxprof.step(7):
            jax.block_until_ready(f(a))
    assert cap.ok and cap.path.is_dir()
    names = set(jaxprof.load(cap.path).events().name)
    assert {"my_region", "my_traced_fn", "train"} <= names
    assert jaxprof.summarize(cap.path).count("top op") == 1


def test_latest_without_capture(tmp_path: Path) -> None:
    with pytest.raises(jaxprof.ProfileNotFoundError):
        jaxprof.latest(tmp_path)


def test_profiler_ranks_candidates_by_cost() -> None:
    def candidate(fid: int, n: int):
        def fn(x):
            for _ in range(3):
                x = jnp.tanh(x @ x)
            return x

        fn.__name__ = f"autotune_fn_{fid}"
        return jax.jit(fn), jnp.ones((n, n), jnp.float32)

    cands = [candidate(0, 384), candidate(1, 32), candidate(2, 128)]
    for fn, x in cands:
        fn(x).block_until_ready()
    prof = jaxprof.Profiler()
    result = prof.profile_time_by_function_id(lambda: [fn(x) for fn, x in cands], "cpu", 4)
    assert set(result) == {0, 1, 2}
    means = {k: v[0] for k, v in result.items()}
    assert means[1] < means[2] < means[0]
    assert all(v[1] >= 0 for v in result.values())


def test_profiler_plane_events_match_ops() -> None:
    data = (DATA / "jax_cpu_matmul" / "plugins" / "profile" / "session" / "vm.xplane.pb")
    prof = jaxprof.Profiler(prefix_filter="jit_two", min_duration_ns=0,
                            max_events_per_profile=None)
    p = prof.parse_profile_from_bytes(data.read_bytes())
    plane = prof.find_device_plane_ids(p, "cpu")
    assert [p.planes[i].name for i in plane] == ["/host:CPU"]
    ps = prof.get_events_from_plane_ps(p, plane[0])
    # The compat Profiler (as tune-jax's) counts every event: compare with all work included.
    busy_ns = jaxprof.load(data, include_autotuning=True,
                           include_warmup=True).ops().devices[0]["busy_ns"]
    assert ps == {"jit_two_matmuls(0-None)": round(busy_ns * 1000)}
    assert prof.get_events_from_plane(p, plane[0])["jit_two_matmuls(0-None)"] == \
        pytest.approx(busy_ns / 1e9)
    # Nested: each op event holds a short "end: <op>" event; with a regex a parent's time is
    # the union of its matching children. Check against a direct computation.
    nested = jaxprof.Profiler(prefix_filter="jit_", event_filter_regex=r"^end: ",
                              min_duration_ns=0, max_events_per_profile=None)
    got = nested.get_events_from_plane_ps(p, plane[0])["jit_two_matmuls(0-None)"]
    ev = p.events()
    start, end, names = ev.start_ps, ev.start_ps + ev.duration_ps, ev.name
    ops = np.flatnonzero(ev.hlo_op != 0)
    ends = [i for i in range(len(ev)) if names[i].startswith("end: ")]
    inside = sorted({(int(start[j]), int(end[j])) for i in ops for j in ends
                     if start[j] >= start[i] and end[j] <= end[i]})
    want, cur_s, cur_e = 0, None, None
    for s_, e_ in inside:
        if cur_e is None or s_ > cur_e:
            want += 0 if cur_e is None else cur_e - cur_s
            cur_s, cur_e = s_, e_
        else:
            cur_e = max(cur_e, e_)
    want += 0 if cur_e is None else cur_e - cur_s
    assert 0 < got == want < round(busy_ns * 1000)
    with pytest.raises(jaxprof.ProfilingError):
        prof.find_device_plane_ids(p, "tpu")
    with pytest.raises(jaxprof.ProfilingError):
        prof.get_events_from_plane(p, 99)
    with pytest.raises(jaxprof.ProfilingError):
        jaxprof.Profiler(event_filter_regex="(")


def test_profiler_corrupt_profile_raises() -> None:
    bad = SHARED / "bad" / "tpu_inference_utf8_mangled.xplane.pb"
    if not bad.is_file():
        pytest.skip("shared fixtures missing")
    with pytest.raises(jaxprof.ProfilingError) as info:
        jaxprof.Profiler.parse_profile_from_bytes(bad.read_bytes())
    assert isinstance(info.value, jaxprof.ProfileError) and "corrupt" in info.value.reason
    with pytest.raises(jaxprof.ProfilingError):
        jaxprof.Profiler.parse_profile_from_bytes(b"\x0a\xff\xff")
