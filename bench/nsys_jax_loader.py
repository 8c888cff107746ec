"""Time nsys-jax's own loader against `jaxprof summary` on the same archive.

nsys-jax users unpack the archive and call `nsys_jax.load_profiler_data(prefix)`, which reads the
Parquet and CSV tables with pandas and parses the HLO dumps with protobuf to tell communication
from compute and size the collectives. This script does the same from the nsys-jax sources in
NSYS_JAX_SRC (a directory holding the `nsys_jax` package; it is not part of this repository):

    python3 bench/nsys_jax_loader.py ARCHIVE.zip --nsys-jax-src DIR --jaxprof build/jaxprof \
        [--results bench/RESULTS.md]

With --results, the section between the nsys-jax-loader markers of that file is replaced (or
appended); bench/make_report.py keeps it when it rewrites the file.

Each nsys-jax run is a fresh interpreter (the loader caches parsed protos per process); the time
is that of the `load_profiler_data` call alone: unpacking the archive, compiling the archive's
.proto files with protoc, interpreter start-up and the pandas import are left out (they favour
nsys-jax). jaxprof is timed as a whole process (start-up, reading the zip, printing included).
Wall time and CPU time (user + system, all threads) are both reported: on a loaded machine the
wall times say little, and jaxprof's wall time depends on spare cores (it decompresses members on
several threads), while nsys-jax's loader runs on one.
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

START = "<!-- nsys-jax-loader:start -->"
END = "<!-- nsys-jax-loader:end -->"
# What the figures mean; written under the table.
NOTES = """\
The nsys-jax loader is NVIDIA/JAX-Toolbox's `nsys_jax` package (`data_loaders.py` at
0299d5a, the last version whose thunk index has no instruction name level; `protobuf.py`'s
`HloProto`/`HloInstruction` and the message-size code of `analysis.py` (the branches this archive
reaches) from the current sources; the
program-id lookup of dumps as that `data_loaders.py` expects it), run on the extracted archive with
all four frames (communication, compile, module, thunk), as `nsys-jax`'s notebooks do. It gives
the same figures as jaxprof: 323 module executions, 13,827 thunks, 120 collectives, the step
function's five times. Under cProfile its time goes to the compile frame (about 70%: row-wise
pandas `transform` and the parallel-range splicing), the GPU trace (about 25%, of which a third is
parsing the HLO protos with protobuf) and the rest.

