"""The checks of the JAX version compatibility matrix, run on one capture of
tests/data/capture_train_step.py: by bench/jax_versions.py on every JAX release, and by
tests/python/formats/test_compatibility_matrix.py on the JAX installed here.

Each check compares what the jaxprof command reads with an independent reader of the same
file (the protobuf-based oracles beside this file, and XProf as a second reader where it
installs), then with what the capture script is known to do (4 annotated steps, two programs
on 8 devices, one compile inside the trace, an all-reduce in each program).

A check's status is one of
  pass    jaxprof agrees with the oracle and with what the program did
  fail    a difference: `error` says which
  absent  jaxprof agrees with the oracle, and the capture does not hold this kind of event
          (several JAX releases record no per-op events on CPU; docs/compatibility.md lists
          them): shown as such, never as a pass
  n/a     the second reader is not installed or cannot read this capture
"""
from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import tempfile
import traceback
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Dict, List

import ops_check as oc
import timeline_oracle as to
import xplane_oracle as xo

STEPS = 4
DEVICES = 8
PROGRAMS = ("train_step", "local_sse")
COLLECTIVE_OPCODES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                      "collective-permute", "all-reduce-start", "all-gather-start",
                      "collective-permute-start")
CHECKS = ("ops", "steps", "modules", "compile", "collectives", "chrome_trace", "xprof")
PEER_XPROF = oc.ROOT / "bench" / "peer_xprof.py"
XPROF_TIMEOUT_S = 300


class Absent(Exception):
    """jaxprof and the oracle agree that the capture holds none of these events."""


def _cli_json(binary: Path, command: str, path: Path, *extra: str) -> Dict[str, Any]:
    proc = oc.run_cli(binary, [command, str(path), "--format", "json", *extra], timeout=300)
    assert proc.returncode == 0, (f"jaxprof {command} exited {proc.returncode}: "
                                  f"{proc.stderr.decode(errors='replace')[-800:]}")
    return oc.parse_json(proc.stdout)


def _ps(ns) -> int:
    v = Decimal(str(ns)) * 1000
    assert v == v.to_integral_value(), f"{ns} ns is not whole picoseconds"
    return int(v)


def _short(name: str) -> str:
    """A thread line's name without the thread id XLA appends (tf_XLAPjRtCpuClient/12345)."""
    return re.sub(r"/-?\d+$", "", name)


# ---------------------------------------------------------------------------
# What the capture holds
# ---------------------------------------------------------------------------

def describe(binary: Path, path: Path) -> Dict[str, Any]:
    """Planes and line names, HLO metadata and op events, as `jaxprof info` and the oracle see
    them."""
    info = _cli_json(binary, "info", path)
    planes = {}
    for p in info["planes"]:
        planes.setdefault(p["name"], sorted({_short(l["name"]) for l in p["lines"]}))
    files = xo.profile_files(str(path))
    with_hlo = 0
    op_stats = set()  # the stats that op events (those with an hlo_op) carry
    for f in files:
        for plane in xo.load_xspace(f).planes:
            if plane.name == "/host:CPU" or plane.name.startswith("/device:"):
                stats = xo._PlaneStats(plane)
                for xl in plane.lines:
                    for ev in xl.events[:2000]:
                        st = stats.event_stats(ev)
                        if "hlo_op" in st:
                            op_stats.update(st)
            if plane.name == "/host:metadata":
                names = {m.id: m.name for m in plane.stat_metadata.values()}
                with_hlo += sum(1 for md in plane.event_metadata.values()
                                if any(names.get(s.metadata_id, "").lower().replace(" ", "_")
                                       == "hlo_proto" for s in md.stats))
    devices = oc.oracle_devices(str(path))
    meta = next((p["stats"] for p in info["planes"] if p["name"] == "/host:metadata"), {})
    return {
        "planes": planes,
        "hlo_proto_modules": with_hlo,
        "jaxprof_modules_with_hlo": sum(1 for m in info["modules"] if m.get("hlo")),
        "op_events": sum(len(d.events) for d in devices),
        "op_devices": [d.device for d in devices],
        "op_event_stats": sorted(op_stats),
        "metadata_stats": {k: v for k, v in meta.items() if k != "process_id"},
        "events": info["events"],
    }


