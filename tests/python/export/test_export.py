"""`jaxprof export --perfetto`: the trace is valid JSON (gzip or not), each device's op events
match `jaxprof ops`, the category track tiles the span with exactly the `jaxprof timeline` numbers
(decimal microseconds from integer picoseconds), op args carry HLO metadata and collective
bandwidth, and hostile names stay inert text."""
from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

import ops_check as oc
from xspace_builder import Ref, SpaceBuilder

PROFILES = ["jax_cpu_8dev", "jax_cpu_matmul"]

SEGMENT_FIELDS = {
    "compute": "compute_ns",
    "communication (exposed)": "comm_exposed_ns",
    "memcpy (exposed)": "memcpy_exposed_ns",
    "idle in module": "idle_in_modules_ns",
    "idle between modules": "idle_between_modules_ns",
    "set apart": "set_apart_ns",
}


def export(binary, profile, out: Path):
    proc = oc.run_cli(binary, ["export", str(profile), "--perfetto", str(out)])
    assert proc.returncode == 0, proc.stderr.decode()
    raw = out.read_bytes()
    if out.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    # Exact decimals: ts and dur are read as Decimal, never rounded through a double.
    return json.loads(raw, parse_float=Decimal), raw, proc


def cli_json(binary, *args):
    proc = oc.run_cli(binary, [*map(str, args), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout, parse_float=Decimal)


def processes(trace):
    return {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] > 0}


def threads(trace):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


@pytest.mark.parametrize("name", PROFILES)
def test_export_matches_ops_and_timeline(jaxprof_bin, tmp_path, name):
    profile = oc.require_profile(oc.DATA_DIR / name)
    trace, _, _ = export(jaxprof_bin, profile, tmp_path / "t.json.gz")
    procs, tracks = processes(trace), threads(trace)
    op_counts = Counter()
    segment_sums = defaultdict(lambda: defaultdict(Decimal))
    spans = {}
    for e in trace["traceEvents"]:
        if e["ph"] != "X":
            continue
        track = tracks[(e["pid"], e["tid"])]
        if track.startswith("category"):
            # One category track per device: "category", or "category /device:CPU:3" when the
            # device is not its plane (the CPU backend).
            device = track.split(" ", 1)[1] if " " in track else procs[e["pid"]]
            segment_sums[device][e["name"]] += e["dur"]
            first, last = spans.get(device, (e["ts"], e["ts"] + e["dur"]))
            spans[device] = (min(first, e["ts"]), max(last, e["ts"] + e["dur"]))
        elif "category" in e.get("args", {}):  # an op event (host compile events have none)
            ordinal = e["args"].get("device_ordinal")
            device = procs[e["pid"]] if ordinal is None else f"/device:CPU:{ordinal}"
            op_counts[device] += 1
            assert e["args"]["module"] and e["args"]["category"]

    # Every op event is exported, set apart from the steady state or not.
    ops = cli_json(jaxprof_bin, "ops", profile, "--include-autotuning", "--include-warmup")
    assert {d["device"]: d["events"] for d in ops["devices"]} == dict(op_counts)

    timeline = cli_json(jaxprof_bin, "timeline", profile)
    assert len(timeline["devices"]) == len(segment_sums)
    for d in timeline["devices"]:
        sums = segment_sums[d["device"]]
        assert set(sums) <= set(SEGMENT_FIELDS)
        for seg, field in SEGMENT_FIELDS.items():
            # timeline prints ns, the trace µs: both exact decimals of the same picoseconds.
            assert sums.get(seg, Decimal(0)) * 1000 == d[field], (d["device"], seg)
        first, last = spans[d["device"]]
        assert (last - first) * 1000 == d["span_ns"]


def test_export_op_args_and_collective_bandwidth(jaxprof_bin, tmp_path):
    profile = oc.require_profile(oc.DATA_DIR / "jax_cpu_8dev")
    trace, _, _ = export(jaxprof_bin, profile, tmp_path / "t.json")
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X" and "hlo_op" in e.get("args", {})]
    dots = [e for e in ops if e["name"] == "dot.3"]
    assert len(dots) == 32
    assert dots[0]["args"]["op_name"].endswith("dot_general")
    assert "capture_cpu_profiles.py:" in dots[0]["args"]["source"]
    ar = [e for e in ops if e["name"] == "all-reduce.5"]
    assert len(ar) == 32
    for e in ar:
        a = e["args"]
        assert a["category"] == "collective" and a["group_size"] == 8 and a["message_bytes"] > 0
        # algbw = bytes / duration; all-reduce busbw = algbw * 2(N-1)/N.
        expect = Decimal(a["message_bytes"]) / (e["dur"] * Decimal(1000))
        assert abs(Decimal(a["algbw_gbps"]) - expect) <= expect * Decimal("1e-12")
        assert abs(Decimal(a["busbw_gbps"]) - expect * Decimal(14) / 8) <= expect * Decimal("1e-12")


def test_export_without_collectives_says_so(jaxprof_bin, tmp_path):
    profile = oc.require_profile(oc.DATA_DIR / "jax_cpu_matmul")
    trace, _, proc = export(jaxprof_bin, profile, tmp_path / "t.json")
    assert "no collectives" in proc.stderr.decode()
    assert not any("busbw_gbps" in e.get("args", {}) for e in trace["traceEvents"])


def test_export_escapes_hostile_names(jaxprof_bin, tmp_path):
    evil = '</script><script>alert("x")</script>\\ & "q"'
    sb = SpaceBuilder()
    gpu = sb.plane("/device:GPU:0")
    md = gpu.event_md(evil, stats={"hlo_module": Ref('jit_"mod"<b>')})
    line = gpu.line(7, 'Stream #7("<i>")', timestamp_ns=1_000_000)
    gpu.event(line, md, offset_ps=1_234_567, duration_ps=5_000_001, stats={"hlo_op": Ref(evil)})
    gpu.event(line, md, offset_ps=9_000_000, duration_ps=1)
    path = tmp_path / "evil.xplane.pb"
    sb.write(path)
    trace, raw, _ = export(jaxprof_bin, path, tmp_path / "t.json")
    assert b"<" not in raw and b">" not in raw and b"&" not in raw
    x = [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("args", {}).get("hlo_op")]
    assert [e["name"] for e in x] == [evil]
    assert x[0]["ts"] == Decimal("1.234567") and x[0]["dur"] == Decimal("5.000001")
    assert 'Stream #7("<i>")' in threads(trace).values()
