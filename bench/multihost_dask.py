#!/usr/bin/env python3
"""jaxprof.distributed on a Dask LocalCluster of 1 and 2 workers over a run directory: wall time,
speed-up, each worker's peak RSS, and whether the merged summary equals `jaxprof summary`.

usage: multihost_dask.py RUN_DIR [--workers 1 2] [--jaxprof build/jaxprof]
"""
import argparse
import json
import os
import resource
import subprocess
import time


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--jaxprof", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                      "jaxprof"))
    args = ap.parse_args()
    from dask.distributed import Client, LocalCluster
    from jaxprof.distributed import summarize

    t = time.monotonic()
    want = json.loads(subprocess.run([args.jaxprof, "summary", args.run, "--format", "json"],
                                     check=True, capture_output=True).stdout)
    print(f"one process (jaxprof summary): {time.monotonic() - t:.1f} s")
    base = None
    for n in args.workers:
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit=0) as cluster, \
                Client(cluster) as client:
            t = time.monotonic()
            got = summarize(args.run, client=client, format="json")
            wall = time.monotonic() - t
            rss = client.run(peak_rss_mb)
        base = base or wall
        print(f"{n} worker(s): {wall:.1f} s, speed-up {base / wall:.2f}x, peak RSS per worker "
              f"{', '.join(f'{v:.0f} MB' for v in rss.values())}, equal to jaxprof summary: "
              f"{got == want}")


if __name__ == "__main__":
    main()
