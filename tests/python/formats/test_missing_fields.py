"""Profiles that lack a field jaxprof reads: jaxprof says which figures go without it and falls
back the way the format's own tools do. Each case is a real fixture with the field taken out
(or converted by the tool that drops it); layouts.json lists every layout, what it lacks and the
test that covers it (docs/design.md, "Missing fields and what they affect")."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import ops_check as oc
import timeline_oracle as to

HERE = Path(__file__).resolve().parent
ELEMENTWISE = oc.XPLANE_FIXTURES / "mi300x_jax_elementwise.xplane.pb"


def run_json(binary, *args) -> dict:
    proc = oc.run_cli(binary, [*map(str, args), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout)


def per_program(result: dict) -> dict:
    """(program id, flops, bytes) per op, the op named as jaxprof names it."""
    out = {}
    for d in result["devices"]:
        for o in d["ops"]:
            key = (o["program_id"], o["flops"], o["bytes_accessed"])
            out[key] = out.get(key, 0) + o["total_ns"]
    return out


def strip_xspace(src: Path, dst: Path, drop_plane=None, drop_stat=None) -> int:
    """A copy of `src` without the planes named `drop_plane` and without the stat named
    `drop_stat` on events and event metadata; returns how many stats were taken out."""
    import xplane_oracle as xo
    space = xo.load_xspace(str(src))
    if drop_plane:
        keep = [p for p in space.planes if p.name != drop_plane]
        del space.planes[:]
        space.planes.extend(keep)
    dropped = 0
    for plane in space.planes if drop_stat else []:
        ids = {k for k, v in plane.stat_metadata.items() if v.name == drop_stat}
        holders = [e for line in plane.lines for e in line.events]
        holders += list(plane.event_metadata.values())
        for h in holders:
            keep = [s for s in h.stats if s.metadata_id not in ids]
            dropped += len(h.stats) - len(keep)
            if len(keep) != len(h.stats):
                del h.stats[:]
                h.stats.extend(keep)
    dst.write_bytes(space.SerializeToString())
    return dropped


def write_hlo_protos(src: Path, out_dir: Path) -> int:
    """The HloProtos of `src`'s /host:metadata as `<module>(<program id>).hlo_proto.pb` files."""
    import xplane_oracle as xo
    n = 0
    for plane in xo.load_xspace(str(src)).planes:
        if plane.name != "/host:metadata":
            continue
        stats = xo._PlaneStats(plane)
        for key, md in plane.event_metadata.items():
            blob = stats.metadata_stats(key).get("Hlo Proto")
            if isinstance(blob, bytes):
                (out_dir / f"{md.name}.hlo_proto.pb").write_bytes(blob)
                n += 1
    return n


def test_xplane_without_hlo_protos_says_roofline_costs_are_unknown(jaxprof_bin, tmp_path):
    src = oc.require_profile(ELEMENTWISE)
    bare = tmp_path / "bare" / "vm.xplane.pb"
    bare.parent.mkdir()
    strip_xspace(src, bare, drop_plane="/host:metadata")
    r = run_json(jaxprof_bin, "roofline", bare)
    (w,) = [w for w in r["warnings"] if "carries no HLO" in w]
    assert "unknown for 13 ops naming an HLO op (98.8% of op time)" in w, w
    assert "FLOPs, bytes" in w and ".hlo.pb" in w
    ops = [o for d in r["devices"] for o in d["ops"]]
    assert all(o["flops"] is None for o in ops)
    assert {o["detail"] for o in ops if o["source"] == "unknown"} == {
        "the profile carries no HLO", "no HLO op and no stats"}
    # The fallback XProf and jaxprof share: the programs' HLO given beside the profile.
    assert write_hlo_protos(src, bare.parent) == 16
    given = run_json(jaxprof_bin, "roofline", bare.parent)  # a run directory reads them
    assert not [w for w in given["warnings"] if "carries no HLO" in w]
    assert per_program(given) == per_program(run_json(jaxprof_bin, "roofline", src))
    # Programs 11 and 28 are both jit_add, with other shapes: given only 11's HLO, 28 stays
    # unknown rather than taking 11's FLOPs (the file's module id is program 11).
    one = run_json(jaxprof_bin, "roofline", bare, bare.parent / "jit_add(11).hlo_proto.pb")
    flops = {o["program_id"]: o["flops"] for d in one["devices"] for o in d["ops"]
             if o["name"] == "loop_convert_fusion"}
    assert flops[11] == 1342177280 and flops[28] is None


def test_kernels_without_hlo_op_are_matched_by_kernel_name(jaxprof_bin, tmp_path):
    src = oc.require_profile(ELEMENTWISE)
    bare = tmp_path / "vm.xplane.pb"
    assert strip_xspace(src, bare, drop_stat="hlo_op") > 0
    r = run_json(jaxprof_bin, "roofline", bare)
    (w,) = [w for w in r["warnings"] if "without hlo_op" in w]
    assert "instruction of 13 ops (98.8% of op time) was found by kernel name" in w, w
    ops = [o for d in r["devices"] for o in d["ops"]]
    assert all(o["detail"].endswith("(by kernel name)") for o in ops if o["source"] == "hlo")
    # XLA names each kernel after its instruction: the same costs per program as with hlo_op.
    want = run_json(jaxprof_bin, "roofline", src)
    assert per_program(r) == per_program(want)
    assert not [w for w in want["warnings"] if "without hlo_op" in w]
    # ops groups them under the kernel name (XLA's `.kd` suffix on ROCm kept).
    names = {g["name"] for d in run_json(jaxprof_bin, "ops", bare)["devices"] for g in d["groups"]}
    assert "loop_convert_fusion.kd" in names and "loop_convert_fusion" not in names