# ---------------------------------------------------------------------------
# The checks; each returns its figures, raises AssertionError on a difference and Absent
# where both readers find none of its events.
# ---------------------------------------------------------------------------

def check_ops(binary: Path, path: Path, ctx: Dict) -> Dict:
    devices = oc.oracle_devices(str(path))
    figures = {"devices": len(devices), "op_events": sum(len(d.events) for d in devices)}
    for group_by in ("hlo-op", "opcode"):
        got = oc.run_ops_json(binary, path, ["--group-by", group_by])
        oc.compare_ops(got, xo.ops(devices, group_by), group_by, label=f"--group-by {group_by}")
        figures[f"groups_{group_by}"] = sum(len(d["groups"]) for d in got["devices"])
        if group_by == "opcode":
            unknown = [g for d in got["devices"] for g in d["groups"]
                       if g["name"] == xo.UNKNOWN_OPCODE]
            figures["unknown_opcode_events"] = sum(g["count"] for g in unknown)
    if not devices:
        raise Absent("no per-op events in the capture (both readers find none)")
    if ctx["program"] and [d.device for d in devices] != ["/host:CPU"]:
        # (Where op events carry no device_ordinal, the host plane is the one device.)
        assert figures["devices"] == DEVICES, f"{figures['devices']} devices, want {DEVICES}"
    return figures


def check_steps(binary: Path, path: Path, ctx: Dict) -> Dict:
    import test_steps_oracle as tso

    got = tso.check_against_oracle(binary, path)
    steps = got["steps"]
    figures = {"source": got["source"], "steps": len(steps),
               "numbers": [s["number"] for s in steps],
               "duration_ns": [float(s["duration_ns"]) for s in steps],
               "warmup": [s["warmup"] for s in steps],
               "steady_mean_ns": float(got["steady_mean_ns"])}
    if not steps:
        raise Absent("no step marks in the capture (both readers find none)")
    if not ctx["program"]:
        return figures
    assert got["source"] == "host-annotation", got["source"]
    assert figures["numbers"] == list(range(STEPS)), figures["numbers"]
    # The error program compiles in step 0: the warm-up step.
    assert figures["warmup"] == [True] + [False] * (STEPS - 1), figures["warmup"]
    return figures


def check_modules(binary: Path, path: Path, ctx: Dict) -> Dict:
    got = _cli_json(binary, "modules", path, *oc.EVERYTHING)
    want = defaultdict(lambda: [0, 0, 0])
    for execs in to.module_executions(str(path)).values():
        for x in execs:
            acc = want[(x["name"], x["program_id"])]
            acc[0] += 1
            acc[1] += x["end"] - x["start"]
            acc[2] += bool(x["warmup"])
    mine = {(m["name"], m["program_id"]): [m["executions"], _ps(m["total_ns"]),
                                           m["warmup_executions"]] for m in got["modules"]}
    assert mine == dict(want), f"jaxprof {mine} != oracle {dict(want)}"
    figures = {"modules": {f"{n}({p})": v[0] for (n, p), v in sorted(mine.items(), key=str)}}
    if not mine:
        raise Absent("no module executions in the capture (no events naming their module)")
    if not ctx["program"]:
        return figures
    by_fn = {fn: sum(v[0] for (n, _), v in mine.items() if n and n.endswith(fn))
             for fn in PROGRAMS}
    assert by_fn == {fn: STEPS * DEVICES for fn in PROGRAMS}, by_fn
    return figures


def check_compile(binary: Path, path: Path, ctx: Dict) -> Dict:
    import test_compile as tc

    got = _cli_json(binary, "compile", path)
    want = tc.expected(str(path))
    assert got["compiles"] == len(want) == len(got["events"]), (got["compiles"], len(want))
    for g, w in zip(got["events"], want):
        oc.check_ns("compile start", g["start_ns"], w["start_ps"])
        oc.check_ns("compile wall", g["wall_ns"], w["wall_ps"])
        for ph in g["phases"]:
            oc.check_ns(f"phase {ph['phase']}", ph["wall_ns"], w["phases"][ph["phase"]])
    figures = {"compiles": got["compiles"], "wall_ns": float(got["wall_ns"]),
               "modules": [e.get("module") for e in got["events"]]}
    if not want:
        raise Absent("no compile events in the capture (both readers find none)")
    if not ctx["program"]:
        return figures
    # Only the error program compiles inside the trace.
    assert any(m and m.endswith("local_sse") for m in figures["modules"]), figures["modules"]
    assert got["wall_ns"] > 0
    return figures


