"""`jaxprof summary` JSON on every profile: its sections agree with the commands they come from
(timeline, ops, collectives, compile) and with the independent ops oracle, and `jaxprof PATH`
runs it."""
from __future__ import annotations

from collections import defaultdict

import pytest

import ops_check as oc
import xplane_oracle as xo

CASES = oc.profile_cases()


def run_json(binary, *args):
    # The oracles count every event: the steady state is tested in test_steady_state.py.
    flags = oc.EVERYTHING if args[0] != "compile" else ()
    proc = oc.run_cli(binary, [*map(str, args), "--format", "json", *flags])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return oc.parse_json(proc.stdout)


@pytest.mark.parametrize("path", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_summary_fields(jaxprof_bin, path):
    path = oc.require_profile(path)
    s = run_json(jaxprof_bin, "summary", path)
    d = s["device"]
    assert d["compute_ns"] + d["comm_exposed_ns"] + d["memcpy_exposed_ns"] + d["idle_ns"] == \
        d["span_ns"]
    assert d["idle_in_modules_ns"] + d["idle_between_modules_ns"] == d["idle_ns"]
    if d["span_ns"]:
        assert abs(d["idle_share"] - d["idle_ns"] / d["span_ns"]) < 1e-12

    # Ops: per (module, op) over all devices, from the independent oracle.
    devices = oc.oracle_devices(str(path))
    assert d["devices"] == len(devices)
    busy = sum(dev.busy_ps for dev in devices)
    oc.check_ns("busy", d["busy_ns"], busy)
    want = defaultdict(lambda: [0, 0, 0])
    for g in (g for dev in xo.ops(devices, "hlo-op") for g in dev["groups"]):
        w = want[(g.module, g.name)]
        w[0] += g.count
        w[1] += g.total_ps
        w[2] += g.self_ps
    ranked = sorted(want.items(), key=lambda kv: (-kv[1][2], kv[0][1]))
    assert len(s["ops"]) == min(5, len(ranked))
    for got, ((module, name), (count, total, self_ps)) in zip(s["ops"], ranked):
        assert (got["module"], got["name"]) == (module, name)
        assert got["count"] == count
        oc.check_ns(f"{name} total", got["total_ns"], total)
        oc.check_ns(f"{name} self", got["self_ns"], self_ps)
        assert abs(float(got["share"]) - self_ps / busy) < 1e-12

    # Compile and collectives: the same numbers as their own commands.
    comp = run_json(jaxprof_bin, "compile", path)
    assert s["compile"]["wall_ns"] == comp["wall_ns"]
    assert s["compile"]["compiles"] == comp["compiles"]
    coll = run_json(jaxprof_bin, "collectives", path)
    exposed = {(o["module"], o["name"]): o["exposed_ns"] for o in coll["ops"]}
    for c in s["collectives"]:
        assert exposed[(c["module"], c["name"])] == c["exposed_ns"]

    assert len(s["observations"]) <= 3
    times = [o["time_ns"] for o in s["observations"]]
    assert times == sorted(times, reverse=True)
    for o in s["observations"]:
        assert o["rule"] and o["text"]


def test_bare_path_runs_summary(jaxprof_bin):
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_matmul")
    bare = oc.run_cli(jaxprof_bin, [str(path)])
    named = oc.run_cli(jaxprof_bin, ["summary", str(path)])
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout == named.stdout
    assert b"Observations" in bare.stdout
