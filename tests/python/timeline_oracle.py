"""Reference implementation of `jaxprof timeline` (and of the module executions it uses), for
the tests. Reads profiles with xplane_oracle's protobuf loader; shares no code with the C++.

Definitions (docs/timeline.md): per device, C, M, Y are the unions of the compute,
communication and memcpy op intervals; compute = |C|, comm exposed = |M - C|, memcpy exposed =
|Y - (C u M)|, idle = span - |C u M u Y|; idle in modules = |idle n (union of execution spans)|.
"""
from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from typing import Dict, List, Optional, Tuple

import xplane_oracle as xo

Interval = Tuple[int, int]

COLLECTIVE_OPCODES = {
    "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
    "collective-broadcast", "all-reduce-start", "all-reduce-done", "all-gather-start",
    "all-gather-done", "collective-permute-start", "collective-permute-done", "ragged-all-to-all"}
MEMCPY_OPCODES = {"copy", "copy-start", "copy-done"}
ATTENTION_WORDS = ("attention", "flash", "fmha", "mha_", "_attn", "splash")
COLLECTIVE_WORDS = ("nccl", "rccl", "all-reduce", "allreduce", "all_reduce", "all-gather",
                    "allgather", "reduce-scatter", "reducescatter", "all-to-all", "alltoall",
                    "collective-permute", "sendrecv")
MEMCPY_WORDS = ("memcpy", "copybuffer", "copy_buffer", "fillbuffer", "dtoh", "htod", "dtod")
MEMCPY_PREFIXES = ("memcpy", "memset", "copy", "memory_copy_")


def stream_memory(line_name: str) -> bool:
    """A GPU stream line that carries only copies, or only fills."""
    m = re.match(r"Stream #[^(]*\((.*)\)$", line_name)
    if not m or not m.group(1):
        return False
    kinds = [k.strip() for k in m.group(1).split(",")]
    copies = all(k.startswith("Memcpy") for k in kinds)
    fills = all(k.startswith("Memset") for k in kinds)
    return copies or fills


def memory_by_name(name: str) -> bool:
    n = name.lower()
    return n.startswith(MEMCPY_PREFIXES) or any(w in n for w in MEMCPY_WORDS)


def kind(e: xo.Event) -> str:
    """compute, comm or memcpy: a copy or fill by the event's stats or stream first, then by
    HLO opcode when known, else by kernel name."""
    if e.memory_stat or stream_memory(e.line_name):
        return "memcpy"
    if e.opcode:
        if e.opcode in MEMCPY_OPCODES:
            return "memcpy"
        name = (e.hlo_op or "").lower()
        if any(w in name for w in ATTENTION_WORDS):
            return "compute"
        op = e.opcode
        if op in COLLECTIVE_OPCODES or op.startswith("send") or op.startswith("recv"):
            return "comm"
        return "compute"
    if memory_by_name(e.kernel):
        return "memcpy"
    name = e.kernel.lower()
    if any(w in name for w in ATTENTION_WORDS):
        return "compute"
    if any(w in name for w in COLLECTIVE_WORDS):
        return "comm"
    return "compute"


def merge(intervals) -> List[Interval]:
    out: List[List[int]] = []
    for s, t in sorted(intervals):
        if t <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], t)
        else:
            out.append([s, t])
    return [(s, t) for s, t in out]


def total(intervals: List[Interval]) -> int:
    return sum(t - s for s, t in intervals)


def subtract(a: List[Interval], b: List[Interval]) -> List[Interval]:
    """a minus b, both merged; by sweeping every boundary."""
    out = []
    for s, t in a:
        cur = s
        for bs, bt in b:
            if bt <= cur or bs >= t:
                continue
            if bs > cur:
                out.append((cur, bs))
            cur = max(cur, bt)
            if cur >= t:
                break
        if cur < t:
            out.append((cur, t))
    return out


def intersect_length(a: List[Interval], b: List[Interval]) -> int:
    return sum(max(0, min(t, bt) - max(s, bs)) for s, t in a for bs, bt in b)


# ---------------------------------------------------------------------------
# Module executions: (device name) -> list of dicts {name, program_id, start, end, ops}
# ---------------------------------------------------------------------------

