"""TPU op times come from the device's own clock (device_offset_ps / device_duration_ps stats),
placement on the timeline from the host-aligned one (docs/clocks.md).

The expected figures are computed here from the file's raw stats with the independent decoder
(xplane_oracle), not from jaxprof's code; the synthetic profiles pin the cases the real one has
(an op the aligned copy clipped to nothing, an aligned copy that looks nested) on a few events."""
from __future__ import annotations

import json
import subprocess
from collections import defaultdict

import pytest

import xplane_oracle as xo
from xspace_builder import SpaceBuilder, U64

TPU = "tpu_4chip_inference.xplane.pb"


def run_json(binary, *args):
    proc = subprocess.run([str(binary), *map(str, args), "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def raw_op_totals(path):
    """Per (device, op name): count and summed duration, from the raw stats, both clocks."""
    space = xo.load_xspace(str(path))
    device, aligned = defaultdict(int), defaultdict(int)
    count = defaultdict(int)
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU"):
            continue
        stats = xo._PlaneStats(plane)
        for line in plane.lines:
            if line.name != "XLA Ops":
                continue
            for ev in line.events:
                own = stats._first_by_name(ev.stats)
                name = stats.event_md[ev.metadata_id].name
                op = name[1:name.index(" = ")] if name.startswith("%") else name
                key = (plane.name, op)
                count[key] += 1
                device[key] += own["device_duration_ps"]
                aligned[key] += ev.duration_ps
    return count, device, aligned


@pytest.fixture(scope="module")
def tpu_path(xplane_fixtures):
    p = xplane_fixtures / TPU
    if not p.is_file():
        pytest.skip(f"{p} missing")
    return p


@pytest.fixture(scope="module")
def tpu_ops(jaxprof_bin, tpu_path):
    # The oracle sums every op event of the file: count all work, warm-up included
    # (docs/steady-state.md sets the first run of each program apart by default).
    return run_json(jaxprof_bin, "ops", tpu_path, "--include-autotuning", "--include-warmup")


def test_tpu_op_totals_are_device_clock_sums(tpu_ops, tpu_path):
    count, device, aligned = raw_op_totals(tpu_path)
    seen = 0
    moved = 0
    for d in tpu_ops["devices"]:
        assert d["duration_clock"] == "device"
        assert d["device_clock_events"] == d["events"]
        for g in d["groups"]:
            key = (d["device"], g["name"])
            assert g["count"] == count[key], key
            assert round(g["total_ns"] * 1000) == device[key], key
            seen += 1
            moved += device[key] != aligned[key]
    assert seen == len(count)
    # The host-aligned copy would have given other totals for these (the reported bug).
    assert moved > 0


def test_tpu_known_ops_moved_by_the_aligned_copy(tpu_ops, tpu_path):
    _, device, aligned = raw_op_totals(tpu_path)
    d0 = next(d for d in tpu_ops["devices"] if d["device"] == "/device:TPU:0")
    by_name = {g["name"]: g for g in d0["groups"]}
    for op in ("copy-done.2", "copy-done.4", "broadcast_add_fusion"):
        key = ("/device:TPU:0", op)
        assert round(by_name[op]["total_ns"] * 1000) == device[key]
        assert abs(device[key] - aligned[key]) > device[key] // 20  # more than 5% apart


def test_tpu_summary_and_modules_say_device_clock(jaxprof_bin, tpu_path):
    s = run_json(jaxprof_bin, "summary", tpu_path)
    assert s["op_duration_clock"] == "device"


def test_tpu_flame_weights_on_device_clock(jaxprof_bin, tpu_path, tpu_ops):
    """An op's flame width is its self time on the device clock (TPU op lines do not nest)."""
    flame = run_json(jaxprof_bin, "flame", tpu_path, "--by", "module", "--no-idle",
                     "--include-autotuning", "--include-warmup")  # as tpu_ops: all work
    # Sum of all frames of one device = its device-clock busy time = sum of self times there.
    for d in tpu_ops["devices"]:
        self_total = sum(round(g["self_ns"] * 1000) for g in d["groups"])
        dev = next(x for x in flame["devices"] if x["device"] == d["device"])
        assert round(dev["busy_ns"] * 1000) == self_total


def test_python_events_and_compat_profiler(tpu_path):
    jaxprof = pytest.importorskip("jaxprof")
    prof = jaxprof.load(str(tpu_path))
    ev = prof.events(device="/device:TPU:0")
    count, device, _ = raw_op_totals(tpu_path)
    total = int(ev.op_duration_ps.sum())
    assert total == sum(v for (dev, _), v in device.items() if dev == "/device:TPU:0")
    assert (ev.op_duration_ps != ev.duration_ps).any()


# --- synthetic: the cases on a few events ------------------------------------------------------

def build_clipped(path):
    """One TPU op line. Aligned copy: A [0, 10) then B clipped to nothing at 10 and C [10, 20),
    which reads as B nested in C; device clock: A 10 long, B 8, C 10, one after another."""
    space = SpaceBuilder()
    tpu = space.plane("/device:TPU:0")
    md = {n: tpu.event_md(f"%{n} = f32[] fusion()", stats={"program_id": U64(7)})
          for n in ("a", "b", "c")}
    line = tpu.line(3, "XLA Ops", timestamp_ns=0)
    ns = 1000
    tpu.event(line, md["a"], 0, 10 * ns,
              stats={"device_offset_ps": 1000 * ns, "device_duration_ps": 10 * ns})
    tpu.event(line, md["c"], 10 * ns, 10 * ns,
              stats={"device_offset_ps": 1018 * ns, "device_duration_ps": 10 * ns})
    tpu.event(line, md["b"], 10 * ns, 0,
              stats={"device_offset_ps": 1010 * ns, "device_duration_ps": 8 * ns})
    space.write(path)


def test_synthetic_clipped_op(jaxprof_bin, tmp_path):
    path = tmp_path / "clipped.xplane.pb"
    build_clipped(path)
    out = run_json(jaxprof_bin, "ops", path)
    (dev,) = out["devices"]
    g = {x["name"]: x for x in dev["groups"]}
    assert g["b"]["total_ns"] == 8 and g["b"]["self_ns"] == 8
    assert g["c"]["total_ns"] == 10 and g["c"]["self_ns"] == 10  # B is not nested in C
    assert g["a"]["self_ns"] == 10
    # Placement stays on the aligned timeline: busy [0, 20).
    assert dev["busy_ns"] == 20 and dev["span_ns"] == 20
    # The oracle (raw stats, own decoder) agrees.
    (ref,) = xo.ops(xo.analyze_path(str(path)))
    for grp in ref["groups"]:
        assert g[grp.name]["total_ns"] * 1000 == grp.total_ps
        assert g[grp.name]["self_ns"] * 1000 == grp.self_ps


def test_synthetic_device_clock_nesting(jaxprof_bin, tmp_path):
    """Nesting is decided on the device clock: a parent and a child there."""
    space = SpaceBuilder()
    tpu = space.plane("/device:TPU:0")
    p = tpu.event_md("%while.1 = () while()", stats={"program_id": U64(7)})
    c = tpu.event_md("%fusion.2 = f32[] fusion()", stats={"program_id": U64(7)})
    line = tpu.line(3, "XLA Ops", timestamp_ns=0)
    tpu.event(line, p, 0, 50_000, stats={"device_offset_ps": 500_000, "device_duration_ps": 40_000})
    tpu.event(line, c, 45_000, 10_000,
              stats={"device_offset_ps": 510_000, "device_duration_ps": 10_000})
    path = tmp_path / "nested.xplane.pb"
    space.write(path)
    out = run_json(jaxprof_bin, "ops", path)
    g = {x["name"]: x for x in out["devices"][0]["groups"]}
    assert g["while.1"]["total_ns"] == 40 and g["while.1"]["self_ns"] == 30
    assert g["fusion.2"]["self_ns"] == 10
