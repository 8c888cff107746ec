"""`jaxprof memory` against its references: the allocators' own statistics (read with the
independent protobuf decoder of xplane_oracle), XProf's memory_profile and memory_viewer tools
(where `xprof` installs), and jax's compiled.memory_analysis() on a fresh CPU capture; plus the
messages for profiles without allocator events or with missing stats, and Profile.memory()."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

import ops_check as oc
import xplane_oracle as xo
from xspace_builder import Ref, SpaceBuilder

FIXTURES = ["mi300x_jax_gemm", "mi300x_jax_elementwise", "mi300x_jax_conv", "tpu_4chip_inference",
            "tf_v100_8gpu_training"]


def memory_json(binary, *args):
    proc = subprocess.run([str(binary), "memory", *map(str, args), "--format", "json"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def allocators(got):
    return {a["allocator"]: (dev, a) for dev in got["devices"] for a in dev["allocators"]}


def oracle_allocators(path):
    """Per allocator, from every MemoryAllocation/MemoryDeallocation event's own stats."""
    out = defaultdict(lambda: {"events": 0, "in_use": [], "with_reserved": [], "peak": []})
    for plane in xo.load_xspace(str(path)).planes:
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        event_names = {k: v.name for k, v in plane.event_metadata.items()}
        for line in plane.lines:
            for ev in line.events:
                if event_names.get(ev.metadata_id) not in ("MemoryAllocation", "MemoryDeallocation"):
                    continue
                stats = {}
                for s in ev.stats:
                    kind = s.WhichOneof("value")
                    value = getattr(s, kind)
                    stats[stat_names[s.metadata_id]] = stat_names[value] if kind == "ref_value" else value
                if "allocator_name" in stats:
                    key = stats["allocator_name"]
                else:
                    key = f"device {stats.get('device_ordinal', stats.get('index_on_host'))}"
                a = out[key]
                a["events"] += 1
                a["in_use"].append(stats["bytes_allocated"])
                a["with_reserved"].append(stats["bytes_allocated"] + stats.get("bytes_reserved", 0))
                a["peak"].append(stats["peak_bytes_in_use"])
    return out


@pytest.mark.parametrize("name", FIXTURES)
def test_peaks_are_the_allocators_own(jaxprof_bin, xplane_fixtures, name):
    path = xplane_fixtures / f"{name}.xplane.pb"
    got, _ = memory_json(jaxprof_bin, path, "--only", "allocators")
    oracle = oracle_allocators(path)
    ours = allocators(got)
    assert set(ours) == set(oracle)
    assert got["allocator_events"] == sum(a["events"] for a in oracle.values())
    for key, (dev, a) in ours.items():
        o = oracle[key]
        assert isinstance(a["peak_bytes_in_use"], int)
        assert a["events"] == o["events"]
        assert a["peak_bytes_in_use"] == max(o["in_use"])
        assert a["lifetime_peak_bytes_in_use"] == max(o["peak"])
        # The allocator's running peak bounds what it had in use, and equals it when the capture
        # set it.
        assert a["peak_bytes_in_use"] <= a["lifetime_peak_bytes_in_use"]
        assert a["peak_in_capture"] == (a["peak_bytes_in_use"] == a["lifetime_peak_bytes_in_use"])
        with_reserved = max(o["with_reserved"])
        assert a["peak_bytes_with_reserved"] in (None, with_reserved)
        assert not [n for n in a["notes"] if "disagree" in n], a["notes"]
        # What was live at the peak, plus what was allocated before the capture, is the peak.
        live = a["live_at_peak"]
        assert live["bytes"] + live["allocated_before_capture_bytes"] == a["peak_bytes_in_use"]
        points = a["timeline"]["points"]
        assert max(p[1] for p in points) == a["peak_bytes_in_use"]
        assert [p[0] for p in points] == sorted(p[0] for p in points)


