"""`jaxprof collectives` on real JAX captures (CPU backend, 8 host devices).

(a) The committed 8-device MLP capture: the gradient all-reduce carries exactly the bytes of the
    model's parameters (known shapes in tests/data/capture_cpu_profiles.py) plus the loss scalar
    that GSPMD reduces in the same all-reduce, over N = 8 devices.
(b) A fresh capture made here of an all-gather, a reduce-scatter and an all-reduce of chosen
    shapes: exact message sizes, N, the bandwidth arithmetic from the measured durations, and
    durations, hidden/exposed split and straggler waits recomputed from the raw events with the
    independent decoder in xplane_oracle.py."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

import ops_check as oc
import xplane_oracle as xo

N_DEVICES = 8
# The MLP of capture_cpu_profiles.py: w1 32x64, b1 64, w2 64x16, b2 16, all float32.
MLP_PARAM_ELEMENTS = [32 * 64, 64, 64 * 16, 16]
F32 = 4


def run_collectives(binary, path, *extra):
    proc = oc.run_cli(binary, ["collectives", str(path), "--format", "json", *oc.EVERYTHING,
                               *extra])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return oc.parse_json(proc.stdout)


def _dec(x) -> Fraction:
    return Fraction(Decimal(x))


def check_bandwidth(op):
    """algbw = correction * bytes * count / total time; busbw = algbw * bus factor (nccl-tests)."""
    n = op["group_size"]
    factor = {"all-reduce": Fraction(2 * (n - 1), n), "all-gather": Fraction(n - 1, n),
              "reduce-scatter": Fraction(n - 1, n), "all-to-all": Fraction(n - 1, n)}.get(
                  op["opcode"], Fraction(1))
    correction = n if op["opcode"] == "all-gather" else 1
    assert _dec(op["size_correction"]) == correction
    assert abs(_dec(op["bus_factor"]) - factor) < Fraction(1, 10**12)
    # bytes per ns = GB/s
    algbw = Fraction(correction * op["message_bytes"] * op["count"]) / _dec(op["total_ns"])
    assert abs(_dec(op["algbw_gbps"]) / algbw - 1) < Fraction(1, 10**9), op
    assert abs(_dec(op["busbw_gbps"]) / (algbw * factor) - 1) < Fraction(1, 10**9), op


# ---------------------------------------------------------------------------
# (a) the committed capture
# ---------------------------------------------------------------------------

def test_mlp_gradient_all_reduce(jaxprof_bin):
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_8dev")
    got = run_collectives(jaxprof_bin, path)
    ops = {(o["module"], o["name"]): o for o in got["ops"]}
    grad = ops[("jit_train_step", "all-reduce.5")]
    assert grad["opcode"] == "all-reduce" and not grad["async"]
    assert grad["group_size"] == N_DEVICES and grad["group_size_from"] == "replica_groups"
    # Every parameter's gradient, plus the f32[] loss that GSPMD folds into the same all-reduce.
    assert grad["message_bytes"] == F32 * sum(MLP_PARAM_ELEMENTS) + F32 == 12612
    shapes = grad["operand_shapes"].split(", ")
    elements = sorted(eval("*".join(s[4:-1].split(",")) or "1") for s in shapes)
    assert elements == sorted(MLP_PARAM_ELEMENTS + [1])
    assert grad["count"] == 4 * N_DEVICES and grad["devices"] == N_DEVICES
    assert grad["instances"] == 4 and grad["multi_device_instances"] == 4
    check_bandwidth(grad)

    psum = ops[("jit_global_sse", "psum_invariant.7")]
    assert psum["message_bytes"] == F32 and psum["group_size"] == N_DEVICES
    check_bandwidth(psum)
    # Durations: the committed README's sums of the two ops (tests/data/README.md).
    assert _dec(grad["total_ns"]) * 1000 == 34604103000
    assert _dec(psum["total_ns"]) * 1000 == 8635646000
    # CPU devices run one op at a time: nothing hides a collective.
    assert grad["hidden_ns"] == 0 and grad["exposed_ns"] == grad["total_ns"]


# ---------------------------------------------------------------------------
# (b) a fresh capture of known collectives
# ---------------------------------------------------------------------------

AG, RS, AR = 4096, 2048, 3000  # float32 elements per device (RS: the per-device output shard)

CAPTURE = textwrap.dedent(f"""
    import os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax, numpy as np
    from jax.sharding import Mesh, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ("d",))

    def smap(f, in_spec, out_spec):
        return jax.jit(jax.shard_map(f, mesh=mesh, in_specs=(in_spec,), out_specs=out_spec,
                                     check_vma=False))

    # One collective per program, so that XLA cannot combine them.
    gather = smap(lambda x: jax.lax.all_gather(x, "d", tiled=True), P("d"), P())
    scatter = smap(lambda y: jax.lax.psum_scatter(y, "d", tiled=True), P(None), P("d"))
    reduce = smap(lambda z: jax.lax.psum(z, "d"), P("d"), P())
    work = [(gather, np.arange(8 * {AG}, dtype=np.float32)),
            (scatter, np.ones(8 * {RS}, dtype=np.float32)),
            (reduce, np.ones(8 * {AR}, dtype=np.float32))]
    for f, a in work:
        jax.block_until_ready(f(a))  # compile before tracing
    opts = jax.profiler.ProfileOptions()
    opts.session_id = "session"
    with jax.profiler.trace(sys.argv[1], profiler_options=opts):
        for _ in range(3):
            for f, a in work:
                jax.block_until_ready(f(a))
