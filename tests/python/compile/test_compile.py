"""`jaxprof compile` against a brute-force reimplementation of its definition (docs/compile.md)
over the raw events that xplane_oracle.py loads with the protobuf package: the same compile
windows, and per phase the same wall time, found here by labelling every elementary interval of
the window from scratch instead of by a sweep. Also: phases add up to each compile's wall time."""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

import pytest

import ops_check as oc
import xplane_oracle as xo

CASES = oc.profile_cases()
PHASES = ("trace", "lower", "hlo-passes", "codegen", "compile-other", "between-stages")


def classify(name: str) -> Tuple[Optional[str], str]:
    """(kind, phase): kind is 'stage', 'root', 'phase' or None."""
    if name.startswith("$"):
        fn = name.rsplit(" ", 1)[-1]
        return ("stage", "trace") if fn in ("trace_to_jaxpr", "trace_to_jaxpr_dynamic") else (
            None, "compile-other")
    if name in ("trace_to_jaxpr_dynamic", "trace_to_jaxpr"):
        return "stage", "trace"
    if name in ("lower_sharding_computation", "lower_mesh_computation", "lower_jaxpr_to_module"):
        return "stage", "lower"
    if name in ("backend_compile", "backend_compile_and_load"):
        return "stage", "compile-other"
    if name.startswith(("FusionCompiler::", "JitCompiler::", "KernelCompiler")):
        return "phase", "codegen"
    if name.endswith(("Client::Compile", "Compiler::Compile", "Client::CompileAndLoad")):
        return "root", "compile-other"
    if name.startswith("XLA::TPU "):
        hlo = any(t in name for t in ("HLO", "hlo", "PreLayout", "X64 elimination"))
        return "phase", "hlo-passes" if hlo else "codegen"
    if (any(t in name for t in ("RunBackend", "CompileCpuExecutable", "LLVM", "llvm"))
            or name.startswith(("ThunkEmitter::", "mlir::", "TaskDispatcher::", "LSRAv2"))
            or name in ("SplitModule", "Codegen")
            or (name.endswith("Pass") and " " not in name)):
        return "phase", "codegen"
    if any(t in name for t in ("RunHloPasses", "passes", "Passes")) or name == "RunInvariantCheckers":
        return "phase", "hlo-passes"
    return None, "compile-other"


class Ev:
    __slots__ = ("start", "end", "name", "parent", "anchor", "inc", "kind", "phase", "top")

    def __init__(self, start, end, name):
        self.start, self.end, self.name = start, end, name
        self.parent = self.anchor = None
        self.inc = False
        self.kind = None
        self.phase = None
        self.top = None


def host_lines(path: str):
    """[(host, line name, [Ev sorted by start asc, duration desc])] for /host:CPU planes."""
    files = xo.profile_files(path)
    spaces = [(xo.host_of_file(f), xo.load_xspace(f)) for f in files]
    base = xo._base_ns([s for _, s in spaces])
    out = []
    for host, space in spaces:
        for plane in space.planes:
            if plane.name != "/host:CPU":
                continue
            for _, xlines in xo._merged_lines(plane):
                evs = []
                for xl in xlines:
                    for e in xl.events:
                        md = plane.event_metadata.get(e.metadata_id)
                        s = (xl.timestamp_ns - base) * 1000 + e.offset_ps
                        evs.append(Ev(s, s + e.duration_ps, md.name if md else ""))
                evs.sort(key=lambda e: (e.start, -(e.end - e.start)))
                out.append((host, xlines[0].name, evs))
    return out


def mark(line_name: str, evs: List[Ev]) -> None:
    """Nesting by brute force (the enclosing event is the latest earlier one still open), then
    which events are compile events and their phases."""
    compile_thread = any(t in line_name for t in ("Compil", "compil", "codegen"))
    thread_phase = "codegen" if "codegen" in line_name else "compile-other"
    for i, e in enumerate(evs):
        for j in range(i - 1, -1, -1):
            if evs[j].end > e.start and evs[j].end > evs[j].start:
                e.parent = evs[j]
                break
        # nearest compile ancestor and nearest anchor
        comp = None
        p = e.parent
        while p is not None and not p.inc:
            p = p.parent
        comp = p
        a = e.parent
        while a is not None and (a.inc or a.name.startswith("$")):
            a = a.parent
        e.anchor = a
        kind, phase = classify(e.name)
        if e.end == e.start or e.name.startswith("ThreadpoolListener::"):
            continue
        if kind is not None:
            e.inc, e.kind, e.phase = True, kind, phase
        elif not e.name.startswith("$"):
            if comp is not None and comp.kind != "stage":
                e.inc, e.phase = True, ("hlo-passes" if comp.kind == "root" else comp.phase)
            elif comp is None and compile_thread:
                e.inc, e.phase = True, thread_phase
        if e.inc:
            e.top = comp.top if comp is not None else e


