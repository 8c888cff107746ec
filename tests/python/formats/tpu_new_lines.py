"""Newer TPU capture layouts (v5p / v6e / v7 with recent XProf), added to a real TPU profile.

No shared fixture comes from such a capture, so these variants take the real
tpu_4chip_inference profile and add the planes and lines the newer layouts have, with the names
XLA's and XProf's profiler schema give them (tsl/profiler/utils/xplane_schema, tpu_xplane_utils):

- counters:   a "_counters_" line on every /device:TPU:N plane: zero-duration samples of chip
              counters (the trace viewer draws them as counter tracks, not slices);
- steps:      a "Steps" line on every /device:TPU:N plane (the device's step markers), and a
              "Tensor Core Sync Flag" line;
- sparsecore: a "/device:TPU:N SparseCore M" plane per chip, with "Sparse Core Steps",
              "Sparse Core Modules", "Sparse Core Ops" and "Sparse Core Syncs" lines (XProf's
              op statistics leave SparseCore planes out);
- megascale:  a "/device:CUSTOM:Megascale Trace" plane of DCN transfer actions ("NetworkSend",
              "NetworkReceive", "D2H", "H2D") with their graph_key and action stats;
- task_env:   more stats on the existing "Task Environment" plane.

The event names, counter names and stat values are plausible, not copied from a capture.

    python3 tpu_new_lines.py OUT_DIR   writes OUT_DIR/<variant>/tpu.xplane.pb per variant and
                                       OUT_DIR/all/tpu.xplane.pb with them all
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable, Dict, List

_here = Path(__file__).resolve().parent
sys.path.insert(0, str(_here.parent))

import xplane_oracle as xo  # noqa: E402
from xspace_builder import SpaceBuilder, U64  # noqa: E402

FIXTURE = "xplane/tpu_4chip_inference.xplane.pb"
TPU_PLANE = re.compile(r"/device:TPU:([0-9]+)$")
COUNTERS = ("HBM bandwidth utilization (%)", "ICI bandwidth (GB/s)", "TensorCore duty cycle (%)")
SAMPLE_PERIOD_PS = 500_000_000_000  # one sample of each counter every 0.5 s


def _tpu_planes(space) -> List:
    return [p for p in space.planes if TPU_PLANE.match(p.name)]


def _line(plane, name: str):
    return next(l for l in plane.lines if l.name == name)


def _span(plane):
    """First start and last end (ps) of the plane's XLA Modules line."""
    evs = _line(plane, "XLA Modules").events
    return min(e.offset_ps for e in evs), max(e.offset_ps + e.duration_ps for e in evs)


def _free_line_id(plane) -> int:
    return max((l.id for l in plane.lines), default=0) + 1


def add_counters(sb: SpaceBuilder) -> None:
    for plane in _tpu_planes(sb.space):
        pb = sb.existing(plane.name)
        start, end = _span(plane)
        line = pb.line(_free_line_id(plane), "_counters_")
        mds = [pb.event_md(n) for n in COUNTERS]
        t, k = start, 0
        while t <= end:
            for i, md in enumerate(mds):
                value = float((k * 7 + i * 13) % 100)
                pb.event(line, md, offset_ps=t, duration_ps=0,
                         stats={"Raw Value": U64(int(value * 10)), "Scaled Value": value})
            t += SAMPLE_PERIOD_PS
            k += 1


def add_steps(sb: SpaceBuilder) -> None:
    """A "Steps" line whose steps are the module executions, and a sync flag line."""
    for plane in _tpu_planes(sb.space):
        pb = sb.existing(plane.name)
        modules = sorted(_line(plane, "XLA Modules").events, key=lambda e: e.offset_ps)
        steps = pb.line(_free_line_id(plane), "Steps")
        for n, m in enumerate(modules):
            md = pb.event_md(str(n))
            pb.event(steps, md, offset_ps=m.offset_ps, duration_ps=m.duration_ps,
                     stats={"step_num": n})
        sync = pb.line(_free_line_id(plane), "Tensor Core Sync Flag")
        flag = pb.event_md("sync-flag-wait")
        for m in modules[::4]:
            pb.event(sync, flag, offset_ps=m.offset_ps, duration_ps=min(m.duration_ps, 1000))


