"""Broken nsys-jax archives, made from the process-0 fixture: every one gives exit code 2 and one
line naming the archive, the member at fault (`archive.zip!member`) and the problem; a missing
optional member is a warning, not an error."""
from __future__ import annotations

import io
import lzma
import subprocess
import zipfile

import pytest

TRACE = "nvtx_gpu_proj_trace/trace.parquet"
THREADS = "thread-metadata.parquet"
PUSHPOP = "report_nvtx_pushpop_trace.csv.xz"
STEP_DUMP = "dump/module_0040.pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations.hlo.pb.xz"


def repack(archive, dest, replace=None, drop=()):
    replace = replace or {}
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(dest, "w") as out:
        for info in src.infolist():
            if info.filename in drop:
                continue
            data = replace.get(info.filename)
            out.writestr(info, src.read(info) if data is None else data)
    return dest


def member(archive, name):
    with zipfile.ZipFile(archive) as z:
        return z.read(name)


def run(jaxprof_bin, path):
    return subprocess.run([str(jaxprof_bin), "summary", str(path)], capture_output=True,
                          text=True, timeout=60)


def expect_error(jaxprof_bin, path, where, *words):
    r = run(jaxprof_bin, path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"jaxprof: {path}{where}: "), lines[0]
    for w in words:
        assert w in lines[0], lines[0]
    assert r.stdout == ""


def test_truncated_archive(jaxprof_bin, proc0, tmp_path):
    data = proc0.read_bytes()
    for n in (len(data) // 2, len(data) - 10):
        path = tmp_path / f"cut{n}.zip"
        path.write_bytes(data[:n])
        expect_error(jaxprof_bin, path, "", "truncated")


def test_archive_with_a_hole(jaxprof_bin, proc0, tmp_path):
    """The central directory is intact but a member's bytes are zeroed: its CRC fails."""
    data = bytearray(proc0.read_bytes())
    with zipfile.ZipFile(proc0) as z:
        info = z.getinfo(TRACE)
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 1000
    data[at:at + 64] = bytes(64)
    path = tmp_path / "hole.zip"
    path.write_bytes(bytes(data))
    expect_error(jaxprof_bin, path, f"!{TRACE}", "CRC mismatch")


def test_corrupt_parquet_pages(jaxprof_bin, proc0, tmp_path):
    bad = bytearray(member(proc0, TRACE))
    bad[1000:1100] = bytes(100)  # inside the first column's Snappy page
    path = repack(proc0, tmp_path / "pages.zip", {TRACE: bytes(bad)})
    expect_error(jaxprof_bin, path, f"!{TRACE}", "corrupt")


def test_truncated_parquet(jaxprof_bin, proc0, tmp_path):
    trace = member(proc0, TRACE)
    path = repack(proc0, tmp_path / "short.zip", {TRACE: trace[:len(trace) // 2]})
    expect_error(jaxprof_bin, path, f"!{TRACE}", "Parquet", "truncated")


def test_parquet_without_a_needed_column(jaxprof_bin, proc0, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(io.BytesIO(member(proc0, TRACE))).drop(["Projected Start"])
    buf = io.BytesIO()
    pq.write_table(table, buf)
    path = repack(proc0, tmp_path / "column.zip", {TRACE: buf.getvalue()})
    expect_error(jaxprof_bin, path, f"!{TRACE}", "missing column 'Projected Start'")


def test_missing_trace_member(jaxprof_bin, proc0, tmp_path):
    path = repack(proc0, tmp_path / "notrace.zip", drop=(TRACE,))
    expect_error(jaxprof_bin, path, "", "not an nsys-jax archive", TRACE)


def test_truncated_host_ranges(jaxprof_bin, proc0, tmp_path):
    csv = member(proc0, PUSHPOP)
    path = repack(proc0, tmp_path / "csv.zip", {PUSHPOP: csv[:len(csv) // 2]})
    expect_error(jaxprof_bin, path, f"!{PUSHPOP}", "xz", "truncated")


def test_corrupt_hlo_dump(jaxprof_bin, proc0, tmp_path):
    # Valid xz around bytes that are no HloProto.
    path = repack(proc0, tmp_path / "dump.zip", {STEP_DUMP: lzma.compress(b"\xff" * 4096)})
    expect_error(jaxprof_bin, path, f"!{STEP_DUMP}", "HloProto")
    raw = member(proc0, STEP_DUMP)
    path = repack(proc0, tmp_path / "dumpxz.zip", {STEP_DUMP: raw[:len(raw) // 3]})
    expect_error(jaxprof_bin, path, f"!{STEP_DUMP}", "xz")


def test_missing_thread_metadata_is_a_warning(jaxprof_bin, proc0, tmp_path):
    """Without thread names (nor the device table) the device cannot be known: a warning."""
    path = repack(proc0, tmp_path / "nothreads.zip", drop=(THREADS, "device-metadata.parquet"))
    r = run(jaxprof_bin, path)
    assert r.returncode == 0, r.stderr
    assert f"no member {THREADS}" in r.stderr
    assert "Devices: 1 on 1 host" in r.stdout
