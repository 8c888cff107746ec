"""Time nsys-jax's own loader against `jaxprof summary` on the same archive.

nsys-jax users unpack the archive and call `nsys_jax.load_profiler_data(prefix)`, which reads the
Parquet and CSV tables with pandas and parses the HLO dumps with protobuf to tell communication
from compute and size the collectives. This script does the same from the nsys-jax sources in
NSYS_JAX_SRC (a directory holding the `nsys_jax` package; it is not part of this repository):

    python3 bench/nsys_jax_loader.py ARCHIVE.zip --nsys-jax-src DIR --jaxprof build/jaxprof

Each nsys-jax run is a fresh interpreter (the loader caches parsed protos per process); the time
is that of the `load_profiler_data` call alone: unpacking the archive, compiling the archive's
.proto files with protoc, interpreter start-up and the pandas import are left out (they favour
nsys-jax). jaxprof is timed as a whole process (start-up, reading the zip, printing included).
Wall time and CPU time (user + system, all threads) are both reported: on a loaded machine the
wall times say little, and jaxprof's wall time depends on spare cores (it decompresses members on
several threads), while nsys-jax's loader runs on one.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

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


if __name__ == "__main__":
    main()
