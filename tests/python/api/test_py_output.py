"""Python results print as the CLI's tables, and option errors name the argument as the caller
wrote it, with what it accepts."""
from __future__ import annotations

import re

import pytest

import ops_check

jaxprof = pytest.importorskip("jaxprof", reason="the jaxprof package is not installed (pip install .)")

EXAMPLE = ops_check.DATA_DIR / "jax_cpu_8dev"


@pytest.fixture(scope="module")
def profile():
    return jaxprof.load(EXAMPLE)


def test_results_print_as_tables(profile):
    ops = profile.ops()
    text = repr(ops)
    assert not text.startswith("<"), text
    assert re.search(r"total \((ns|us|ms|s)\)", text), text
    assert "/device:CPU:0" in text and str(ops) == ops.text
    # Printed: the largest 20 per device, and how to see the rest in Python terms.
    per_device = {}
    for r in ops.rows:
        per_device[r["device"]] = per_device.get(r["device"], 0) + 1
    if max(per_device.values()) > 20:
        assert "top=0 shows all" in text and "--top" not in text
    assert len(ops.rows) == sum(per_device.values())  # the data stays complete
    assert "count" in repr(profile.ops(top=3)).splitlines()[1]
    for result in (profile.timeline(), profile.modules(), profile.info(), profile.collectives(),
                   profile.compile(), profile.kernels(), profile.flame(), profile.summary()):
        shown = repr(result)
        assert shown and not re.match(r"<\w+: \d+ rows>", shown), type(result)


def test_flame_leaves_idle_out_by_default(profile):
    assert not [r for r in profile.flame().rows if r["kind"] == "idle"]
    assert [r for r in profile.flame(idle=True).rows if r["kind"] == "idle"]


def test_devices_in_natural_order(profile):
    assert profile.devices == [f"/device:CPU:{i}" for i in range(8)]


@pytest.mark.parametrize("call,written,accepted", [
    (lambda p: p.ops(group_by="nope"), "group_by='nope'", ["'opcode'", "'hlo-op'", "'kernel'"]),
    (lambda p: p.ops(match="("), "match=", []),
    (lambda p: p.kernels(device="re:("), "device=", []),
    (lambda p: p.collectives(device="re:[") , "device=", []),
    (lambda p: p.ops(min_duration_ns=-1), "min_duration_ns=-1", [">= 0"]),
    (lambda p: p.ops(top=-1), "top=-1", [">= 0"]),
    (lambda p: p.ops(max_events=1.5), "max_events=1.5", ["whole number"]),
    (lambda p: p.flame(by="line"), "by='line'", ["'source'", "'op-name'", "'module'"]),
    (lambda p: p.summary(top=-2), "top=-2", [">= 0"]),
])
def test_option_errors_name_the_argument(profile, call, written, accepted):
    with pytest.raises(jaxprof.InvalidOptionError) as e:
        call(profile)
    message = str(e.value)
    assert written in message, message
    assert "--" not in message, "no CLI flag names in Python errors"
    for a in accepted:
        assert a in message, message
    assert isinstance(e.value, ValueError)


def test_underscores_read_as_dashes(profile):
    assert profile.ops(group_by="hlo_op", top=1).data["group_by"] == "hlo-op"
    assert profile.flame(by="op_name").data