jaxprof's CPU time (perf, one thread): xz decompression of the HLO dumps and the push/pop CSV
(18 MB out) about 36%, decoding the HLO protos 17%, parsing the CSV 9%, the summary's analyses 13%,
the rest reading the Parquet trace and building the model. Dumps and the CSV are decoded on worker
threads while the main thread reads the trace, so with spare cores the wall time is below the CPU
time; their buffers get transparent huge pages (page faults 16,000 to 6,000, CPU time -17%). On this shared 2-core machine other jobs run at the same time: the wall figures vary from
run to run with the load (over repeated invocations the nsys-jax median went from 3.1 s to 6.9 s,
jaxprof's from 93 ms to 370 ms). With the machine otherwise idle the median ratio is 27× to 33× in
wall time and 18× to 20× in CPU time; under load from other jobs it fell to 16× to 24× in wall
time. jaxprof's CPU time is above its wall time because it decodes on two threads; most of it is
xz and protobuf decoding that any loader of these members must do.\
"""

RUN_LOADER = r"""
import pathlib, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import nsys_jax
t, c = time.perf_counter(), time.process_time()
data = nsys_jax.load_profiler_data(pathlib.Path(sys.argv[3]),
                                   frames={"communication", "compile", "module", "thunk"})
dt, dc = time.perf_counter() - t, time.process_time() - c
print(dt, dc, len(data.module), len(data.thunk), len(data.communication), len(data.compile))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("archive")
    ap.add_argument("--nsys-jax-src", required=True)
    ap.add_argument("--jaxprof", default="build/jaxprof")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("--results", help="write the section into this markdown file")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "profile")
        t = time.perf_counter()
        with zipfile.ZipFile(args.archive) as z:
            z.extractall(prefix)
        unzip_s = time.perf_counter() - t
        # What nsys-jax's compile_protos does: the archive's own .proto files, as Python modules.
        pb = os.path.join(tmp, "pb")
        os.mkdir(pb)
        protos = os.path.join(prefix, "protos")
        files = [os.path.relpath(os.path.join(d, f), protos)
                 for d, _, fs in os.walk(protos) for f in fs if f.endswith(".proto")]
        subprocess.run([args.protoc, "-I" + protos, "--python_out=" + pb, *files], check=True)

        loads, load_cpu, shape = [], [], None
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", RUN_LOADER, args.nsys_jax_src, pb, prefix],
                                 check=True, capture_output=True, text=True).stdout.split("\n")
            fields = out[-2].split()
            loads.append(float(fields[0]))
            load_cpu.append(float(fields[1]))
            shape = fields[2:]

    runs, cpu = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        proc = subprocess.Popen([args.jaxprof, "summary", args.archive], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        runs.append(time.perf_counter() - t)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("jaxprof summary failed")
        cpu.append(usage.ru_utime + usage.ru_stime)

    load, ours = statistics.median(loads), statistics.median(runs)
    med = statistics.median
    print(f"archive: {args.archive}")
    print(f"nsys-jax: unzip {unzip_s:.3f} s (not counted); load_profiler_data median {load:.3f} s "
          f"(min {min(loads):.3f}, max {max(loads):.3f}) over {len(loads)} runs; "
          f"modules {shape[0]}, thunks {shape[1]}, communication {shape[2]}, compile {shape[3]}; "
          f"CPU median {med(load_cpu):.3f} s")
    print(f"jaxprof summary: median {ours * 1e3:.1f} ms (min {min(runs) * 1e3:.1f}, "
          f"max {max(runs) * 1e3:.1f}) over {len(runs)} runs; CPU (all threads) median "
          f"{med(cpu) * 1e3:.1f} ms")
    print(f"ratio: wall {load / ours:.1f}x, CPU {med(load_cpu) / med(cpu):.1f}x")
    if args.results:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        rows = [
            ("nsys-jax `load_profiler_data` (pandas, protobuf)", loads, load_cpu),
            ("`jaxprof summary` (whole process)", runs, cpu),
        ]
        lines = [
            START, "### nsys-jax archive: loader comparison", "",
            f"`{os.path.basename(args.archive)}` ({os.path.getsize(args.archive) / 1e6:.1f} MB; "
            f"{shape[0]} module executions, {shape[1]} thunks, {shape[2]} collectives, "
            f"{shape[3]} compile ranges). Made by `bench/nsys_jax_loader.py` "
            f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit "
            f"{commit}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end). "
            f"Median of {len(runs)} runs each; nsys-jax's time is that of the "
            "`load_profiler_data` call alone (unpacking, protoc, interpreter start-up and imports "
            "not counted).", "",
            "| loader | wall median (min–max) | CPU median (all threads) |",
            "| --- | --- | --- |",
        ]
        for name, wall, c in rows:
            lines.append(f"| {name} | {med(wall) * 1e3:.0f} ms ({min(wall) * 1e3:.0f}–"
                         f"{max(wall) * 1e3:.0f}) | {med(c) * 1e3:.0f} ms |")
        lines += ["", f"Ratio: wall {load / ours:.1f}×, CPU {med(load_cpu) / med(cpu):.1f}×.", "",
                  NOTES, END]
        section = "\n".join(lines) + "\n"
        old = open(args.results).read() if os.path.exists(args.results) else ""
        pat = re.compile(re.escape(START) + ".*?" + re.escape(END) + "\n?", re.S)
        new = pat.sub(lambda _: section, old) if pat.search(old) else \
            old.rstrip("\n") + "\n\n" + section
        with open(args.results, "w", encoding="utf-8") as f:
            f.write(new)


if __name__ == "__main__":
    main()