def check_collectives(binary: Path, path: Path, ctx: Dict) -> Dict:
    got = _cli_json(binary, "collectives", path, *oc.EVERYTHING)
    want = defaultdict(lambda: [0, 0])
    for d in oc.oracle_devices(str(path)):
        for e in d.events:
            if e.opcode in COLLECTIVE_OPCODES:
                acc = want[(e.hlo_module, e.hlo_op or e.display, e.opcode)]
                acc[0] += 1
                acc[1] += e.op_dur_ps
    mine = {(o["module"], o["name"], o["opcode"]): [o["count"], _ps(o["total_ns"])]
            for o in got["ops"]}
    assert mine == dict(want), f"jaxprof {mine} != oracle {dict(want)}"
    figures = {"ops": [{"module": o["module"], "name": o["name"], "opcode": o["opcode"],
                        "count": o["count"], "group_size": o["group_size"],
                        "message_bytes": o["message_bytes"]} for o in got["ops"]]}
    if not mine:
        raise Absent("no collective op events in the capture (both readers find none)")
    if not ctx["program"]:
        return figures
    for fn in PROGRAMS:
        ops = [o for o in got["ops"] if (o["module"] or "").endswith(fn)]
        assert ops, f"no collective found in {fn}"
        assert all(o["opcode"].startswith("all-reduce") and o["group_size"] == DEVICES
                   and o["count"] % (STEPS * DEVICES) == 0 for o in ops), ops
    return figures


def check_chrome_trace(binary: Path, path: Path, ctx: Dict) -> Dict:
    """The <host>.trace.json.gz JAX writes beside the xplane: every event of a plain JSON parse
    is read, and `ops` on it gives what it gives on the xplane (counts equal, times within the
    1 ps per event that XLA's exporter may round)."""
    import test_chrome_trace as tct

    traces = sorted(Path(f).parent / (Path(f).name[:-len(".xplane.pb")] + ".trace.json.gz")
                    for f in xo.profile_files(str(path)))
    traces = [t for t in traces if t.is_file()]
    if not traces:
        raise Absent("no .trace.json.gz beside the xplane")
    (trace,) = traces
    events = json.load(gzip.open(trace))["traceEvents"]
    complete = sum(1 for e in events if e.get("ph") == "X")
    info = _cli_json(binary, "info", trace, "--all-lines")
    assert info["events"] == complete, (info["events"], complete)
    (xplane,) = xo.profile_files(str(path))
    groups = 0
    for group_by in ("hlo-op", "module"):
        tct.compare_with_xplane(binary, trace, Path(xplane), group_by, exact=False)
        groups += len(tct.ops_groups(binary, trace, group_by))
    return {"events": complete, "op_groups": groups}


def xprof_version():
    try:
        from importlib.metadata import version

        return version("xprof")
    except Exception:  # noqa: BLE001  not installed
        return None


def _xprof_aggregates(xplane: str, plane_regex: str, event_regex: str) -> List[Dict]:
    with tempfile.TemporaryDirectory(prefix="compat_xprof_") as tmp:
        out = Path(tmp) / "aggregates.json"
        proc = subprocess.run(
            [sys.executable, str(PEER_XPROF), "cli:aggregate_xplane_events", xplane, "--out",
             str(out), "--", f"--plane_regex={plane_regex}", f"--event_regex={event_regex}"],
            capture_output=True, text=True, timeout=XPROF_TIMEOUT_S)
        assert proc.returncode == 0, f"XProf failed: {proc.stderr.strip()[-600:]}"
        return json.loads(out.read_text())["aggregates"]


