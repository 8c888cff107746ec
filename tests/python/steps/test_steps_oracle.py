"""Per-step times of `jaxprof modules --format json` against steps_oracle.py: the committed
8-device capture (4 StepTraceAnnotation steps, step 0 compiles global_sse), profiles without
step marks, the TF V100 fixture (device "Steps" lines, group_id stats) and the TPU fixture with
a Steps line (and host annotations) added to a copy of it."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

import ops_check as oc
import steps_oracle as so
import xplane_oracle as xo

TF_V100 = oc.XPLANE_FIXTURES / "tf_v100_8gpu_training.xplane.pb"
TPU = oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb"


def _need(path):
    if not path.is_file():
        pytest.skip(f"fixture {path} not found")


def _ps(ns) -> int:
    v = Decimal(str(ns)) * 1000
    assert v == v.to_integral_value(), f"{ns} ns is not whole picoseconds"
    return int(v)


def modules_steps(binary, path):
    proc = oc.run_cli(binary, ["modules", str(path), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout.decode(), parse_float=Decimal)["steps"]


def check_against_oracle(binary, path):
    got = modules_steps(binary, path)
    source, want = so.steps_with_source(str(path))
    assert got["source"] == source
    assert len(got["steps"]) == len(want)
    for g, w in zip(got["steps"], want):
        assert g["number"] == w["number"]
        assert (_ps(g["start_ns"]), _ps(g["end_ns"])) == (w["start"], w["end"])
        assert g["windows"] == len(w["windows"])
        assert _ps(g["longest_window_ns"]) == max(x["end"] - x["start"] for x in w["windows"])
        if source == "steps-line":
            assert g["name"] == w["name"]
        assert g["executions"] == w["executions"], g["number"]
        assert _ps(g["device_ns"]) == w["device"], g["number"]
        assert g["warmup"] == w["warmup"], g["number"]
        assert g["compiling"] == w["compiling"], g["number"]
        mods = {(m["name"], m["program_id"]): m["executions"] for m in g["modules"]}
        assert mods == dict(w["modules"])
    steady = [w for w in want if not w["warmup"]] or want
    if want:
        assert got["steady_steps"] == len(steady)
        mean = sum(w["end"] - w["start"] for w in steady) / len(steady)
        assert abs(float(got["steady_mean_ns"]) * 1000 - mean) <= 1  # a mean: not whole ps
    return got


def test_cpu_8dev_steps_match_oracle(jaxprof_bin):
    got = check_against_oracle(jaxprof_bin, oc.ROOT / "tests" / "data" / "jax_cpu_8dev")
    steps = got["steps"]
    assert [s["number"] for s in steps] == [0, 1, 2, 3]
    # Step 0 compiles global_sse (tests/data/README.md): the warm-up step, reported apart.
    assert [s["warmup"] for s in steps] == [True, False, False, False]
    assert got["steady_steps"] == 3
    # Each step runs both programs once on each of the 8 devices.
    assert all(s["executions"] == 16 for s in steps)
    assert _ps(steps[0]["duration_ns"]) > 10 * _ps(steps[1]["duration_ns"])


def test_cpu_matmul_has_no_steps(jaxprof_bin):
    got = check_against_oracle(jaxprof_bin, oc.ROOT / "tests" / "data" / "jax_cpu_matmul")
    assert got == {"source": "none", "steady_steps": 0, "steady_mean_ns": 0,
                   "steady_device_mean_ns": 0, "steps": []}


def test_tf_v100_steps_lines(jaxprof_bin):
    _need(TF_V100)
    got = check_against_oracle(jaxprof_bin, TF_V100)
    assert got["source"] == "steps-line"
    # GPU:4 and GPU:6 each mark step 0 (group 0, step_name "0") on their Steps line; they run it
    # about 650 ms apart, so the merged span is far longer than either device's window.
    (step,) = got["steps"]
    assert (step["number"], step["name"], step["windows"]) == (0, "0", 2)
    windows = so.steps_line_windows(str(TF_V100))
    assert sorted(w["device"] for w in windows) == ["/device:GPU:4", "/device:GPU:6"]
    assert _ps(step["longest_window_ns"]) == max(w["end"] - w["start"] for w in windows)
    assert _ps(step["duration_ns"]) > 30 * _ps(step["longest_window_ns"])
    # TF's profiler derives the Steps lines from group ids: the group_id spans of the device
    # events are the same windows.
    key = lambda w: (w["device"], w["number"], w["start"], w["end"])  # noqa: E731
    assert sorted(map(key, so.group_id_windows(str(TF_V100)))) == sorted(map(key, windows))


def _without_steps_lines(src, dst):
    space = xo.load_xspace(str(src))
    removed = 0
    for plane in space.planes:
        keep = [line for line in plane.lines if line.name != "Steps"]
        removed += len(plane.lines) - len(keep)
        del plane.lines[:]
        plane.lines.extend(keep)
    assert removed == 2
    dst.write_bytes(space.SerializeToString())


def test_tf_v100_group_ids_without_steps_lines(jaxprof_bin, tmp_path):
    _need(TF_V100)
    path = tmp_path / "tf.xplane.pb"
    _without_steps_lines(TF_V100, path)
    got = check_against_oracle(jaxprof_bin, path)
    assert got["source"] == "group-id"
    with_lines = modules_steps(jaxprof_bin, TF_V100)
    fields = ("number", "start_ns", "end_ns", "windows", "longest_window_ns")
    assert [[s[f] for f in fields] for s in got["steps"]] == \
        [[s[f] for f in fields] for s in with_lines["steps"]]


def _tpu_with_steps(dst, per_step=4, first=10, host_steps=0):
    """The TPU fixture plus, on each TPU plane, a Steps line (TPU style: events named by their
    step number, no stats) whose step k spans executions per_step*k .. per_step*k+per_step-2 of
    the XLA Modules line: every per_step-th execution starts between two steps. With host_steps,
    also that many StepTraceAnnotation-like events (train, step_num) on a new host line."""
    space = xo.load_xspace(str(TPU))
    for plane in space.planes:
        if plane.name.startswith("/device:TPU:"):
            (mods,) = [line for line in plane.lines if line.name == "XLA Modules"]
            evs = sorted(mods.events, key=lambda e: e.offset_ps)
            steps = plane.lines.add()
            steps.id, steps.name, steps.timestamp_ns = 99, "Steps", mods.timestamp_ns
            next_id = max(plane.event_metadata.keys()) + 1
            for k in range(len(evs) // per_step):
                run = evs[per_step * k: per_step * k + per_step - 1]
                md = plane.event_metadata[next_id]
                md.id, md.name = next_id, str(first + k)
                next_id += 1
                ev = steps.events.add()
                ev.metadata_id = md.id
                ev.offset_ps = run[0].offset_ps
                ev.duration_ps = run[-1].offset_ps + run[-1].duration_ps - run[0].offset_ps
        if plane.name == "/host:CPU" and host_steps:
            sid = max(plane.stat_metadata.keys()) + 1
            plane.stat_metadata[sid].id, plane.stat_metadata[sid].name = sid, "step_num"
            mid = max(plane.event_metadata.keys()) + 1
            plane.event_metadata[mid].id, plane.event_metadata[mid].name = mid, "train"
            line = plane.lines.add()
            line.id, line.name = 7, "python3"
            line.timestamp_ns = plane.lines[0].timestamp_ns
            # One second each from 19.5 s on the device clock, where jit_f runs on every chip.
            first_ps = 19_500_000_000_000 - line.timestamp_ns * 1000
            for k in range(host_steps):
                ev = line.events.add()
                ev.metadata_id = mid
                ev.offset_ps, ev.duration_ps = first_ps + k * 10**12, 10**12 - 1000
                st = ev.stats.add()
                st.metadata_id, st.int64_value = sid, k
    dst.write_bytes(space.SerializeToString())


def test_tpu_steps_line(jaxprof_bin, tmp_path):
    _need(TPU)
    path = tmp_path / "tpu.xplane.pb"
    _tpu_with_steps(path)
    got = check_against_oracle(jaxprof_bin, path)
    assert got["source"] == "steps-line"
    steps = got["steps"]
    assert [s["number"] for s in steps] == list(range(10, 10 + len(steps)))
    assert [s["name"] for s in steps] == [str(s["number"]) for s in steps]
    # 4 devices, 103 to 105 executions each: 25 or 26 steps per device, 3 executions in each.
    assert len(steps) == 26
    assert sum(s["executions"] for s in steps) == 3 * (26 + 3 * 25)
    assert steps[0]["warmup"] and not steps[-1]["warmup"]


def test_host_annotations_take_precedence(jaxprof_bin, tmp_path):
    _need(TPU)
    path = tmp_path / "tpu.xplane.pb"
    _tpu_with_steps(path, host_steps=3)
    got = check_against_oracle(jaxprof_bin, path)
    assert got["source"] == "host-annotation"
    assert [(s["number"], s["name"], s["windows"]) for s in got["steps"]] == \
        [(0, "train", 1), (1, "train", 1), (2, "train", 1)]
    assert all(s["executions"] > 0 for s in got["steps"])
