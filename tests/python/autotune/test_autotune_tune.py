"""jaxprof.autotune.tune and call keys on real JAX (CPU): the winner is picked on the first call
per call signature and reused (no new tracing), a new shape is tuned anew, the persistent cache
short-cuts tuning in a fresh wrapper, and call keys are identical in another process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jaxprof import autotune as at  # noqa: E402

FAST = dict(repeats=8)


def make_chain(log):
    def chain(x, *, k, scale=1.0):
        log.append(k)  # runs once per trace
        for _ in range(k):
            x = jnp.tanh(x @ x) * scale
        return x
    return chain


def test_tune_picks_once_per_signature_and_retunes_for_new_shapes(tmp_path):
    log = []
    f = at.tune(make_chain(log), grid={"k": [8, 1, 3]}, cache=tmp_path / "c.sqlite", **FAST)
    assert f.op_id == "test_autotune_tune.make_chain.chain@v1"
    x = jnp.ones((96, 96), jnp.float32) / 96
    y = f(x)
    assert sorted(log) == [1, 3, 8]  # each candidate traced (compiled) exactly once
    assert f.last.source == "measured" and f.last.config == {"k": 1}
    assert f.last.timing.winner.config == {"k": 1} and f.last.timing.significant
    want = jnp.tanh(x @ x)
    assert jnp.allclose(y, want)
    for _ in range(3):
        f(x + 1.0)  # same signature: the winner's executable, no new trace
    assert len(log) == 3 and len(f.calls) == 1
    f(jnp.ones((48, 48), jnp.float32))  # new shape: tuned anew
    assert len(log) == 6 and len(f.calls) == 2
    f(x, scale=0.5)  # a static keyword is part of the signature
    assert len(log) == 9 and len(f.calls) == 3
    assert f.config_for(x) == {"k": 1} and f.config_for(jnp.ones((5, 5))) is None

    # The winners are in the persistent cache: a new wrapper compiles only the winner.
    entries = at.Cache(tmp_path / "c.sqlite").list()
    assert len(entries) == 3 and {e.op for e in entries} == {f.op_id}
    assert all(e.config == {"k": 1} and e.device == at.device_fingerprint() for e in entries)
    first = [e for e in entries if e.call_key == f.last.call_key][0]
    assert first.median_ns == pytest.approx(f.last.timing.winner.median_ns)
    assert len(first.samples_ns) == 8 and first.measured_at.endswith("Z") and first.host
    log2 = []
    g = at.tune(make_chain(log2), grid={"k": [8, 1, 3]}, cache=tmp_path / "c.sqlite",
                op_id="test_autotune_tune.make_chain.chain", **FAST)
    g(x, scale=0.5)
    assert log2 == [1] and g.last.source == "cache" and g.last.timing is None


def test_tune_inside_jit_inlines_the_winner(tmp_path):
    log = []
    f = at.tune(make_chain(log), grid={"k": [4, 1]}, cache=False, **FAST)
    out = jax.jit(lambda a: f(a) + 1)(jnp.ones((64, 64), jnp.float32) / 64)
    # Tuned on stand-ins outside the trace (2 traces), then the winner inlined (1 more).
    assert log[:2] == [4, 1] and log[2:] == [1]
    assert f.last.compiled is None and out.shape == (64, 64)


def test_tune_sample_is_seeded(tmp_path):
    grid = {"a": list(range(4)), "b": list(range(5))}
    f1 = at.tune(lambda x, *, a, b: x, grid=grid, sample=6, seed=7, cache=False)
    f2 = at.tune(lambda x, *, a, b: x, grid=grid, sample=6, seed=7, cache=False)
    f3 = at.tune(lambda x, *, a, b: x, grid=grid, sample=6, seed=8, cache=False)
    assert len(f1.configs) == 6 and f1.configs == f2.configs and f1.configs != f3.configs
    assert all(c in at.expand_grid(grid) for c in f1.configs)
    with pytest.raises(ValueError, match="exactly one"):
        at.tune(lambda x: x, cache=False)


def test_tune_raises_when_no_candidate_runs():
    f = at.tune(lambda x, *, n: x.reshape(n, 3), grid={"n": [5, 7]}, cache=False, **FAST)
    with pytest.raises(RuntimeError, match="no candidate compiled and ran"):
        f(jnp.ones((4, 4)))


KEY_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    from jaxprof import autotune as at
    mesh = jax.make_mesh((2,), ("x",))
    a = jnp.ones((8, 4), jnp.bfloat16)
    b = jax.device_put(jnp.zeros((8, 6)), NamedSharding(mesh, P("x")))
    keys = {
        "plain": at.call_key((a,)),
        "tree": at.call_key(({"q": a, "k": [b, 3.0]},), {"mask": None}, {"causal": True}),
        "spec": at.call_key((jax.ShapeDtypeStruct((8, 4), jnp.bfloat16),)),
        "numpy": at.call_key((np.ones((8, 4), np.float32),)),
        "sharded": at.call_key((b,)),
        "traced": jax.jit(lambda t: jnp.float32(0) if print(json.dumps(at.call_key((t,))))
                          else t)(b) is None,
    }
    print(json.dumps(keys))
""")


def test_call_key_is_stable_across_processes_and_discriminates():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", KEY_SCRIPT], capture_output=True, text=True,
                           env=env, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        lines = p.stdout.strip().splitlines()
        runs.append((json.loads(lines[0]), json.loads(lines[-1])))
    (traced1, keys1), (traced2, keys2) = runs
    assert keys1 == keys2 and traced1 == traced2
    # A traced array has the same key as the concrete sharded array it stands for.
    assert traced1 == keys1["sharded"]
    # The abstract spec of an array keys like the array.
    assert keys1["spec"] == keys1["plain"]
    assert len(set(keys1[k] for k in ("plain", "tree", "numpy", "sharded"))) == 4
    # In this process: same signature, same key; any difference, another key.
    a = jnp.ones((8, 4), jnp.bfloat16)
    assert at.call_key((a,)) == keys1["plain"]
    assert at.call_key((jnp.zeros((8, 4), jnp.bfloat16) + 1,)) == keys1["plain"]
    assert at.call_key((jnp.ones((8, 5), jnp.bfloat16),)) != keys1["plain"]
    assert at.call_key((jnp.ones((8, 4), jnp.float32),)) != keys1["plain"]
    assert at.call_key((a,), static={"block": 64}) != at.call_key((a,), static={"block": 128})
    assert at.call_key((a,), static={"b": 1, "a": 2}) == at.call_key((a,), static={"a": 2,
                                                                                   "b": 1})
    assert at.call_key((a, 1.0)) == at.call_key((a, 2.5))  # traced scalars: type only
    sig = at.call_signature((a,), static={"fn": jnp.tanh, "obj": object()})
    assert "0x" not in sig and "bfloat16[8, 4] single" in sig


def test_device_fingerprint_names_what_changes_speed():
    fp = at.device_fingerprint()
    d = jax.devices()[0]
    fields = dict(p.split("=", 1) for p in fp.split(";"))
    assert fields["platform"] == d.platform and fields["kind"] == d.device_kind
    assert fields["jax"] == jax.__version__
    import jaxlib
    assert fields["jaxlib"] == jaxlib.__version__
    assert at.device_fingerprint() == fp