""")
RUNS = 3


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Path:
    pytest.importorskip("jax", reason="jax is needed to capture profiles (pip install jax)")
    out = tmp_path_factory.mktemp("collectives")
    script = out / "capture.py"
    script.write_text(CAPTURE)
    proc = subprocess.run([sys.executable, str(script), str(out / "logs")], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / "logs"


def test_fresh_capture_sizes_and_group_sizes(jaxprof_bin, captured):
    got = run_collectives(jaxprof_bin, captured)
    by_opcode = {o["opcode"]: o for o in got["ops"]}
    assert set(by_opcode) == {"all-gather", "reduce-scatter", "all-reduce"}
    # all-gather's operand is the device's shard; reduce-scatter's is the full N-shard buffer.
    assert by_opcode["all-gather"]["message_bytes"] == F32 * AG
    assert by_opcode["reduce-scatter"]["message_bytes"] == F32 * N_DEVICES * RS
    assert by_opcode["all-reduce"]["message_bytes"] == F32 * AR
    assert by_opcode["all-gather"]["operand_shapes"] == f"f32[{AG}]"
    assert by_opcode["reduce-scatter"]["operand_shapes"] == f"f32[{N_DEVICES * RS}]"
    for op in got["ops"]:
        assert op["group_size"] == N_DEVICES, op
        assert op["count"] == RUNS * N_DEVICES and op["devices"] == N_DEVICES
        assert op["instances"] == RUNS
        check_bandwidth(op)
    sizes = {(s["opcode"], s["group_size"], s["message_bytes"]): s for s in got["sizes"]}
    assert set(sizes) == {(o["opcode"], N_DEVICES, o["message_bytes"]) for o in got["ops"]}
    assert "nccl-tests" in got["bandwidth_convention"]


def test_fresh_capture_times_and_waits_match_raw_events(jaxprof_bin, captured):
    got = run_collectives(jaxprof_bin, captured, "--instances")
    devices = oc.oracle_devices(str(captured))
    # Executions per (program, op): on each device in time order; instance k = the k-th on each.
    per_op = defaultdict(lambda: defaultdict(list))
    compute = defaultdict(list)
    for d in devices:
        for e in sorted(d.events, key=lambda e: e.start_ps):
            if e.opcode in ("all-gather", "reduce-scatter", "all-reduce"):
                per_op[(e.program_id, e.hlo_op)][d.device].append(e)
            else:
                compute[d.device].append((e.start_ps, e.end_ps))
    assert len(per_op) == 3
    ops = {o["name"]: o for o in got["ops"]}
    for (_, name), by_device in per_op.items():
        op = ops[name]
        durations = [e.dur_ps for evs in by_device.values() for e in evs]
        assert _dec(op["total_ns"]) * 1000 == sum(durations)
        assert _dec(op["min_ns"]) * 1000 == min(durations)
        assert _dec(op["max_ns"]) * 1000 == max(durations)
        # Exposed = interval minus the union of compute ops on the same device.
        exposed = 0
        for dev, evs in by_device.items():
            for e in evs:
                covered = xo.union_length(
                    (max(s, e.start_ps), min(t, e.end_ps)) for s, t in compute[dev]
                    if s < e.end_ps and t > e.start_ps)
                exposed += e.dur_ps - covered
        assert _dec(op["exposed_ns"]) * 1000 == exposed
        assert _dec(op["hidden_ns"]) * 1000 == sum(durations) - exposed
        waits, late = [], defaultdict(int)
        for k in range(RUNS):
            inst = [evs[k] for evs in by_device.values()]
            first = min(e.start_ps for e in inst)
            last = max(e.end_ps for e in inst)
            fastest = min(e.dur_ps for e in inst)
            waits.append(last - first - fastest)
            latest = max(e.start_ps for e in inst)
            late[min(dev for dev, evs in by_device.items() if evs[k].start_ps == latest)] += 1
        assert _dec(op["wait_total_ns"]) * 1000 == sum(waits)
        assert _dec(op["wait_max_ns"]) * 1000 == max(waits)
        assert op["late_count"] == max(late.values())
        mine = sorted(_dec(i["wait_ns"]) * 1000 for i in got["instances"] if i["name"] == name)
        assert mine == sorted(waits)
        assert all(i["devices"] == N_DEVICES and i["run_id"] is not None
                   for i in got["instances"] if i["name"] == name)
    late_total = sum(d["late_count"] for d in got["devices"])
    assert late_total == got["multi_device_instances"] == 3 * RUNS
    assert got["most_late_count"] == max(d["late_count"] for d in got["devices"])


def test_profiles_without_collectives(jaxprof_bin, xplane_fixtures):
    got = run_collectives(jaxprof_bin, xplane_fixtures / "mi300x_jax_gemm.xplane.pb")
    assert got["ops"] == [] and got["sizes"] == []
    table = oc.run_cli(jaxprof_bin, ["collectives",
                                     str(xplane_fixtures / "mi300x_jax_gemm.xplane.pb")])
    assert table.returncode == 0 and b"no collective ops" in table.stdout
