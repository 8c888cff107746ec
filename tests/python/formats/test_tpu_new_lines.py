"""Newer TPU layouts (v5p / v6e / v7, recent XProf): `_counters_`, `Steps` and `Tensor Core Sync
Flag` lines on /device:TPU:N planes, SparseCore planes, the Megascale Trace plane of DCN transfers
and more Task Environment stats. No fixture is such a capture: tpu_new_lines.py adds them, with
the names XLA's profiler schema gives them, to the real tpu_4chip_inference profile.

None of them carries op events jaxprof or XProf count: every op figure stays that of the
unmodified profile, except the steps, which a device "Steps" line gives (docs/steps.md), and
summary's critical path, which follows them. `info`
lists every added line and `export` writes every event of them."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import ops_check as oc
import tpu_new_lines as tnl

FIXTURE = oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb"
OP_COMMANDS = ("ops", "timeline", "modules", "summary", "roofline", "collectives", "flame")


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    if not FIXTURE.is_file():
        pytest.skip(f"{FIXTURE} missing")
    root = tmp_path_factory.mktemp("tpu_new_lines")
    out = {}
    cases = [("base", [])] + [(v, [v]) for v in tnl.VARIANTS] + [("all", list(tnl.VARIANTS))]
    for name, vs in cases:
        (root / name).mkdir()
        out[name] = tnl.build(FIXTURE, vs, root / name / "tpu.xplane.pb")
    return out


def run_json(binary, *args) -> dict:
    proc = oc.run_cli(binary, [*map(str, args), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    result = json.loads(proc.stdout)
    result.pop("input", None)  # names the file
    return result


def test_added_lines_leave_op_figures_unchanged(jaxprof_bin, variants):
    for cmd in OP_COMMANDS:
        base = run_json(jaxprof_bin, cmd, variants["base"])
        got = run_json(jaxprof_bin, cmd, variants["all"])
        if cmd == "modules":
            # The only change: steps from the devices' Steps lines (test below).
            assert base["steps"]["source"] == "none"
            base.pop("steps"), got.pop("steps")
        if cmd == "summary":
            # Steps to follow: the critical path of the median steady step (the base has none).
            assert "marks no steps" in base.pop("critical_path")["unavailable"]
            assert got.pop("critical_path")["step_source"] == "steps-line"
        assert got == base, cmd
    for v in ("counters", "sparsecore", "megascale", "task_env"):
        # Counter samples are no op time and no busy time: ops and timeline as before.
        for cmd in ("ops", "timeline", "modules"):
            assert run_json(jaxprof_bin, cmd, variants[v]) == run_json(
                jaxprof_bin, cmd, variants["base"]), (v, cmd)


def test_memory_and_kernels_name_the_chips_only(jaxprof_bin, variants):
    # The Megascale Trace is no device: memory still names the TPUs' allocators "TPU:N", and
    # kernels lists only the planes ops reports (no SparseCore, no Megascale Trace).
    for cmd in ("memory", "kernels"):
        base = run_json(jaxprof_bin, cmd, variants["base"])
        assert run_json(jaxprof_bin, cmd, variants["all"]) == base, cmd
    memory = run_json(jaxprof_bin, "memory", variants["megascale"])
    assert [d["device"] for d in memory["devices"]] == ["TPU:0", "TPU:1", "TPU:2", "TPU:3"]


def test_device_steps_line_gives_the_steps(jaxprof_bin, variants):
    got = run_json(jaxprof_bin, "modules", variants["steps"])["steps"]
    assert got["source"] == "steps-line"
    # tpu_new_lines makes one step per module execution of the device.
    assert len(got["steps"]) == 105
    assert got["steady_steps"] > 0


def plane_lines(info: dict) -> dict:
    return {p["name"]: {l["name"]: l["events"] for l in p["lines"]} for p in info["planes"]}


def test_info_lists_every_added_line(jaxprof_bin, variants):
    lines = plane_lines(run_json(jaxprof_bin, "info", variants["all"], "--all-lines"))
    for chip in range(4):
        tpu = lines[f"/device:TPU:{chip}"]
        assert tpu["_counters_"] > 0 and tpu["Steps"] > 0 and tpu["Tensor Core Sync Flag"] > 0
        for core in range(2):
            sc = lines[f"/device:TPU:{chip} SparseCore {core}"]
            assert set(sc) == {"Sparse Core Steps", "Sparse Core Modules", "Sparse Core Ops",
                               "Sparse Core Syncs"}
    assert sum(lines["/device:CUSTOM:Megascale Trace"].values()) == 480
    text = oc.run_cli(jaxprof_bin, ["info", str(variants["all"]), "--all-lines"]).stdout.decode()
    for name in ("_counters_", "Tensor Core Sync Flag", "Sparse Core Ops", "Megascale Trace",
                 "device_200003_gid_rendezvous1"):
        assert name in text, name
    info = run_json(jaxprof_bin, "info", variants["task_env"])
    (env,) = [p for p in info["planes"] if p["name"] == "Task Environment"]
    assert env["stats"]["multi_slice_topology"] == "2x1"


def test_info_prints_program_ids_whole(jaxprof_bin, variants):
    # 64-bit program ids lose their low digits as doubles.
    text = oc.run_cli(jaxprof_bin, ["info", str(variants["base"])]).stdout.decode()
    assert "9646411105960254074" in text and "9646411105960253440" not in text
    for cmd in (["modules"], ["ops", "--group-by", "module"]):
        text = oc.run_cli(jaxprof_bin, [*cmd, str(variants["base"])]).stdout.decode()
        assert "12190760917235803885" in text, cmd


def test_export_writes_every_event_of_the_added_lines(jaxprof_bin, variants, tmp_path):
    out = tmp_path / "t.json"
    proc = oc.run_cli(jaxprof_bin, ["export", str(variants["all"]), "--perfetto", str(out)])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    assert b"not exported" not in proc.stderr
    trace = json.loads(out.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    procs, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        if e.get("ph") == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    written = Counter((procs[e["pid"]], threads[(e["pid"], e["tid"])])
                      for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in threads)
    info = plane_lines(run_json(jaxprof_bin, "info", variants["all"], "--all-lines"))
    added = {"_counters_", "Steps", "Tensor Core Sync Flag"}
    for plane, lines in info.items():
        for line, n in lines.items():
            new_plane = "SparseCore" in plane or "Megascale" in plane
            if n and (new_plane or line in added):
                assert written[(plane, line)] == n, (plane, line)


def test_xprof_counts_the_same_ops(jaxprof_bin, variants, tmp_path):
    # XProf's op statistics leave SparseCore planes and counter lines out too.
    peer = pytest.importorskip("test_xprof_peer")
    theirs = peer.xprof_hlo_stats(variants["all"], tmp_path)
    ours = peer.jaxprof_by_program(jaxprof_bin, variants["all"])
    assert theirs
    assert set(ours) == {(str(r["program_id"]), r["hlo_op_name"]) for r in theirs}
    for row in theirs:
        mine = ours[(str(row["program_id"]), row["hlo_op_name"])]
        assert mine["count"] == int(row["occurrences"])
        assert mine["total_ps"] == peer.ps_of_us(row["total_time"])