def expected(path: str):
    lines = host_lines(path)
    for _, name, evs in lines:
        mark(name, evs)
    windows = []  # [start, end, line index, set of tops]
    for li, (_, _, evs) in enumerate(lines):
        cur = None
        for e in evs:
            if e.inc and e.top is e and e.kind == "stage":
                if cur is not None and e.anchor is not None and e.anchor is cur[4]:
                    cur[1] = max(cur[1], e.end)
                    cur[3].add(id(e))
                    continue
                cur = [e.start, e.end, li, {id(e)}, e.anchor]
                windows.append(cur)
    jax_windows = list(windows)
    for li, (_, _, evs) in enumerate(lines):
        for e in evs:
            if e.inc and e.top is e and e.kind == "root" and not any(
                    w[0] <= e.start < w[1] for w in jax_windows):
                windows.append([e.start, e.end, li, {id(e)}, None])
    windows.sort(key=lambda w: w[0])
    result = []
    for w in windows:
        start, end, li = w[0], w[1], w[2]
        # compile events of this window, per line
        members: Dict[int, List[Ev]] = defaultdict(list)
        for lj, (_, _, evs) in enumerate(lines):
            for e in evs:
                if not e.inc:
                    continue
                t = e.top
                if lj == li and id(t) in w[3]:
                    members[lj].append(e)
                    continue
                owners = [x for x in windows if x[0] <= t.start < x[1]]
                if owners and owners[-1] is w and not (lj == li and id(t) in w[3]):
                    members[lj].append(e)
        ids = {lj: {id(e) for e in evs} for lj, evs in members.items()}

        def innermost(lj: int, a: int) -> Optional[Ev]:
            # the event open on [a, a+1) that is nested deepest (clipped to its ancestors)
            best = None
            for e in members[lj]:
                lo, hi = e.start, e.end
                p = e.parent
                while p is not None:
                    if p.inc and id(p) in ids[lj]:
                        hi = min(hi, p.end)
                    p = p.parent
                if lo <= a < hi:
                    best = e  # later in line order = deeper
            return best
        cuts = {start, end}
        for evs in members.values():
            for e in evs:
                cuts.update(x for x in (e.start, e.end) if start <= x <= end)
        cuts = sorted(cuts)
        seg_busy: Dict[int, int] = defaultdict(int)
        labels = []
        for a, b in zip(cuts, cuts[1:]):
            per_line = {lj: innermost(lj, a) for lj in members}
            for lj, e in per_line.items():
                if e is not None:
                    seg_busy[lj] += b - a
            labels.append((a, b, per_line))
        workers = sorted((lj for lj in members if lj != li), key=lambda lj: (-seg_busy[lj], lj))
        phases = dict.fromkeys(PHASES, 0)
        for a, b, per_line in labels:
            chosen = None
            for lj in workers + [li]:
                if per_line.get(lj) is not None:
                    chosen = per_line[lj]
                    break
            phases[chosen.phase if chosen else "between-stages"] += b - a
        result.append({"start_ps": start, "wall_ps": end - start, "thread": lines[li][1],
                       "phases": phases,
                       "worker_busy_ps": sum(v for lj, v in seg_busy.items() if lj != li)})
    return result


def run_compile(binary, path):
    proc = oc.run_cli(binary, ["compile", str(path), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return oc.parse_json(proc.stdout)


@pytest.mark.parametrize("path", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_compile_matches_brute_force(jaxprof_bin, path):
    path = oc.require_profile(path)
    got = run_compile(jaxprof_bin, path)
    want = expected(str(path))
    assert got["compiles"] == len(want) == len(got["events"])
    for g, w in zip(got["events"], want):
        where = f"{path.name} compile at {w['start_ps']} ps"
        oc.check_ns(f"{where}: start", g["start_ns"], w["start_ps"])
        oc.check_ns(f"{where}: wall", g["wall_ns"], w["wall_ps"])
        assert g["thread"] == w["thread"], where
        oc.check_ns(f"{where}: worker busy", g["worker_busy_ns"], w["worker_busy_ps"])
        for ph in g["phases"]:
            oc.check_ns(f"{where}: {ph['phase']}", ph["wall_ns"], w["phases"][ph["phase"]])
    if not want:
        assert got["notes"], "an empty result must say why"


@pytest.mark.parametrize("path", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_compile_phases_add_up_to_wall(jaxprof_bin, path):
    path = oc.require_profile(path)
    got = run_compile(jaxprof_bin, path)
    total = 0
    for c in got["events"]:
        assert [p["phase"] for p in c["phases"]] == list(PHASES)
        assert sum(p["wall_ns"] for p in c["phases"]) == c["wall_ns"]
        assert sum(s["wall_ns"] for s in c["steps"]) == c["wall_ns"]
        total += c["wall_ns"]
    assert total == got["wall_ns"]
    assert sum(m["wall_ns"] for m in got["modules"]) == got["wall_ns"]


def test_compile_8dev_is_the_global_sse_compile(jaxprof_bin):
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_8dev")
    got = run_compile(jaxprof_bin, path)
    # tests/data/README.md: only global_sse compiles inside the capture (in step 0); XLA's passes
    # run on tf_PjRtCompilerThreadPool and MLIR codegen on tf_xla-cpu-codegen.
    (c,) = got["events"]
    assert c["module"] == "jit_global_sse" and c["function"] == "global_sse"
    assert c["thread"] == "python3" and c["worker_threads"] == 3
    phases = {p["phase"]: p["wall_ns"] for p in c["phases"]}
    assert all(phases[p] > 0 for p in ("trace", "lower", "hlo-passes", "codegen"))
