"""Labels and offline tuning of a lowered computation on real JAX (CPU): labels stamped by
jaxprof.autotune.label survive lowering and compilation, tune_lowered tunes each labelled
registered call once, and `with result:` applies the winners to what is traced inside the block,
restoring the previous configurations on exit (nested blocks, exceptions)."""
from __future__ import annotations

import re

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jaxprof import autotune as at  # noqa: E402

FAST = dict(repeats=8)


def dots(lowered) -> int:
    return len(re.findall(r"stablehlo\.dot_general", lowered.as_text()))


def test_labels_survive_lowering_and_compilation():
    key = at.call_key((jnp.ones((4, 4)),), static={"block": 2})
    assert at.label_text("matmul@v3", key) == f"jaxprof_ops#matmul.v3:{key}"

    def f(x):
        with at.label("matmul", key, version=3):
            y = x @ x
        with at.label("softmax", "k1", prefix="ejkernel_ops"):
            return jax.nn.softmax(y)

    lowered = jax.jit(f).lower(jnp.ones((4, 4)))
    for found in (at.extract_labels(lowered), at.extract_labels(lowered.compile())):
        assert [(x.op, x.version, x.call_key, x.complete, x.op_id) for x in found] == [
            ("matmul", 3, key, True, "matmul@v3")]
        assert found[0].occurrences >= 1
    other = at.extract_labels(lowered, prefix="ejkernel_ops")
    assert [(x.op_id, x.call_key) for x in other] == [("softmax@v1", "k1")]
    # Text and bytes work too; a label cut at '@' is reported incomplete.
    cut = at.extract_labels(b'op_name="jit(f)/jaxprof_ops#attn" jaxprof_ops#attn@v2:zz')
    assert [(x.op_id, x.complete) for x in cut] == [("attn", False), ("attn@v2", True)]
    with pytest.raises(ValueError):
        at.label_text("bad op", "k")
    with pytest.raises(ValueError):
        at.label_text("op", "key with space")
    with pytest.raises(TypeError):
        at.extract_labels(42)


def make_registry():
    reg = at.Registry()
    traced = []

    @at.register("chain", {"k": [8, 1, 3]}, registry=reg)
    def chain(x, *, k):
        traced.append((x.shape[0], k))
        for _ in range(k):
            x = jnp.tanh(x @ x)
        return x

    def model(x, y):
        return chain(x).sum() + chain(y).sum() + chain(x).sum()

    return reg, chain, model, traced


def test_tune_lowered_tunes_each_labelled_call_once_and_applies_winners(tmp_path):
    reg, chain, model, traced = make_registry()
    x, y = jnp.ones((64, 64)) / 64, jnp.ones((40, 40)) / 40
    lowered = jax.jit(model).lower(x, y)
    assert dots(lowered) == 3 * 8  # nothing applied: the default candidate, k=8
    labels = at.extract_labels(lowered)
    assert len(labels) == 2 and {lab.op_id for lab in labels} == {"chain@v1"}
    assert {lab.call_key for lab in labels} == {at.call_key((x,)), at.call_key((y,))}
    del traced[:]

    reg.cache = at.Cache(tmp_path / "c.sqlite")
    result = at.tune_lowered(lowered, reg, **FAST)
    # Two distinct calls (x is used twice), each candidate compiled once per call.
    assert sorted(traced) == sorted((n, k) for n in (64, 40) for k in (8, 1, 3))
    assert len(result) == 2 and not result.skipped
    assert all(e.config == {"k": 1} and e.source == "measured" for e in result.entries)
    assert all(e.timing.timing == "device" and e.timing.winner.config == {"k": 1}
               for e in result.entries)
    assert {(e.op, e.call_key) for e in reg.cache.list()} == {
        ("chain@v1", lab.call_key) for lab in labels}
    assert "chain@v1" in repr(result) and "<table>" in result._repr_html_()

    assert at.active_configs() == {}
    with result:
        assert set(at.active_configs()) == {("chain@v1", lab.call_key) for lab in labels}
        inside = jax.jit(model).lower(x, y)
        assert dots(inside) == 3 * 1
        manual = at.AutotuneResult(result.device, [
            at.AutotuneEntry("chain@v1", at.call_key((y,)), {"k": 3}, "manual")], [], reg)
        with manual:  # the inner block wins for y, x keeps the outer winner
            assert dots(jax.jit(model).lower(x, y)) == 2 * 1 + 3
        assert dots(jax.jit(model).lower(x, y)) == 3 * 1
    assert at.active_configs() == {}
    assert dots(jax.jit(model).lower(x, y)) == 3 * 8  # restored

    with pytest.raises(KeyError):
        with result:
            assert dots(jax.jit(model).lower(x, y)) == 3
            raise KeyError("boom")
    assert at.active_configs() == {}
    assert dots(jax.jit(model).lower(x, y)) == 3 * 8

    # With the cache holding the winners, tuning again measures nothing.
    del traced[:]
    again = at.tune_lowered(lowered, reg, **FAST)
    assert [e.source for e in again.entries] == ["cache", "cache"] and traced == []
    # Outside any block, ops fall back on the registry's cache (when traced: a fresh function
    # here, since JAX keeps the trace of `model` made before).
    assert dots(jax.jit(lambda a, b: model(a, b)).lower(x, y)) == 3 * 1
    reg.cache = None
    assert dots(jax.jit(model).lower(x, y)) == 3 * 8
    result.apply()  # for the rest of the process, and JAX traces again
    try:
        assert dots(jax.jit(model).lower(x, y)) == 3 * 1
        with manual:
            assert dots(jax.jit(model).lower(x, y)) == 2 * 1 + 3
    finally:
        result.unapply()
    assert at.active_configs() == {}
    assert dots(jax.jit(model).lower(x, y)) == 3 * 8


def test_tune_lowered_skips_what_it_cannot_tune():
    reg, chain, model, traced = make_registry()
    key = "0123abcd"

    def f(x):
        with at.label("unknown_op", key):
            x = x * 2
        with at.label("chain", "never-traced"):
            x = x + 1
        return chain(x)

    lowered = jax.jit(f).lower(jnp.ones((16, 16)))
    res = at.tune_lowered(lowered, reg, **FAST)
    reasons = dict(res.skipped)
    assert reasons[f"jaxprof_ops#unknown_op.v1:{key}"] == "op not registered"
    assert reasons["jaxprof_ops#chain.v1:never-traced"] == "call key never traced in this process"
    assert [e.op_id for e in res.entries] == ["chain@v1"]