def _event_start(xl, ev, base):
    return (xl.timestamp_ns - base) * 1000 + ev.offset_ps


def _module_of(st: Dict) -> Optional[Tuple]:
    mod, pid = st.get("hlo_module"), xo._as_int(st.get("program_id"))
    if mod is None and pid is None:
        return None
    return (None if mod is None else xo._as_text(mod), None if pid is None else pid % (1 << 64))


def module_executions(path: str) -> Dict[str, List[Dict]]:
    files = xo.profile_files(path)
    spaces = [xo.load_xspace(f) for f in files]
    base = xo._base_ns(spaces)
    out: Dict[str, List[Dict]] = {}
    for space in spaces:
        device_planes = [p for p in space.planes if p.name.startswith("/device:") and any(
            len(l.events) for l in p.lines if xo._is_counted_line(l.name))]
        if device_planes:
            host = _HostIndex(space, base)
            mine = {plane.name: _device_plane_executions(plane, base, host)
                    for plane in device_planes}
        else:
            mine = _cpu_executions(space, base)
        compiled = _compiles(space, base)
        for execs in mine.values():
            _mark_warmup(execs, compiled)
        out.update(mine)
    return out


_COMPILE_ROOTS = ("backend_compile", "backend_compile_and_load")
_COMPILE_ROOT_ENDS = ("Client::Compile", "Compiler::Compile", "Client::CompileAndLoad")


def _is_compile_root(name: str) -> bool:
    return name in _COMPILE_ROOTS or name.endswith(_COMPILE_ROOT_ENDS)


def compile_windows(path: str) -> List[Interval]:
    """The host threads' compile entries (backend_compile, *Client::Compile, ...) as intervals on
    the profile's clock, merged: when the host was compiling."""
    spaces = [xo.load_xspace(f) for f in xo.profile_files(path)]
    base = xo._base_ns(spaces)
    out = []
    for space in spaces:
        for plane in space.planes:
            if plane.name != "/host:CPU":
                continue
            names = {k: m.name for k, m in plane.event_metadata.items()}
            for xl in plane.lines:
                for ev in xl.events:
                    if ev.duration_ps > 0 and _is_compile_root(names.get(ev.metadata_id, "")):
                        start = _event_start(xl, ev, base)
                        out.append((start, start + ev.duration_ps))
    return merge(out)


def _compiles(space, base) -> Optional[Dict[Optional[str], int]]:
    """What the host threads say about compiling: per module name, the earliest start of a
    compile event naming it (a `name` or `hlo_module` stat); under None, the earliest compile
    entry (backend_compile, *Client::Compile) that holds no event naming a module. None when the
    space has no host threads at all."""
    planes = [p for p in space.planes if p.name == "/host:CPU" and len(p.lines)]
    if not planes:
        return None
    roots, named = [], []
    for plane in planes:
        names = {k: m.name for k, m in plane.event_metadata.items()}
        stats = xo._PlaneStats(plane)
        for xl in plane.lines:
            for ev in xl.events:
                n = names.get(ev.metadata_id, "")
                start = _event_start(xl, ev, base)
                if _is_compile_root(n):
                    roots.append((start, start + ev.duration_ps))
                if "Compile" in n or "RunBackend" in n or "Passes" in n:
                    st = stats.event_stats(ev)
                    for key in ("hlo_module", "name"):
                        v = st.get(key)
                        if v is not None and xo._as_text(v).startswith("jit_"):
                            named.append((start, xo._as_text(v)))
    out: Dict[Optional[str], int] = {}
    for start, name in named:
        out[name] = min(out.get(name, start), start)
    for a, b in roots:
        if not any(a <= t <= b for t, _ in named):
            out[None] = min(out.get(None, a), a)
    return out


def _mark_warmup(execs: List[Dict], compiled: Optional[Dict[Optional[str], int]]) -> None:
    """Warm-up: the first execution of its (name, program id) on the device that follows a
    compile of its module (or one naming no module); every first execution when the host has no
    threads to tell (docs/steady-state.md)."""
    execs.sort(key=lambda x: x["start"])
    seen = set()
    for x in execs:
        key = (x["name"], x["program_id"])
        first = key not in seen
        seen.add(key)
        if compiled is None:
            x["warmup"] = first
            continue
        since = min(compiled.get(x["name"], 1 << 62), compiled.get(None, 1 << 62))
        x["warmup"] = first and since < x["start"]


