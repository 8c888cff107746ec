"""Reference implementation of the per-step times of `jaxprof modules` (docs/modules.md, Steps),
for the tests: steps from StepTraceAnnotation events (host events with a step_num stat), else
from "Steps" lines of device planes, else from group_id stats of device events, and the module
executions of timeline_oracle that start in each. Shares no code with the C++. Device sources
key windows by plane name, as timeline_oracle keys executions: one host at a time."""
from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Dict, List

import timeline_oracle as to
import xplane_oracle as xo


def host_steps(path: str) -> List[Dict]:
    spaces = [xo.load_xspace(f) for f in xo.profile_files(path)]
    base = xo._base_ns(spaces)
    steps = []
    for space in spaces:
        for plane in space.planes:
            if plane.name != "/host:CPU":
                continue
            stats = xo._PlaneStats(plane)
            for xl in plane.lines:
                for ev in xl.events:
                    st = stats.event_stats(ev)
                    if "step_num" not in st:
                        continue
                    s = (xl.timestamp_ns - base) * 1000 + ev.offset_ps
                    steps.append({"number": xo._as_int(st["step_num"]), "start": s,
                                  "end": s + ev.duration_ps})
    steps.sort(key=lambda s: s["start"])
    return steps


def _device_planes(path: str):
    spaces = [xo.load_xspace(f) for f in xo.profile_files(path)]
    base = xo._base_ns(spaces)
    for space in spaces:
        for plane in space.planes:
            if plane.name.startswith("/device:"):
                yield plane, xo._PlaneStats(plane), base


def _integer(text: str):
    try:
        return int(text)
    except ValueError:
        return None


def steps_line_windows(path: str) -> List[Dict]:
    """One window per event of a device line named "Steps"."""
    out = []
    for plane, stats, base in _device_planes(path):
        for xl in plane.lines:
            if xl.name != "Steps":
                continue
            for pos, ev in enumerate(xl.events):
                st = stats.event_stats(ev)
                md = plane.event_metadata[ev.metadata_id]
                number = xo._as_int(st.get("group_id"))
                if number is None:
                    number = xo._as_int(st.get("step_num"))
                if number is None:
                    number = _integer(md.name)
                if number is None:
                    number = pos
                name = st.get("step_name")
                if not isinstance(name, str):
                    name = md.display_name or md.name
                s = (xl.timestamp_ns - base) * 1000 + ev.offset_ps
                out.append({"device": plane.name, "number": number, "name": name, "start": s,
                            "end": s + ev.duration_ps})
    return out


def group_id_windows(path: str) -> List[Dict]:
    """Per device and group_id, the span of the device events with that group id."""
    spans = {}
    for plane, stats, base in _device_planes(path):
        for xl in plane.lines:
            for ev in xl.events:
                g = xo._as_int(stats.event_stats(ev).get("group_id"))
                if g is None:
                    continue
                s = (xl.timestamp_ns - base) * 1000 + ev.offset_ps
                lo, hi = spans.get((plane.name, g), (s, s + ev.duration_ps))
                spans[(plane.name, g)] = (min(lo, s), max(hi, s + ev.duration_ps))
    return [{"device": d, "number": g, "name": "", "start": lo, "end": hi}
            for (d, g), (lo, hi) in spans.items()]


def _merge(windows: List[Dict]) -> List[Dict]:
    by_number: Dict[int, Dict] = {}
    for w in windows:
        s = by_number.setdefault(w["number"], {"number": w["number"], "name": w["name"],
                                               "start": w["start"], "end": w["end"],
                                               "windows": []})
        s["start"], s["end"] = min(s["start"], w["start"]), max(s["end"], w["end"])
        s["windows"].append(w)
    return sorted(by_number.values(), key=lambda s: (s["start"], s["number"]))


def marked_steps(path: str):
    """(source, steps): the first source that marks any step. Each step has its windows."""
    host = host_steps(path)
    if host:
        for s in host:
            s["windows"] = [dict(s, device=None)]
        return "host-annotation", host
    for source, windows in (("steps-line", steps_line_windows), ("group-id", group_id_windows)):
        found = windows(path)
        if found:
            return source, _merge(found)
    return "none", []


def steps(path: str) -> List[Dict]:
    """Per step: number, name, start, end, windows (each with its device, None for the host),
    executions, device (ps), device_end (latest end of its executions, 0 when none), compiling
    (a compile of the host overlaps it), warmup (compiling, or it holds a warm-up execution),
    modules {(name, pid): n}."""
    return steps_with_source(path)[1]


def steps_with_source(path: str):
    source, out = marked_steps(path)
    for s in out:
        s.update(executions=0, device=0, device_end=0, warmup=False, modules=defaultdict(int))
    # Per device (None: the host), its windows by start, each with its step.
    scopes = defaultdict(list)
    for s in out:
        for w in s["windows"]:
            scopes[w["device"]].append((w["start"], w["end"], s))
    for ws in scopes.values():
        ws.sort(key=lambda w: w[0])
    for device, execs in to.module_executions(path).items():
        ws = scopes.get(None if source == "host-annotation" else device, [])
        starts = [w[0] for w in ws]
        for x in execs:
            i = bisect.bisect_right(starts, x["start"]) - 1
            if i < 0 or x["start"] >= ws[i][1]:
                continue
            s = ws[i][2]
            s["executions"] += 1
            s["device"] += x["end"] - x["start"]
            s["device_end"] = max(s["device_end"], x["end"])
            s["warmup"] = s["warmup"] or x["warmup"]
            s["modules"][(x["name"], x["program_id"])] += 1
    # A step during which the host compiled is not steady either.
    compiling = to.compile_windows(path)
    for s in out:
        s["compiling"] = any(a < s["end"] and b > s["start"] for a, b in compiling)
        s["warmup"] = s["warmup"] or s["compiling"]
    return source, out
