#!/usr/bin/env python3
"""jaxprof.distributed on a Dask LocalCluster of 1 and 2 workers over a run directory: wall time,
CPU time (the workers' and the driver's, which holds the scheduler), speed-up, each worker's peak
RSS, and whether the merged summary equals `jaxprof summary`. On a shared machine a niced run
waits for the cores: CPU time says what the work costs.

usage: multihost_dask.py RUN_DIR [--workers 1 2] [--batch N ...] [--jaxprof build/jaxprof]
       (--batch 1: one task per host, as before batching; default: jaxprof.distributed's choice)
"""
import argparse
import json
import os
import resource
import subprocess
import time


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch", type=int, nargs="+", default=[0], help="0: the default")
    ap.add_argument("--jaxprof", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                      "jaxprof"))
    ap.add_argument("--want", help="a file of `jaxprof summary --format json` of RUN_DIR to "
                                   "compare with (made when missing)")
    args = ap.parse_args()
    from dask.distributed import Client, LocalCluster
    from jaxprof.distributed import summarize

    if args.want and os.path.exists(args.want):
        want = json.load(open(args.want))
    else:
        t = time.monotonic()
        proc = subprocess.Popen([args.jaxprof, "summary", args.run, "--format", "json"],
                                stdout=subprocess.PIPE)
        out, _ = proc.communicate()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        want = json.loads(out)
        if args.want:
            open(args.want, "wb").write(out)
        print(f"one process (jaxprof summary): {time.monotonic() - t:.1f} s wall, "
              f"{usage.ru_utime + usage.ru_stime:.1f} s CPU, peak RSS "
              f"{usage.ru_maxrss / 1024:.0f} MB", flush=True)
    base = {}
    for batch in args.batch:
        for n in args.workers:
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                              dashboard_address=None, memory_limit=0) as cluster, \
                    Client(cluster) as client:
                client.run(lambda: __import__("jaxprof.distributed"))  # workers started
                workers_before = client.run(cpu_seconds)
                driver_before = cpu_seconds()
                t = time.monotonic()
                got = summarize(args.run, client=client, format="json", batch=batch or None)
                wall = time.monotonic() - t
                driver = cpu_seconds() - driver_before
                workers = [v - workers_before[k] for k, v in client.run(cpu_seconds).items()]
                rss = client.run(peak_rss_mb)
            base.setdefault(batch, wall)
            print(f"batch {batch or 'default'}, {n} worker(s): {wall:.1f} s wall, speed-up "
                  f"{base[batch] / wall:.2f}x; CPU: workers {' + '.join(f'{w:.1f}' for w in workers)}"
                  f" s, driver and scheduler {driver:.1f} s; peak RSS per worker "
                  f"{', '.join(f'{v:.0f} MB' for v in rss.values())}; equal to jaxprof summary: "
                  f"{got == want}", flush=True)


if __name__ == "__main__":
    main()
