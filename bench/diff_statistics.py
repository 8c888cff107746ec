#!/usr/bin/env python3
"""Time `jaxprof diff --format json` on two synthetic CPU profiles of many runs and ops, where the
per-row statistics (Mann-Whitney test, its inverted interval, the Hodges-Lehmann estimates)
are most of the work.

    bench/diff_statistics.py [--runs 1000] [--ops 300] [--repeat 5] BINARY [BINARY ...]

Prints, per binary, the median wall and CPU (user + system) time of a whole process run.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import numpy as np  # noqa: E402

import synthetic_profiles as sp  # noqa: E402


def make_pair(out: Path, runs: int, ops: int) -> tuple:
    rng = np.random.default_rng(0)
    paths = []
    for name, effect in (("base", 1.0), ("new", 1.03)):  # NEW 3% slower, 10% noise per run
        times = {f"fusion.{i}": np.round(1e6 * (1 + i % 7) * effect *
                                         np.exp(rng.normal(0, 0.1, runs))) for i in range(ops)}
        path = out / f"{name}.xplane.pb"
        sp.build_cpu_runs(path, times)
        paths.append(path)
    return tuple(paths)


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--ops", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, new = make_pair(Path(tmp), args.runs, args.ops)
        print(f"{args.ops} ops x {args.runs} runs per side ({base.stat().st_size / 1e6:.1f} MB "
              f"each), {args.repeat} runs per binary")
        for binary in args.binaries:
            wall, cpu = [], []
            for _ in range(args.repeat):
                c0, t0 = cpu_seconds(), time.perf_counter()
                subprocess.run([binary, "diff", str(base), str(new), "--format", "json"],
                               check=True, stdout=subprocess.DEVNULL)
                wall.append(time.perf_counter() - t0)
                cpu.append(cpu_seconds() - c0)
            print(f"{binary}: wall {statistics.median(wall):.3f} s, "
                  f"CPU {statistics.median(cpu):.3f} s (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