def _cpu_executions(space, base) -> Dict[str, List[Dict]]:
    """Op events of one (device, module, run_id). Without run_id (JAX 0.4.33 to 0.6.1) a run
    executes its ops on one host thread, each op of the program once: on a thread, in start
    order, an op of another module or an op already seen in the current run begins the next
    run. The key is then (thread, that run's number on the thread)."""
    groups: Dict[Tuple, Dict] = {}
    for plane in space.planes:
        if plane.name != "/host:CPU":
            continue
        stats = xo._PlaneStats(plane)
        for xl in plane.lines:
            run_no, run_module, run_ops = 0, None, set()  # the thread's current run
            for ev in sorted(xl.events, key=lambda ev: ev.offset_ps):
                st = stats.event_stats(ev)
                if "hlo_op" not in st:
                    continue
                ordinal = xo._as_int(st.get("device_ordinal"))
                dev = plane.name if ordinal is None else f"/device:CPU:{ordinal}"
                mod = _module_of(st)
                run = xo._as_int(st.get("run_id"))
                if run is None:
                    op = xo._as_text(st["hlo_op"])
                    if mod != run_module or op in run_ops:
                        run_no, run_module, run_ops = run_no + 1, mod, set()
                    run_ops.add(op)
                    run = (xl.id, run_no)
                key = (dev, mod, run)
                s = _event_start(xl, ev, base)
                g = groups.setdefault(key, {"name": mod[0], "program_id": mod[1], "start": s,
                                            "end": s + ev.duration_ps, "ops": 0})
                g["start"] = min(g["start"], s)
                g["end"] = max(g["end"], s + ev.duration_ps)
                g["ops"] += 1
    out: Dict[str, List[Dict]] = defaultdict(list)
    for (dev, _, _), g in groups.items():
        out[dev].append(g)
    return out


class _HostIndex:
    """Kernel launches (correlation_id) and GpuExecutable::ExecuteThunks windows of the host."""

    def __init__(self, space, base):
        self.launch: Dict[int, Tuple[str, int]] = {}
        windows: Dict[str, List[Interval]] = defaultdict(list)
        for plane in space.planes:
            if plane.name != "/host:CPU":
                continue
            stats = xo._PlaneStats(plane)
            for xl in plane.lines:
                lkey = (plane.name, xl.id)
                for ev in xl.events:
                    md = stats.event_md.get(ev.metadata_id)
                    name = md.name if md is not None else ""
                    s = _event_start(xl, ev, base)
                    if name == "GpuExecutable::ExecuteThunks":
                        windows[lkey].append((s, s + ev.duration_ps))
                        continue
                    c = xo._as_int(stats.event_stats(ev).get("correlation_id"))
                    if c is not None:
                        self.launch[c] = (lkey, s)
        # outermost windows of each thread, disjoint
        self.windows: Dict[str, List[Interval]] = {}
        for lkey, ws in windows.items():
            kept: List[Interval] = []
            for s, t in sorted(ws, key=lambda w: (w[0], -w[1])):
                if kept and s <= kept[-1][1]:
                    continue
                kept.append((s, t))
            self.windows[lkey] = kept
        hits: Counter = Counter()
        for lkey, t in self.launch.values():
            for wkey in self.windows:
                if self._find(wkey, t) is not None:
                    hits[(lkey, wkey)] += 1
        self.thread: Dict = {}
        for (lkey, wkey), n in sorted(hits.items(), key=lambda kv: -kv[1]):
            self.thread.setdefault(lkey, wkey)

    def _find(self, wkey, t) -> Optional[int]:
        ws = self.windows[wkey]
        i = bisect.bisect_right([w[0] for w in ws], t) - 1
        if i >= 0 and t <= ws[i][1]:
            return i
        return None

    def window(self, correlation: Optional[int]):
        if correlation is None or correlation not in self.launch:
            return None
        lkey, t = self.launch[correlation]
        wkey = self.thread.get(lkey)
        if wkey is None:
            return None
        i = self._find(wkey, t)
        return None if i is None else (wkey, i)


