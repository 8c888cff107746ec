#!/usr/bin/env python3
"""Times ejkernel-style event extraction on one plane: jaxprof's Profiler.get_events_from_plane
against the same extraction written in Python over jax.profiler.ProfileData (what ejkernel's and
tune-jax's profilers do), and checks that both give the same keys and times.

Usage: bench/events_from_plane.py PROFILE [--plane SUBSTR] [--runs N] [--max-events N]

The extraction is the one jaxprof.Profiler documents (docs/python.md): key
NAME(PROGRAM_ID-SCOPE_RANGE_ID) per event of the plane at least min_duration_ns long, only keys
starting with the prefix, time = union of the key's event intervals. --max-events 0 reads every
event (ejkernel's default caps at 10,000, which hides the cost of a real profile). Parsing is timed
apart from extraction: each side parses once, then extracts --runs times.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time


def python_extract(plane, prefix: str, min_duration_ns: float, max_events: int) -> dict:
    """The extraction over ProfileData objects, in plain Python."""
    intervals: dict = {}
    seen = 0
    for line in plane.lines:
        for event in line.events:
            if max_events and seen >= max_events:
                break
            dur = event.duration_ns
            if dur < min_duration_ns:
                continue
            seen += 1
            stats = dict(event.stats)
            name = stats.get("hlo_module", event.name)
            program = stats.get("program_id", stats.get("run_id"))
            scope = stats.get("scope_range_id")
            key = f"{name}({program}-{scope})"
            if not key.startswith(prefix):
                continue
            start = event.start_ns
            intervals.setdefault(key, []).append((start, start + dur))
    out = {}
    for key, spans in intervals.items():
        spans.sort()
        total = 0.0
        cur_s, cur_e = spans[0]
        for s, e in spans[1:]:
            if s > cur_e:
                total += cur_e - cur_s
                cur_s, cur_e = s, e
            elif e > cur_e:
                cur_e = e
        total += cur_e - cur_s
        out[key] = total / 1e9
    return out


def timed(fn, runs: int):
    """Wall and CPU seconds of each run. CPU time (all threads of the process) is what to compare
    on a busy machine: jaxprof releases the GIL and runs the extraction on one thread."""
    wall, cpu, result = [], [], None
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return result, wall, cpu


def fmt(wall, cpu) -> str:
    return (f"wall {statistics.median(wall) * 1e3:9.1f} ms, cpu {statistics.median(cpu) * 1e3:9.1f} ms"
            f" (medians of {len(wall)})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--plane", default="/device:", help="first plane whose name contains this")
    ap.add_argument("--prefix", default="", help="key prefix filter (default: every key)")
    ap.add_argument("--min-duration-ns", type=float, default=0.0)
    ap.add_argument("--max-events", type=int, default=0, help="0 = every event of the plane")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    from jax.profiler import ProfileData

    import jaxprof

    data = open(args.profile, "rb").read()
    prof = jaxprof.Profiler(prefix_filter=args.prefix, min_duration_ns=args.min_duration_ns,
                            max_events_per_profile=args.max_events or None)

    t = time.perf_counter()
    p = prof.parse_profile_from_bytes(data)
    ours_parse = time.perf_counter() - t
    t = time.perf_counter()
    pd = ProfileData.from_serialized_xspace(data)
    theirs_parse = time.perf_counter() - t

    idx = prof.find_device_plane_ids(p, args.plane)[0]
    planes = list(pd.planes)
    assert planes[idx].name == p.planes[idx].name, "plane order differs"
    print(f"{args.profile}: plane {idx} {p.planes[idx].name!r}")

    ours, ours_w, ours_c = timed(lambda: prof.get_events_from_plane(p, idx), args.runs)
    theirs, theirs_w, theirs_c = timed(
        lambda: python_extract(planes[idx], args.prefix, args.min_duration_ns, args.max_events),
        max(1, min(args.runs, 3)))

    if set(ours) != set(theirs):
        print(f"MISMATCH: keys differ: {sorted(set(ours) ^ set(theirs))[:5]}", file=sys.stderr)
        return 1
    # ProfileData gives float ns, so the Python sums carry rounding; jaxprof's are exact ps.
    worst = max((abs(ours[k] - theirs[k]) / max(ours[k], 1e-12) for k in ours), default=0.0)
    if worst > 1e-7:  # float rounding only; a real difference is orders of magnitude larger
        print(f"MISMATCH: times differ by up to {worst:.3g} (relative)", file=sys.stderr)
        return 1
    n = sum(1 for line in planes[idx].lines for _ in line.events)
    print(f"events on the plane: {n:,}; keys: {len(ours):,}; results equal (max relative diff {worst:.3g})")
    print(f"parse    jaxprof.Profiler.parse_profile_from_bytes {ours_parse * 1e3:10.1f} ms")
    print(f"parse    jax.profiler.ProfileData                  {theirs_parse * 1e3:10.1f} ms")
    print(f"extract  jaxprof get_events_from_plane   {fmt(ours_w, ours_c)}")
    print(f"extract  Python over ProfileData         {fmt(theirs_w, theirs_c)}")
    ratio = lambda a, b: statistics.median(a) / statistics.median(b)  # noqa: E731
    print(f"speed-up (extract): {ratio(theirs_c, ours_c):.1f}x in CPU time, "
          f"{ratio(theirs_w, ours_w):.1f}x in wall time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
