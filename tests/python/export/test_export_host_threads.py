"""The export puts the whole capture on the timeline: a real JAX capture (CPU backend, 8 devices)
with the user's TraceAnnotation, jaxprof.annotate, trace_function and StepTraceAnnotation ranges
exports every host thread with every event, each range on its thread with its start and duration
to the picosecond, and the trace read back gives the profile's summary (docs/export.md)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

import ops_check as oc

CAPTURE = r'''
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp
import jaxprof

mesh = jax.sharding.Mesh(jax.devices(), ("d",))
spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
x = jax.device_put(jnp.ones((64, 32)), spec)
w = jnp.ones((32, 32))

@jax.jit
def step(w, x):
    g = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * g

@jaxprof.trace_function(name="user_traced_fn")
def traced(w):
    return step(w, x)

w = step(w, x).block_until_ready()
with jax.profiler.trace(sys.argv[1]):
    for i in range(3):
        with jax.profiler.StepTraceAnnotation("user_step", step_num=i):
            with jax.profiler.TraceAnnotation("user_trace_annotation"):
                w = step(w, x)
            with jaxprof.annotate("user_annotate"):
                w = traced(w)
            w.block_until_ready()
'''

RANGES = ("user_trace_annotation", "user_annotate", "user_traced_fn", "user_step")


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    pytest.importorskip("jax")
    jaxprof = pytest.importorskip("jaxprof")
    logdir = tmp_path_factory.mktemp("annotated")
    env = dict(os.environ, PYTHONPATH=str(Path(jaxprof.__file__).parents[1]))
    subprocess.run([sys.executable, "-c", CAPTURE, str(logdir)], check=True, env=env)
    return logdir, jaxprof.load(jaxprof.latest(logdir))


def export_json(binary, logdir, out):
    proc = oc.run_cli(binary, ["export", str(logdir), "--perfetto", str(out)])
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(out.read_bytes(), parse_float=Decimal), proc.stderr.decode()


def host_lines(profile):
    """(line name, [(name, start_ps, duration_ps)]) of every host-thread line with events."""
    planes = profile.planes
    ev = profile.events()
    names = ev.name
    out = {}
    for plane, line, _id, first, count in profile.lines():
        if count == 0 or planes[plane].name != "/host:CPU":
            continue
        out[line] = [(names[i], int(ev.start_ps[i]), int(ev.duration_ps[i]))
                     for i in range(first, first + count)]
    return out


def trace_threads(trace, process):
    pids = {e["pid"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == process}
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] in pids
             and not e["args"].get("jaxprof_derived")}
    events = defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X" and (e["pid"], e["tid"]) in names:
            events[names[e["pid"], e["tid"]]].append(
                (e["name"], int(e["ts"] * 10**6), int(e["dur"] * 10**6)))
    return events


def test_every_host_event_and_range_is_exported(jaxprof_bin, tmp_path, capture):
    logdir, profile = capture
    trace, stderr = export_json(jaxprof_bin, logdir, tmp_path / "t.json")
    want, got = host_lines(profile), trace_threads(trace, "/host:CPU")
    assert set(got) == set(want)
    for line, events in want.items():
        assert len(got[line]) == len(events), line
    found = Counter()
    for line, events in want.items():
        exported = Counter(got[line])
        for name, start, dur in events:
            if name in RANGES:
                # On its own thread, to the picosecond.
                assert exported[(name, start, dur)] > 0, (line, name, start, dur)
                found[name] += 1
    assert set(found) == set(RANGES) and all(n >= 3 for n in found.values()), found
    # The notes on what was left out go to stderr and into the trace.
    notes = [e for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "jaxprof_notes"]
    assert len(notes) == 1
    for n in notes[0]["args"]["notes"]:
        assert f"note: {n}" in stderr


def test_summary_of_the_annotated_export_is_the_summary(jaxprof_bin, tmp_path, capture):
    logdir, _ = capture
    export_json(jaxprof_bin, logdir, tmp_path / "t.json")
    from test_export_roundtrip import summary
    assert summary(jaxprof_bin, tmp_path / "t.json") == summary(jaxprof_bin, logdir)


def test_launch_arrows_and_memory_counters(jaxprof_bin, tmp_path):
    profile = oc.require_profile(oc.SHARED_FIXTURES / "xplane" / "mi300x_jax_gemm.xplane.pb")
    trace, _ = export_json(jaxprof_bin, profile, tmp_path / "t.json")
    events = trace["traceEvents"]
    outs = Counter(e["bind_id"] for e in events if e.get("flow_out"))
    ins = Counter(e["bind_id"] for e in events if e.get("flow_in"))
    # Every kernel's arrow starts at one host launch with the kernel's correlation id.
    assert ins and set(ins) <= set(outs)
    kernels = {e["bind_id"]: e for e in events if e.get("flow_in")}
    launches = {e["bind_id"]: e for e in events if e.get("flow_out")}
    for bind, k in kernels.items():
        assert k["args"]["correlation_id"] == launches[bind]["args"]["correlation_id"]
        assert launches[bind]["ts"] <= k["ts"]
    counters = [e for e in events if e["ph"] == "C"]
    assert counters and all(isinstance(e["args"]["bytes"], int) for e in counters)
    # Read back, the counters and arrows change nothing (no warning about counters).
    proc = oc.run_cli(jaxprof_bin, ["summary", str(tmp_path / "t.json"), "--format", "json"])
    assert json.loads(proc.stdout)["warnings"] == []