def _device_plane_executions(plane, base, host: _HostIndex) -> List[Dict]:
    stats = xo._PlaneStats(plane)
    module_lines = [l for l in plane.lines if l.name == "XLA Modules" and len(l.events)]
    ops = []
    for xl in plane.lines:
        if not xo._is_counted_line(xl.name):
            continue
        for ev in xl.events:
            st = stats.event_stats(ev)
            ops.append((_event_start(xl, ev, base), ev.duration_ps, st))
    ops.sort(key=lambda o: o[0])
    if module_lines:
        execs = []
        for xl in module_lines:
            for ev in xl.events:
                md = stats.event_md[ev.metadata_id]
                name, pid = md.name, None
                if name.endswith(")") and "(" in name:
                    name, pid = name[:name.rindex("(")], int(name[name.rindex("(") + 1:-1])
                s = _event_start(xl, ev, base)
                execs.append({"name": name, "program_id": pid, "start": s,
                              "end": s + ev.duration_ps, "ops": 0})
        execs.sort(key=lambda x: x["start"])
        starts = [x["start"] for x in execs]
        for s, _, st in ops:
            i = bisect.bisect_right(starts, s) - 1
            if i < 0 or s >= execs[i]["end"]:
                continue
            pid = xo._as_int(st.get("program_id"))
            if pid is not None and execs[i]["program_id"] is not None and \
                    pid % (1 << 64) != execs[i]["program_id"]:
                continue
            execs[i]["ops"] += 1
        return execs
    execs: List[Dict] = []
    keyed: Dict = {}
    last = None
    for s, d, st in ops:
        mod = _module_of(st)
        if mod is None:
            continue
        w = host.window(xo._as_int(st.get("correlation_id")))
        group = xo._as_int(st.get("group_id"))
        if w is not None:
            k = (mod, w)
            if k not in keyed:
                keyed[k] = len(execs)
                execs.append({"name": mod[0], "program_id": mod[1], "start": s, "end": s + d,
                              "ops": 0, "group": group})
            i = keyed[k]
        elif last is not None and (execs[last]["name"], execs[last]["program_id"]) == mod \
                and execs[last]["group"] == group:
            i = last
        else:
            i = len(execs)
            execs.append({"name": mod[0], "program_id": mod[1], "start": s, "end": s + d,
                          "ops": 0, "group": group})
        x = execs[i]
        x["start"], x["end"] = min(x["start"], s), max(x["end"], s + d)
        x["ops"] += 1
        last = i
    return execs


# ---------------------------------------------------------------------------
# Timeline
# ---------------------------------------------------------------------------

def timeline(path: str) -> List[Dict]:
    devices = xo.analyze_path(path)
    execs = module_executions(path)
    out = []
    for d in devices:
        by: Dict[str, list] = {"compute": [], "comm": [], "memcpy": []}
        for e in d.events:
            by[kind(e)].append((e.start_ps, e.end_ps))
        C, M, Y = merge(by["compute"]), merge(by["comm"]), merge(by["memcpy"])
        CM = merge(C + M)
        busy = merge(CM + Y)
        first = min(e.start_ps for e in d.events)
        last = max(e.end_ps for e in d.events)
        idle = subtract([(first, last)], busy)
        spans = merge((x["start"], x["end"]) for x in execs.get(d.device, []))
        idle_in = intersect_length(idle, spans)
        out.append({
            "device": d.device, "host": d.host, "events": len(d.events),
            "executions": len(execs.get(d.device, [])),
            "span_ps": last - first, "busy_ps": total(busy), "compute_ps": total(C),
            "comm_ps": total(M), "comm_exposed_ps": total(subtract(M, C)),
            "memcpy_ps": total(Y), "memcpy_exposed_ps": total(subtract(Y, CM)),
            "idle_ps": total(idle), "idle_in_modules_ps": idle_in,
            "idle_between_modules_ps": total(idle) - idle_in,
        })
    return out