def check_xprof(binary: Path, path: Path, ctx: Dict) -> Dict:
    """XProf's aggregate_xplane_events as a second reader: per op name, the count and total of
    the op events on the planes that hold them, and the count and total of the step events."""
    if xprof_version() is None:
        raise Absent("xprof is not installed")
    (xplane,) = xo.profile_files(str(path))
    figures = {"xprof": xprof_version()}
    steps = _cli_json(binary, "modules", path)["steps"]["steps"]
    (agg,) = _xprof_aggregates(xplane, "^/host:CPU$", "^train$")
    figures["steps"] = agg["count"]
    assert agg["count"] == len(steps), (agg["count"], len(steps))
    assert agg["total_duration_ps"] == sum(_ps(s["duration_ns"]) for s in steps)
    devices = oc.oracle_devices(str(path))
    if not devices:
        figures["ops"] = "absent"
        return figures
    got = oc.run_ops_json(binary, path, ["--group-by", "name"])
    mine = defaultdict(lambda: [0, 0])
    for d in got["devices"]:
        for g in d["groups"]:
            mine[g["name"]][0] += g["count"]
            mine[g["name"]][1] += _ps(g["total_ns"])
    # XProf matches events by name: ask for exactly the op names, on the planes that hold them.
    planes = sorted({d.device for d in devices} if devices[0].device.startswith("/device:")
                    and any(p.startswith("/device:") for p in ctx["describe"]["planes"])
                    else {"/host:CPU"})
    names = "^(" + "|".join(re.escape(n) for n in sorted(mine)) + ")$"
    theirs = {a["event"]: [a["count"], a["total_duration_ps"]]
              for a in _xprof_aggregates(xplane, "^(" + "|".join(map(re.escape, planes)) + ")$",
                                         names)}
    figures["op_names"] = len(theirs)
    figures["op_events"] = sum(v[0] for v in theirs.values())
    assert theirs == dict(mine), {k: (mine.get(k), theirs.get(k))
                                  for k in set(mine) | set(theirs)
                                  if mine.get(k) != theirs.get(k)}
    return figures


CHECK_FUNCTIONS: Dict[str, Callable] = {
    "ops": check_ops, "steps": check_steps, "modules": check_modules,
    "compile": check_compile, "collectives": check_collectives,
    "chrome_trace": check_chrome_trace, "xprof": check_xprof,
}


def check_capture(binary: Path, path: Path, xprof: bool = True,
                  program: bool = True) -> Dict[str, Any]:
    """Every check on one capture (a log dir, or a profile file with program=False: then only
    the comparisons with the oracles, not what capture_train_step.py is known to do). Never
    raises for a difference: each check's status, figures and error are in the result;
    `passed` is False when any check failed."""
    path = Path(path)
    ctx: Dict[str, Any] = {"program": program}
    out: Dict[str, Any] = {}
    try:
        ctx["describe"] = out["capture"] = describe(binary, path)
    except Exception as e:  # noqa: BLE001  an unreadable capture is a failure to report
        return {"capture": None, "passed": False,
                "checks": {c: {"status": "fail", "passed": False, "error": f"{e}"[-800:]}
                           for c in CHECKS}}
    checks = {}
    for name in CHECKS:
        if name in ("xprof", "chrome_trace") and not program:
            continue  # their comparisons assume the training capture's layout
        if name == "xprof" and not xprof:
            checks[name] = {"status": "n/a", "passed": True, "error": "not run"}
            continue
        try:
            figures = CHECK_FUNCTIONS[name](binary, path, ctx)
            checks[name] = {"status": "pass", "passed": True, "figures": figures}
        except Absent as e:
            status = "n/a" if name == "xprof" else "absent"
            checks[name] = {"status": status, "passed": True, "note": str(e)}
        except Exception as e:  # noqa: BLE001  AssertionError and reader failures alike
            frame = traceback.extract_tb(e.__traceback__)[-1]
            detail = f"{str(e)[:600]} (at {Path(frame.filename).name}:{frame.lineno}: " \
                     f"{frame.line})"
            checks[name] = {"status": "fail", "passed": False,
                            "error": f"{type(e).__name__}: {detail}"[-800:]}
    out["checks"] = checks
    out["passed"] = all(c["passed"] for c in checks.values())
    return out
