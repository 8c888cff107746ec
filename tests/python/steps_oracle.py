"""Reference implementation of the per-step times of `jaxprof modules` (docs/modules.md, Steps),
for the tests: StepTraceAnnotation events (host events with a step_num stat) and the module
executions of timeline_oracle that start in each. Shares no code with the C++."""
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


def steps(path: str) -> List[Dict]:
    """Per step: number, start, end, executions, device (ps), device_end (latest end of its
    executions, 0 when none), warmup, modules {(name, pid): n}."""
    out = host_steps(path)
    for s in out:
        s.update(executions=0, device=0, device_end=0, warmup=False, modules=defaultdict(int))
    starts = [s["start"] for s in out]
    for execs in to.module_executions(path).values():
        for x in execs:
            i = bisect.bisect_right(starts, x["start"]) - 1
            if i < 0 or x["start"] >= out[i]["end"]:
                continue
            s = out[i]
            s["executions"] += 1
            s["device"] += x["end"] - x["start"]
            s["device_end"] = max(s["device_end"], x["end"])
            s["warmup"] = s["warmup"] or x["warmup"]
            s["modules"][(x["name"], x["program_id"])] += 1
    return out
