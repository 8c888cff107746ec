"""Every input that ever broke a fuzz target (fuzz/regressions/<target>/), given to the release
command line as a user would give it: each command that reads that kind of file exits 0 or 2, and
on 2 prints one line naming the file. Never a crash, a hang, an internal error (exit 1) or a
sanitizer report.

Inputs of the decoders that sit inside nsys-jax archives (Parquet, xz, CSV) are wrapped into an
archive as the member that decoder reads; HloProtos go next to the project's own small profile.
"""
from __future__ import annotations

import gzip
import io
import lzma
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REGRESSIONS = ROOT / "fuzz" / "regressions"
MATMUL = ROOT / "tests/data/jax_cpu_matmul/plugins/profile/session/vm.xplane.pb"
TRACE = "nvtx_gpu_proj_trace/trace.parquet"
# What each kind of input is run through.
COMMANDS = {
    "decode": (["info", "--all-lines"], ["summary"]),
    "analyses": (["summary"], ["info"], ["ops", "--group-by", "kernel"], ["timeline"],
                 ["modules"], ["collectives"], ["compile"], ["kernels"], ["flame"]),
    # Partial files: the commands that take them as profiles.
    "partial": (["summary"], ["ops", "--group-by", "kernel"], ["timeline"], ["modules"],
                ["collectives"], ["compile"], ["hosts"]),
}


def inputs():
    out = []
    if REGRESSIONS.is_dir():
        for target in sorted(p for p in REGRESSIONS.iterdir() if p.is_dir()):
            out += [(target.name, f) for f in sorted(target.iterdir()) if f.is_file()]
    return out


def valid_trace_parquet() -> bytes:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({
        "Name": ["TSL:XlaModule:#hlo_module=jit_f,program_id=1#", "TSL:Thunk:#hlo_op=fusion.1#"],
        "Projected Start": pa.array([1000, 1100], pa.int64()),
        "Projected Duration": pa.array([500, 200], pa.int64()),
        "RangeId": pa.array([1.0, 2.0]), "ParentId": pa.array([None, 1.0], pa.float64()),
        "PID": pa.array([7, 7], pa.int64()), "TID": pa.array([7, 7], pa.int64()),
    })
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def archive(path: Path, members: dict) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def suffix_of(data: bytes) -> str:
    """The file name ending under which the command line reads the bytes as the `analyses` target
    does (fuzz/analyses_fuzz.cc decides by the first bytes)."""
    inner = data
    if data[:2] == b"\x1f\x8b":
        try:
            inner = gzip.decompress(data)
        except Exception:
            return ".xplane.pb.gz"
    if inner[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return ".zip"
    gz = ".gz" if inner is not data else ""
    if inner.lstrip()[:1] in (b"{", b"["):
        return ".trace.json" + gz
    return ".xplane.pb" + gz


# How each target's inputs reach the command line: the file name ending they take, or a function
# that wraps them into the archive member their decoder reads (Parquet, xz, CSV).
SUFFIXES = {"xspace": ".xplane.pb", "gzip": ".xplane.pb.gz", "chrome_trace": ".trace.json",
            "zip": ".zip", "nsys_jax": ".zip", "hlo": ".hlo.pb", "partial": ".partial"}


def command_lines(target: str, data: bytes, tmp: Path):
    """Lists of command-line paths that make the release binary decode the input."""
    if target in SUFFIXES or target == "analyses":
        path = tmp / ("input" + (SUFFIXES.get(target) or suffix_of(data)))
        path.write_bytes(data)
        return [[MATMUL, path]] if target == "hlo" else [[path]]
    valid = valid_trace_parquet()
    dump = "dump/module_0001.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb.xz"
    if target == "parquet":
        return [[archive(tmp / "trace.zip", {TRACE: data})],
                [archive(tmp / "tables.zip", {TRACE: valid, "thread-metadata.parquet": data,
                                             "device-metadata.parquet": data,
                                             "report_nvtx_pushpop_trace.parquet": data})]]
    if target == "xz":
        return [[archive(tmp / "xz.zip", {TRACE: valid, "report_nvtx_pushpop_trace.csv.xz": data,
                                         dump: data})]]
    if target == "csv":
        return [[archive(tmp / "csv.zip", {TRACE: valid,
                                          "report_nvtx_pushpop_trace.csv.xz": lzma.compress(data)})]]
    raise AssertionError(f"no command-line form for fuzz target {target}")


@pytest.mark.parametrize("target,src", inputs(), ids=[f"{t}/{p.name}" for t, p in inputs()])
def test_regression_input(jaxprof_bin, tmp_path, target, src):
    for paths in command_lines(target, src.read_bytes(), tmp_path):
        for command in COMMANDS.get(target, COMMANDS["decode"]):
            argv = [str(jaxprof_bin), *command, *map(str, paths)]
            r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            assert r.returncode in (0, 2), f"{' '.join(argv)}: exit {r.returncode}\n{r.stderr[-3000:]}"
            if r.returncode == 2:
                # One error line, after the note of what was read when reading got that far.
                lines = [line for line in r.stderr.strip().splitlines()
                         if not line.startswith("jaxprof: read ")]
                assert len(lines) == 1 and lines[0].startswith("jaxprof: "), r.stderr
                assert any(str(p) in lines[0] for p in paths), lines[0]