def oracle_live_by_function(path, allocator):
    """Bytes live at the allocator's peak per JAX function, from the events' own stats: the
    allocations not freed (by addr) at the first event holding the most bytes_allocated, each
    under the innermost PjitFunction(NAME) event around it on its thread."""
    events = []  # (time, is_alloc, addr, bytes, in_use, function)
    for plane in xo.load_xspace(str(path)).planes:
        sm = {k: v.name for k, v in plane.stat_metadata.items()}
        em = {k: v.name for k, v in plane.event_metadata.items()}
        for line in plane.lines:
            calls = [(line.timestamp_ns * 1000 + e.offset_ps, e.duration_ps,
                      em[e.metadata_id][len("PjitFunction("):-1])
                     for e in line.events if em.get(e.metadata_id, "").startswith("PjitFunction(")]
            for e in line.events:
                name = em.get(e.metadata_id)
                if name not in ("MemoryAllocation", "MemoryDeallocation"):
                    continue
                st = {}
                for s in e.stats:
                    kind = s.WhichOneof("value")
                    v = getattr(s, kind)
                    st[sm[s.metadata_id]] = sm[v] if kind == "ref_value" else v
                if st.get("allocator_name") != allocator:
                    continue
                t = line.timestamp_ns * 1000 + e.offset_ps
                around = [c for c in calls if c[0] <= t <= c[0] + c[1]]
                fn = max(around)[2] if around else None  # latest start: the innermost
                events.append((t, name == "MemoryAllocation", st["addr"],
                               st.get("allocation_bytes", 0), st["bytes_allocated"], fn))
    events.sort(key=lambda e: e[0])
    peak = max(e[4] for e in events)
    live = {}
    for e in events:
        if e[1]:
            live[e[2]] = e
        else:
            live.pop(e[2], None)
        if e[4] == peak:
            break
    out = defaultdict(int)
    for e in live.values():
        out[e[5]] += e[3]
    return dict(out)


def test_live_at_peak_by_jax_function(jaxprof_bin, xplane_fixtures):
    """JAX on GPU records no op for its allocations: they are told apart by the jitted function
    the allocating thread was running."""
    path = xplane_fixtures / "mi300x_jax_gemm.xplane.pb"
    got, _ = memory_json(jaxprof_bin, path, "--only", "allocators", "--top", "0")
    checked = 0
    for dev, a in allocators(got).values():
        if not a["live_at_peak"]["largest"]:
            continue
        ours = defaultdict(int)
        for g in a["live_at_peak"]["largest"]:
            assert g["op"] is None
            ours[g["function"]] += g["bytes"]
        assert dict(ours) == oracle_live_by_function(path, a["allocator"])
        checked += 1
    assert checked
    assert any(g["function"] for _, a in allocators(got).values()
               for g in a["live_at_peak"]["largest"])
    table = subprocess.run([str(jaxprof_bin), "memory", str(path), "--only", "allocators"],
                           capture_output=True, text=True)
    assert table.returncode == 0 and " in " in table.stdout


def test_live_allocation_takes_the_innermost_jax_call(jaxprof_bin, tmp_path):
    space = SpaceBuilder()
    host = space.plane("/host:CPU")
    alloc = host.event_md("MemoryAllocation")
    outer, inner = host.event_md("PjitFunction(step)"), host.event_md("PjitFunction(matmul)")
    line = host.line(1, "python", timestamp_ns=1000)
    host.event(line, outer, offset_ps=0, duration_ps=10_000)
    host.event(line, inner, offset_ps=2_000, duration_ps=2_000)
    in_use = 0
    for at, size in ((1_000, 64), (3_000, 128), (3_500, 128), (20_000, 256)):
        in_use += size
        host.event(line, alloc, offset_ps=at, duration_ps=0,
                   stats={"allocator_name": Ref("GPU_0_bfc"), "addr": at, "allocation_bytes": size,
                          "bytes_allocated": in_use, "peak_bytes_in_use": in_use})
    space.plane("/device:GPU:0")
    path = tmp_path / "calls.xplane.pb"
    space.write(path)
    got, _ = memory_json(jaxprof_bin, path, "--only", "allocators")
    (a,) = got["devices"][0]["allocators"]
    groups = {(g["function"], g["bytes"], g["count"]) for g in a["live_at_peak"]["largest"]}
    assert groups == {("step", 64, 1), ("matmul", 256, 2), (None, 256, 1)}