def add_sparsecores(sb: SpaceBuilder, per_chip: int = 2) -> None:
    for plane in _tpu_planes(sb.space):
        chip = TPU_PLANE.match(plane.name).group(1)
        modules = sorted(_line(plane, "XLA Modules").events, key=lambda e: e.offset_ps)[:20]
        for core in range(per_chip):
            sc = sb.plane(f"/device:TPU:{chip} SparseCore {core}",
                          plane_id=1000 + plane.id * 4 + core)
            steps = sc.line(1, "Sparse Core Steps")
            mods = sc.line(2, "Sparse Core Modules")
            ops = sc.line(3, "Sparse Core Ops")
            syncs = sc.line(4, "Sparse Core Syncs")
            gather = sc.event_md("sparse-gather.1", stats={"hlo_category": "data formatting"})
            scatter = sc.event_md("sparse-scatter.2")
            wait = sc.event_md("sc-sync-wait")
            for n, m in enumerate(modules):
                name = plane.event_metadata[m.metadata_id].name
                d = max(m.duration_ps // 2, 4)
                sc.event(steps, sc.event_md(str(n)), offset_ps=m.offset_ps, duration_ps=d)
                sc.event(mods, sc.event_md(name), offset_ps=m.offset_ps, duration_ps=d)
                sc.event(ops, gather, offset_ps=m.offset_ps, duration_ps=d // 2)
                sc.event(ops, scatter, offset_ps=m.offset_ps + d // 2, duration_ps=d // 4)
                sc.event(syncs, wait, offset_ps=m.offset_ps + 3 * d // 4, duration_ps=d // 4)


def add_megascale(sb: SpaceBuilder) -> None:
    """DCN transfer actions of a multi-slice collective, one line per action graph."""
    tpu0 = _tpu_planes(sb.space)[0]
    modules = sorted(_line(tpu0, "XLA Modules").events, key=lambda e: e.offset_ps)
    ms = sb.plane("/device:CUSTOM:Megascale Trace", plane_id=2000)
    actions = [ms.event_md(n) for n in ("D2H", "NetworkSend", "NetworkReceive", "H2D")]
    for dev in range(4):
        line = ms.line(dev + 1, f"device_{200000 + dev}_gid_rendezvous1")
        for run, m in enumerate(modules[:30]):
            step = max(m.duration_ps // 4, 1)
            for i, md in enumerate(actions):
                ms.event(line, md, offset_ps=m.offset_ps + i * step, duration_ps=step,
                         stats={"graph_key": f"device_{200000 + dev}_gid_rendezvous1$1^i{run}",
                                "action_index": i, "launch_id": run,
                                "buffer_sizes": "4194304", "collective_type": "all-reduce"})


def add_task_environment(sb: SpaceBuilder) -> None:
    sb.existing("Task Environment").plane_stats({"dcn_topology_level": "slice",
                                                 "multi_slice_topology": "2x1"})


VARIANTS: Dict[str, Callable[[SpaceBuilder], None]] = {
    "counters": add_counters,
    "steps": add_steps,
    "sparsecore": add_sparsecores,
    "megascale": add_megascale,
    "task_env": add_task_environment,
}


def build(fixture_path, variants, out_path) -> Path:
    """The fixture with the named variants added, written to out_path."""
    sb = SpaceBuilder(xo.load_xspace(str(fixture_path)))
    for v in variants:
        VARIANTS[v](sb)
    sb.write(out_path)
    return Path(out_path)


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print("usage: tpu_new_lines.py OUT_DIR", file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    fixture = Path(xo.__file__).resolve().parents[2].parent / "shared" / "fixtures" / FIXTURE
    for name, vs in [(v, [v]) for v in VARIANTS] + [("all", list(VARIANTS))]:
        (out / name).mkdir(exist_ok=True)
        print(build(fixture, vs, out / name / "tpu.xplane.pb"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
