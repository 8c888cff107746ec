#!/usr/bin/env python3
"""Profile.table("device_ops") and `jaxprof sql` against `jaxprof ops` (docs/tables.md).

For each profile: `jaxprof ops --format json` end to end (best wall and CPU of RUNS, and its peak
RSS); loading the profile and building the device_ops Arrow table in Python (best of RUNS, timed
inside the process after the imports of pyarrow and jaxprof, and the process's peak RSS less its
RSS before loading); and a GROUP BY over every device op through `jaxprof sql` end to end (JSON out; best wall and CPU, alternated
with the `ops` runs), with the ratios.

    PYTHONPATH=python bench/tables.py PROFILE... [--jaxprof build/jaxprof] [--runs 5]

With --export-hosts RUN_DIR (a bench/make_hosts.py set, e.g. /work/bench-data/hosts1000): `jaxprof
export --parquet` of the first --hosts N hosts (every table of every host, host by host) against
`jaxprof summary` of the same hosts, each end to end under /usr/bin/time -v (wall, CPU, peak RSS),
and the Parquet written; --runs runs each, alternated.

    PYTHONPATH=python bench/tables.py --export-hosts /work/bench-data/hosts1000 --hosts 100

With --sql-paths: `jaxprof sql` through DuckDB's C API in the command (JAXPROF_SQL_NATIVE=require)
and handed to Python (=off), each against `jaxprof ops --format json`, the three alternated, best
wall and CPU and worst peak RSS of --runs, for NAME_SUM (JSON out).

    bench/tables.py --sql-paths /work/bench-data/conv80.xplane.pb /work/bench-data/tpu80.xplane.pb

The largest shared fixture is tf_v100_8gpu_training.xplane.pb; the 80 MB profile comes from
../shared/tools/scale_xplane.py IN OUT --target-mb 80.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GROUP_BY = ("SELECT device, module, hlo_op, count(*) AS n, sum(duration_ps) AS total_ps, "
            "sum(self_ps) AS self_ps FROM device_ops GROUP BY ALL")

NAME_SUM = "select name, sum(duration_ps) from device_ops group by name"

TABLE_RUN = r"""
import resource, sys, time
import pyarrow, pyarrow.compute
from jaxprof import load  # imports once per process, not timed
def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (resource.getpagesize() // 1024)
before = rss_kb()
t0 = time.perf_counter()
t = load(sys.argv[1]).table("device_ops")  # the default call: steady-state rows only
dt = time.perf_counter() - t0
print(dt, t.num_rows, before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def usage(cmd, env):
    """Wall seconds, CPU seconds (user + system, to the microsecond, where GNU time gives 10 ms)
    and peak RSS (KB) of one run: os.wait4 of the process, exec'd Python included."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def time_v(cmd, env):
    """Wall seconds, CPU seconds (user + system) and peak RSS (KB) of one run: /usr/bin/time -v."""
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")

    def field(name):
        return re.search(rf"{name}: (.*)", r.stderr).group(1).strip()

    wall = 0.0
    for part in field(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\)").split(":"):
        wall = wall * 60 + float(part)
    cpu = float(field(r"User time \(seconds\)")) + float(field(r"System time \(seconds\)"))
    return wall, cpu, int(field(r"Maximum resident set size \(kbytes\)"))


def export_vs_summary(run_dir: str, hosts: int, binary: str, runs: int, env) -> None:
    """`export --parquet` and `summary` of the first `hosts` hosts of a run directory (a run
    directory of links to them, so both read the same files)."""
    files = sorted(p for p in Path(run_dir).rglob("*.xplane.pb*"))[:hosts]
    work = Path(tempfile.mkdtemp(prefix="jaxprof-export-bench-"))
    try:
        run = work / "run" / "plugins" / "profile" / "bench"
        run.mkdir(parents=True)
        for f in files:
            (run / f.name).symlink_to(f.resolve())
        mb = sum(f.stat().st_size for f in files) / 1e6
        rows = {"export": [], "summary": []}
        for i in range(runs):
            out = work / f"parquet{i}"
            rows["export"].append(time_v([binary, "export", str(work / "run"), "--parquet",
                                          str(out)], env))
            written = sum(p.stat().st_size for p in out.rglob("*.parquet")) / 1e6
            parts = len(list(out.rglob("*.parquet")))
            shutil.rmtree(out)
            rows["summary"].append(time_v([binary, "summary", str(work / "run"), "--format",
                                           "json"], env))
        print(f"{len(files)} hosts, {mb:,.0f} MB of profiles; export wrote {parts:,} files, "
              f"{written:,.0f} MB; {runs} runs each, alternated (best wall and CPU, worst peak)")
        print("| command | wall | CPU | peak RSS |")
        print("| --- | --- | --- | --- |")
        for name, r in rows.items():
            print(f"| `{name}` | {min(x[0] for x in r):.1f} s | {min(x[1] for x in r):.1f} s | "
                  f"{max(x[2] for x in r) / 1e3:.0f} MB |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def sql_paths(profiles, binary: str, runs: int, env) -> None:
    """`sql` natively and through Python against `ops`, alternated."""
    print(f"{runs} runs each, alternated: best wall and CPU (user + sys), worst peak RSS")
    print("| profile | `ops` wall / CPU / peak | `sql` C API wall / CPU / peak | sql / ops "
          "(CPU) | `sql` Python wall / CPU / peak | sql / ops (CPU) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for path in profiles:
        rows = {"ops": [], "require": [], "off": []}
        for _ in range(runs):
            rows["ops"].append(usage([binary, "ops", path, "--format", "json"], env))
            for mode in ("require", "off"):
                rows[mode].append(usage([binary, "sql", path, NAME_SUM, "--format", "json"],
                                        dict(env, JAXPROF_SQL_NATIVE=mode)))
        best = {k: (min(x[0] for x in r), min(x[1] for x in r), max(x[2] for x in r))
                for k, r in rows.items()}

        def cell(k):
            w, c, kb = best[k]
            return f"{w * 1e3:.0f} ms / {c * 1e3:.0f} ms / {kb / 1e3:.0f} MB"

        print(f"| {Path(path).name} | {cell('ops')} | {cell('require')} | "
              f"{best['require'][1] / best['ops'][1]:.2f}x | {cell('off')} | "
              f"{best['off'][1] / best['ops'][1]:.2f}x |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("profiles", nargs="*")
    ap.add_argument("--jaxprof", default=str(ROOT / "build" / "jaxprof"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--export-hosts", metavar="RUN_DIR",
                    help="time export --parquet against summary on this set of hosts")
    ap.add_argument("--hosts", type=int, default=100, help="with --export-hosts: hosts to read")
    ap.add_argument("--sql-paths", action="store_true",
                    help="time sql through DuckDB's C API and through Python against ops")
    a = ap.parse_args()
    env = dict(os.environ, JAXPROF_PYTHON=sys.executable)
    if a.sql_paths:
        sql_paths(a.profiles, a.jaxprof, a.runs, env)
        return 0
    if a.export_hosts:
        export_vs_summary(a.export_hosts, a.hosts, a.jaxprof, a.runs, env)
        return 0
    if not a.profiles:
        ap.error("give PROFILE... or --export-hosts RUN_DIR")
    print("| profile | size | device ops | `ops` wall / CPU / peak | table() time / peak over "
          "load | table / ops | `sql` GROUP BY wall / CPU / peak | sql / ops (wall, CPU) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in a.profiles:
        mb = os.path.getsize(path) / 1e6
        ops, sql = [], []
        for _ in range(a.runs):  # alternated, so both see the same load on a shared machine
            ops.append(usage([a.jaxprof, "ops", path, "--format", "json"], env))
            sql.append(usage([a.jaxprof, "sql", path, GROUP_BY, "--format", "json"], env))
        ops_s, ops_cpu, ops_kb = (min(o[0] for o in ops), min(o[1] for o in ops),
                                  max(o[2] for o in ops))
        sql_s, sql_cpu, sql_kb = (min(o[0] for o in sql), min(o[1] for o in sql),
                                  max(o[2] for o in sql))
        runs = []
        for _ in range(a.runs):
            out = subprocess.run([sys.executable, "-c", TABLE_RUN, path], capture_output=True,
                                 text=True, check=True, env=env).stdout.split()
            runs.append((float(out[0]), int(out[1]), int(out[2]), int(out[3])))
        table_s = min(r[0] for r in runs)
        rows = runs[0][1]
        table_kb = max(r[3] - r[2] for r in runs)
        print(f"| {Path(path).name} | {mb:.1f} MB | {rows:,} | {ops_s * 1e3:.0f} ms / "
              f"{ops_cpu * 1e3:.0f} ms / {ops_kb / 1e3:.0f} MB | {table_s * 1e3:.0f} ms / "
              f"{table_kb / 1e3:.0f} MB | {table_s / ops_s:.1f}x time, "
              f"{table_kb / ops_kb:.1f}x peak | {sql_s * 1e3:.0f} ms / {sql_cpu * 1e3:.0f} ms / "
              f"{sql_kb / 1e3:.0f} MB | {sql_s / ops_s:.1f}x, {sql_cpu / ops_cpu:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