def test_partial_summaries_are_refused(jaxprof_bin, xplane_fixtures, tmp_path):
    """Partials keep no allocator events nor buffer assignments: `memory` says so and exits 2;
    the report from partials says so in its memory section."""
    part = tmp_path / "gemm.partial"
    made = subprocess.run([str(jaxprof_bin), "partial", str(xplane_fixtures / "mi300x_jax_gemm.xplane.pb"),
                           "-o", str(part)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    proc = subprocess.run([str(jaxprof_bin), "memory", str(part)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "partial" in proc.stderr and "give the profile" in proc.stderr
    proc = subprocess.run([str(jaxprof_bin), "report", str(part), "-o", "r.html"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    memory = (tmp_path / "r.html").read_text().split('<section id="memory"')[1]
    assert "Not in partial files: give the profiles" in memory.split("</section>")[0]


def xprof_tool(tmp_path, profile, tool, options):
    """Runs an XProf tool on a copy of `profile` in its own directory (XProf writes beside it)."""
    raw = pytest.importorskip("xprof.convert.raw_to_tool_data",
                              reason="XProf is the reference here (pip install xprof)")
    link = tmp_path / Path(profile).name
    if not link.exists():
        link.symlink_to(Path(profile).resolve())
        raw.xspace_to_tool_names([str(link)])  # writes the programs' <module>.hlo_proto.pb
    data, _ = raw.xspace_to_tool_data([str(link)], tool, dict(options, use_saved_result=False))
    return json.loads(data)


@pytest.mark.parametrize("name", FIXTURES)
def test_peaks_agree_with_xprof_memory_profile(jaxprof_bin, xplane_fixtures, tmp_path, name):
    path = xplane_fixtures / f"{name}.xplane.pb"
    xp = xprof_tool(tmp_path, path, "memory_profile", {})["memoryProfilePerAllocator"]
    got, _ = memory_json(jaxprof_bin, path, "--only", "allocators")
    for key, (dev, a) in allocators(got).items():
        x = xp[key[len("device "):] if key.startswith("device ") else key]["profileSummary"]
        # XProf's peak counts the bytes reserved for programs (TPU) with those in use.
        peak = a["peak_bytes_with_reserved"] or a["peak_bytes_in_use"]
        assert peak == int(x["peakStats"]["peakBytesInUse"]), key
        assert a["capacity_bytes"] == int(x["memoryCapacity"]), key
        # XProf takes the lifetime peak from the last event it reads, thread after thread; with
        # an allocator's events on several threads that can be an earlier value (docs/memory.md).
        assert a["lifetime_peak_bytes_in_use"] >= int(x["peakBytesUsageLifetime"]), key


def program_spaces(got):
    return {(p["module"], p["program_id"], s["color"]): s
            for p in got["programs"] for s in p["memory_spaces"]}


def compare_with_memory_viewer(jaxprof_bin, tmp_path, path):
    got, _ = memory_json(jaxprof_bin, path, "--only", "programs", "--top", "0")
    compared = 0
    for (module, program, color), s in program_spaces(got).items():
        if color != 0:
            continue
        x = xprof_tool(tmp_path, path, "memory_viewer",
                       {"module_name": f"{module}({program})", "memory_space": "0"})
        mib = 1 << 20
        assert s["peak_heap_bytes"] == round(x["peakHeapMib"] * mib), module
        assert s["argument_bytes"] == round(x["entryComputationParametersMib"] * mib), module
        assert s["output_bytes"] == round(x["maybeLiveOutMib"] * mib), module
        assert s["total_allocation_bytes"] == round(x["totalBufferAllocationMib"] * mib), module
        # The same buffers at the peak (XProf lumps buffers of under 16 KiB together).
        big = sorted(round(h["logicalBufferSizeMib"] * mib) for h in x.get("maxHeap", [])
                     if h.get("logicalBufferId", -1) != -1)
        ours = sorted(b["bytes"] for b in s["largest_at_peak"] if b["bytes"] >= 16384)
        assert ours == [b for b in big if b >= 16384], module
        compared += 1
    return compared


def test_static_memory_agrees_with_xprof_memory_viewer(jaxprof_bin, xplane_fixtures, tmp_path):
    assert compare_with_memory_viewer(jaxprof_bin, tmp_path,
                                      xplane_fixtures / "mi300x_jax_conv.xplane.pb") == 8


CAPTURE = textwrap.dedent("""
    import json, os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    out = sys.argv[1]
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rep, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - 0.01 * b, p, g), l

    train = jax.jit(step, donate_argnums=(0,), out_shardings=(rep, rep))
    rng = np.random.default_rng(0)
    p = {"w1": rng.standard_normal((128, 256), dtype=np.float32),
         "b1": np.zeros(256, np.float32), "w2": rng.standard_normal((256, 64), dtype=np.float32)}
    p = jax.device_put(p, rep)
    x = jax.device_put(rng.standard_normal((512, 128), dtype=np.float32), batch)
    y = jax.device_put(rng.standard_normal((512, 64), dtype=np.float32), batch)
    m = train.lower(p, x, y).compile().memory_analysis()
    json.dump({k: getattr(m, k) for k in ("argument_size_in_bytes", "output_size_in_bytes",
               "alias_size_in_bytes", "temp_size_in_bytes")}, open(out + "/analysis.json", "w"))
    jax.profiler.start_trace(out + "/log")
    for _ in range(2):
        p, l = train(p, x, y)
    jax.block_until_ready(l)
    jax.profiler.stop_trace()
""")


@pytest.fixture(scope="module")
def fresh_capture(tmp_path_factory):
    pytest.importorskip("jax", reason="jax is needed to capture a profile (pip install jax)")
    out = tmp_path_factory.mktemp("memory_capture")
    proc = subprocess.run([sys.executable, "-c", CAPTURE, str(out)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def test_fresh_capture_matches_memory_analysis(jaxprof_bin, fresh_capture):
    expected = json.loads((fresh_capture / "analysis.json").read_text())
    got, err = memory_json(jaxprof_bin, fresh_capture / "log", "--module", "jit_step")
    # The CPU backend records no allocator events: said, not an error.
    assert got["devices"] == [] and "no allocator events" in got["message"]
    assert "no allocator events" in err
    (prog,) = got["programs"]
    (space,) = [s for s in prog["memory_spaces"] if s["color"] == 0]
    assert space["argument_bytes"] == expected["argument_size_in_bytes"]
    assert space["output_bytes"] == expected["output_size_in_bytes"]
    assert space["alias_bytes"] == expected["alias_size_in_bytes"] > 0  # the donated parameters
    assert space["temp_bytes"] == expected["temp_size_in_bytes"]
    assert space["peak_heap_bytes"] >= space["indefinite_bytes"] + space["heap_simulator_peak_bytes"] - 1
    # Every buffer at the peak names its instruction; the model's own ops their source line.
    sources = [b["source"] for b in space["largest_at_peak"] if b["kind"] == "temporary"]
    assert any(s and s.endswith(".py:13") or s and "<string>" in s for s in sources), sources


def test_fresh_capture_agrees_with_xprof_memory_viewer(jaxprof_bin, fresh_capture, tmp_path):
    (xplane,) = (fresh_capture / "log").glob("plugins/profile/*/*.xplane.pb")
    assert compare_with_memory_viewer(jaxprof_bin, tmp_path, xplane) >= 1


def test_hlo_dump_beside_a_profile(jaxprof_bin, xplane_fixtures):
    # The TensorFlow profile carries no HloProtos; the conv program's comes as a file.
    profile = xplane_fixtures / "tf_v100_8gpu_training.xplane.pb"
    got, _ = memory_json(jaxprof_bin, profile, "--only", "programs")
    assert got["programs"] == [] and "no compiled programs" in got["programs_message"]
    got, _ = memory_json(jaxprof_bin, profile, xplane_fixtures / "jit_forward_3d_conv(15).hlo_proto.pb",
                         "--only", "programs")
    (prog,) = got["programs"]
    assert prog["module"] == "jit_forward_3d_conv" and prog["program_id"] is None
    assert prog["memory_spaces"][0]["peak_heap_bytes"] == 1158144000
    # The same program from the profile and from a file is listed once.
    conv = xplane_fixtures / "mi300x_jax_conv.xplane.pb"
    got, _ = memory_json(jaxprof_bin, conv, xplane_fixtures / "jit_forward_3d_conv(15).hlo_proto.pb",
                         "--module", "forward", "--only", "programs")
    assert [(p["module"], p["program_id"]) for p in got["programs"]] == [("jit_forward_3d_conv", 15)]


def synthetic(path, events, stats_order=None):
    """A GPU-like profile whose host thread holds the given allocator events."""
    space = SpaceBuilder()
    host = space.plane("/host:CPU")
    alloc = host.event_md("MemoryAllocation")
    free = host.event_md("MemoryDeallocation")
    other = host.event_md("PjitFunction(f)")
    line = host.line(1, "python", timestamp_ns=1000)
    host.event(line, other, offset_ps=0, duration_ps=10_000_000)
    for i, (kind, stats) in enumerate(events):
        host.event(line, alloc if kind == "alloc" else free, offset_ps=1000 * (i + 1),
                   duration_ps=0, stats=stats)
    space.plane("/device:GPU:0")
    space.write(path)


def test_missing_stats_give_notes_not_numbers(jaxprof_bin, tmp_path):
    path = tmp_path / "missing.xplane.pb"
    synthetic(path, [("alloc", {"allocator_name": Ref("GPU_0_bfc"), "addr": 64,
                                "allocation_bytes": 256}),
                     ("alloc", {"allocator_name": Ref("GPU_0_bfc"), "addr": 512,
                                "allocation_bytes": 1024})])
    got, _ = memory_json(jaxprof_bin, path)
    (dev,) = got["devices"]
    (a,) = dev["allocators"]
    assert dev["device"] == "GPU:0"
    assert a["events"] == 2
    assert a["peak_bytes_in_use"] is None and a["peak_time_ns"] is None
    assert a["lifetime_peak_bytes_in_use"] is None and a["peak_in_capture"] is None
    assert any("bytes_allocated" in n for n in a["notes"])
    table = subprocess.run([str(jaxprof_bin), "memory", str(path)], capture_output=True, text=True)
    assert table.returncode == 0 and "—" in table.stdout and "bytes_allocated" in table.stdout


def test_inconsistent_stats_are_said(jaxprof_bin, tmp_path):
    path = tmp_path / "odd.xplane.pb"
    base = {"allocator_name": Ref("GPU_0_bfc"), "bytes_reserved": 0}
    synthetic(path, [
        ("alloc", {**base, "addr": 64, "allocation_bytes": 100, "requested_bytes": 90,
                   "bytes_allocated": 100, "peak_bytes_in_use": 100, "tf_op": "a",
                   "shape": "[25]", "data_type": 1}),
        # The running peak jumps past anything in use: the stats disagree.
        ("alloc", {**base, "addr": 128, "allocation_bytes": 50, "requested_bytes": 50,
                   "bytes_allocated": 150, "peak_bytes_in_use": 400}),
        # A free the capture did not see allocated, then one of the first allocation.
        ("free", {**base, "addr": 4096, "bytes_allocated": 120, "peak_bytes_in_use": 400}),
        ("free", {**base, "addr": 64, "bytes_allocated": 20, "peak_bytes_in_use": 400}),
    ])
    got, _ = memory_json(jaxprof_bin, path)
    (a,) = got["devices"][0]["allocators"]
    assert a["peak_bytes_in_use"] == 150 and a["lifetime_peak_bytes_in_use"] == 400
    assert a["peak_in_capture"] is False
    assert any("disagree" in n for n in a["notes"]), a["notes"]
    live = a["live_at_peak"]
    assert live["allocations"] == 2 and live["bytes"] == 150
    assert live["allocated_before_capture_bytes"] == 0
    top = live["largest"][0]
    assert (top["op"], top["shape"], top["dtype"], top["bytes"], top["requested_bytes"]) == \
        ("a", "[25]", "float", 100, 90)


def test_profile_without_allocator_events(jaxprof_bin, project_root):
    path = project_root / "tests/data/jax_cpu_matmul.xplane.pb.gz"
    proc = subprocess.run([str(jaxprof_bin), "memory", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "no allocator events" in proc.stdout and "Programs" in proc.stdout
    got, _ = memory_json(jaxprof_bin, path, "--only", "allocators")
    assert got["devices"] == [] and "programs" not in got
    csv = subprocess.run([str(jaxprof_bin), "memory", str(path), "--format", "csv"],
                         capture_output=True, text=True)
    assert csv.returncode == 0 and csv.stdout.startswith("part,host,device")


def test_bad_options_exit_2(jaxprof_bin, project_root):
    path = project_root / "tests/data/jax_cpu_matmul.xplane.pb.gz"
    proc = subprocess.run([str(jaxprof_bin), "memory", str(path), "--only", "everything"],
                          capture_output=True, text=True)
    assert proc.returncode == 2


def test_python_api(xplane_fixtures):
    jaxprof = pytest.importorskip("jaxprof", reason="the jaxprof package is not installed")
    if not hasattr(jaxprof.Profile, "memory"):
        pytest.skip("the installed jaxprof package predates Profile.memory (pip install .)")
    prof = jaxprof.load(xplane_fixtures / "mi300x_jax_gemm.xplane.pb")
    m = prof.memory()
    cli = json.loads(subprocess.run([str(oc.default_binary()), "memory",
                                     str(xplane_fixtures / "mi300x_jax_gemm.xplane.pb"),
                                     "--format", "json"], capture_output=True, text=True).stdout)
    cli.pop("input")  # what the CLI read: Profile.input in Python
    cli.pop("set_apart", None)  # Profile.set_apart() in Python
    assert m.data == cli
    df = m.to_pandas()
    assert list(df["allocator"]) == ["GPU_0_bfc", "xla_gpu_host_bfc"]
    assert int(df.loc[0, "peak_bytes_in_use"]) == 482345216
    assert len(m.svgs) == 2 and all(s.startswith("<svg") for s in m.svgs)
    html = m._repr_html_()
    assert f"peak {jaxprof._core.format_bytes(482345216)}" in html and "<table>" in html
    programs = m.programs()
    assert {p["module"] for p in programs} >= {"jit_dot", "jit_broadcast_in_dim"}
    assert m.buffers() and m.live()
    assert m.timeline("GPU_0_bfc")[0].keys() == {"time_ns", "bytes_in_use", "bytes_reserved"}
    only = prof.memory(only="programs", module="jit_dot", top=1)
    assert only.rows == [] and all(len(p["memory_spaces"][0]["largest_at_peak"]) <= 1
                                   for p in only.data["programs"])
    with pytest.raises(Exception):
        prof.memory(only="nothing")


def test_chrome_trace_stats_as_strings(jaxprof_bin, tmp_path):
    """Chrome traces carry the allocator stats as strings; the figures are the same."""
    import gzip

    def event(name, ts, **args):
        return {"ph": "X", "pid": 1, "tid": 2, "ts": ts, "dur": 0, "name": name,
                "args": {k: str(v) for k, v in args.items()}}

    common = {"allocator_name": "GPU_0_bfc", "peak_bytes_in_use": 3072}
    trace = {"traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "python"}},
        event("MemoryAllocation", 1.0, bytes_allocated=2048, allocation_bytes=1024, addr=64,
              bytes_available=1000, fragmentation=0.25, **common),
        event("MemoryAllocation", 2.0, bytes_allocated=3072, allocation_bytes=1024, addr=128,
              bytes_available=0, fragmentation=0.5, **common),
        event("MemoryDeallocation", 3.0, bytes_allocated=2048, allocation_bytes=1024, addr=64,
              **common),
    ]}
    path = tmp_path / "mem.trace.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(trace, f)
    got, _ = memory_json(jaxprof_bin, path, "--only", "allocators")
    (a,) = got["devices"][0]["allocators"]
    assert (a["peak_bytes_in_use"], a["peak_time_ns"], a["lifetime_peak_bytes_in_use"]) == \
        (3072, 1000.0, 3072)
    assert a["peak_in_capture"] is True
    assert (a["capacity_bytes"], a["fragmentation_at_peak"]) == (3072, 0.5)
    assert a["live_at_peak"]["bytes"] == 2048
    assert a["live_at_peak"]["allocated_before_capture_bytes"] == 1024