def xprof_trace(src: Path, tool: str, tmp_path: Path) -> Path:
    """`src` converted by XProf's trace viewer `tool`, written as <tmp>/<tool>/vm.trace.json."""
    raw = pytest.importorskip("xprof.convert.raw_to_tool_data")
    link = tmp_path / "vm.xplane.pb"
    if not link.exists():
        os.symlink(src, link)
    data, _ = raw.xspace_to_tool_data([str(link)], tool, {"use_saved_result": False})
    out = tmp_path / tool.strip("@") / "vm.trace.json"
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(data if isinstance(data, bytes) else data.encode())
    return out


def kernel_times(result: dict) -> dict:
    return {(d["device"], g["name"], g["count"]): g["total_ns"]
            for d in result["devices"] for g in d["groups"]}


@pytest.mark.parametrize("tool", ["trace_viewer", "trace_viewer@"])
def test_xprof_trace_viewer_json_reads_as_its_xplane(jaxprof_bin, tmp_path, tool):
    """XProf's trace viewer JSON keeps no HLO. Its streaming form (`trace_viewer@`) also names
    processes "<host> /device:GPU:0" and keeps only a `uid` in each event's args: no hlo_op."""
    src = oc.require_profile(ELEMENTWISE)
    trace = xprof_trace(src, tool, tmp_path)
    events = json.loads(trace.read_text())["traceEvents"]
    procs = {e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert ("vm /device:GPU:0" in procs) == (tool == "trace_viewer@")
    kernels = [e for e in events if e.get("ph") == "X" and e["name"].endswith(".kd")]
    assert any("hlo_op" in e.get("args", {}) for e in kernels) == (tool == "trace_viewer")
    # The same devices, kernels, counts and times as the xplane (XProf keeps whole ns).
    got = kernel_times(run_json(jaxprof_bin, "ops", trace, "--group-by", "kernel"))
    want = kernel_times(run_json(jaxprof_bin, "ops", src, "--group-by", "kernel"))
    assert got.keys() == want.keys()
    for k, ns in want.items():
        assert got[k] == pytest.approx(ns, abs=1), k
    r = run_json(jaxprof_bin, "roofline", trace)
    assert all(o["source"] == "unknown" for d in r["devices"] for o in d["ops"])
    said = [w for w in r["warnings"] if "carries no HLO" in w]
    # Without hlo_op no op names an HLO op: nothing to say about HLO, every detail says why.
    assert bool(said) == (tool == "trace_viewer")
    if tool == "trace_viewer@":
        assert {o["detail"] for d in r["devices"] for o in d["ops"]} == {"no HLO op and no stats"}


def test_jax_trace_without_hlo_says_roofline_costs_are_unknown(jaxprof_bin, tmp_path):
    """XLA's trace exporter drops /host:metadata and program ids (docs/chrome-trace.md)."""
    run = oc.require_profile(oc.DATA_DIR / "jax_cpu_matmul") / "plugins" / "profile" / "session"
    trace = tmp_path / "vm.trace.json.gz"
    trace.write_bytes((run / "vm.trace.json.gz").read_bytes())
    r = run_json(jaxprof_bin, "roofline", trace, "--peak-tflops", "1", "--peak-gbps", "20")
    (w,) = [w for w in r["warnings"] if "carries no HLO" in w]
    assert re.search(r"unknown for \d+ ops? naming an HLO op \(100\.0% of op time\)", w), w
    # With the program's HLO beside it (modules found by name), every op is costed.
    assert write_hlo_protos(run / "vm.xplane.pb", tmp_path) == 1
    given = run_json(jaxprof_bin, "roofline", tmp_path, "--peak-tflops", "1", "--peak-gbps", "20")
    assert not [w for w in given["warnings"] if "carries no HLO" in w]
    assert all(d["coverage"]["unknown_ops"] == 0 for d in given["devices"])


def test_cpu_ops_without_run_id_are_split_into_runs_per_host_thread(jaxprof_bin):
    """JAX 0.4.33 to 0.6.1 on CPU: op events without run_id and device_ordinal. The capture ran
    each program 4 steps x 8 devices = 32 times (tests/data/capture_train_step.py); the oracle
    splits each host thread's ops where the module changes or an op repeats."""
    path = oc.DATA_DIR / "jax_0_4_38_cpu_8dev.xplane.pb.gz"
    got = run_json(jaxprof_bin, "modules", path, *oc.EVERYTHING)
    mine = {(m["name"], m["program_id"]): (m["executions"], m["ops_per_execution"],
                                           round(m["total_ns"] * 1000)) for m in got["modules"]}
    want = {}
    for execs in to.module_executions(str(path)).values():
        for x in execs:
            n, ops, ps = want.get((x["name"], x["program_id"]), (0, 0, 0))
            want[(x["name"], x["program_id"])] = (n + 1, ops + x["ops"], ps + x["end"] - x["start"])
    want = {k: (n, ops / n, ps) for k, (n, ops, ps) in want.items()}
    assert mine == want
    assert mine[("jit_train_step", 1)][:2] == (32, 21)
    assert mine[("jit_local_sse", 3)][:2] == (32, 5)


def test_layouts_json_names_tests_that_exist():
    layouts = json.loads((HERE / "layouts.json").read_text())["layouts"]
    assert len({lay["name"] for lay in layouts}) == len(layouts)
    root = HERE.parent.parent.parent
    for lay in layouts:
        for key in ("name", "source", "format", "fields_present", "fields_missing",
                    "figures_affected", "fallback", "tests"):
            assert key in lay, (lay.get("name"), key)
        assert lay["tests"] or lay.get("not_covered"), lay["name"]
        for t in lay["tests"]:
            path, _, name = t.partition("::")
            text = (root / path).read_text()
            assert re.search(rf"^def {re.escape(name)}\(", text, re.M), t
