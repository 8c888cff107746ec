#!/usr/bin/env python3
"""Commands timed in turn, round after round, so that a shared machine's load falls on all of
them alike: the median wall time and CPU time (user + system of the process and its threads,
from wait4's rusage) and peak RSS of each, and each one's ratio to the first.

usage: interleaved.py [--runs 15] [--warmup 2] 'LABEL=COMMAND' ...

  bench/interleaved.py --runs 25 \
      "ops=build/jaxprof ops /tmp/jaxprof-bench/big_conv.xplane.pb --format json" \
      "summary=build/jaxprof summary /tmp/jaxprof-bench/big_conv.xplane.pb --format json"
"""
import argparse
import os
import shlex
import statistics
import subprocess
import time


def run_once(argv):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{shlex.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("commands", nargs="+", help="LABEL=COMMAND")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    commands = []
    for c in args.commands:
        label, sep, command = c.partition("=")
        if not sep:
            ap.error(f"{c!r}: give LABEL=COMMAND")
        commands.append((label, shlex.split(command)))
    for _ in range(args.warmup):
        for _, argv in commands:
            run_once(argv)
    samples = {label: [] for label, _ in commands}
    for _ in range(args.runs):
        for label, argv in commands:
            samples[label].append(run_once(argv))
    first = None
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"{args.runs} rounds, medians")
    print("| command | wall | CPU | peak RSS | wall, CPU vs first |")
    print("| --- | --- | --- | --- | --- |")
    for label, _ in commands:
        wall = statistics.median(s[0] for s in samples[label]) * 1e3
        cpu = statistics.median(s[1] for s in samples[label]) * 1e3
        rss = statistics.median(s[2] for s in samples[label])
        if first is None:
            first = (wall, cpu)
        print(f"| {label} | {wall:.1f} ms | {cpu:.1f} ms | {rss:.0f} MB | "
              f"{wall / first[0]:.2f}×, {cpu / first[1]:.2f}× |")


if __name__ == "__main__":
    main()
