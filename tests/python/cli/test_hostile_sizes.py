"""Files that declare hostile sizes are refused by the release command line within seconds and in
bounded memory: a 10 GB string, 2^31 values, a zip member claiming a 10,000x ratio, JSON nested
100,000 deep, a Parquet page claiming gigabytes. Each run is measured with /usr/bin/time (peak
resident memory) and must exit 2 with one line naming the file (JSON nested deep inside an event's
arguments is valid and is read)."""
from __future__ import annotations

import shutil
import struct
import subprocess
import zipfile

import pytest
from protowire import len_field, varint, zigzag

TRACE = "nvtx_gpu_proj_trace/trace.parquet"
MAX_SECONDS = 10
MAX_RSS_MB = 256








class Thrift:
    """Just enough of the Thrift compact protocol to write a Parquet footer by hand."""

    def __init__(self):
        self.out = bytearray()
        self.last = [0]

    def field(self, fid: int, ftype: int):
        delta = fid - self.last[-1]
        if 0 < delta <= 15:
            self.out.append(delta << 4 | ftype)
        else:
            self.out.append(ftype)
            self.out += zigzag(fid)
        self.last[-1] = fid

    def i32(self, fid, v):
        self.field(fid, 5)
        self.out += zigzag(v)

    def i64(self, fid, v):
        self.field(fid, 6)
        self.out += zigzag(v)

    def binary(self, fid, s: bytes):
        self.field(fid, 8)
        self.out += varint(len(s)) + s

    def list(self, fid, etype, n):
        self.field(fid, 9)
        self.out.append(n << 4 | etype)

    def begin(self, fid=None):
        if fid is not None:
            self.field(fid, 12)
        self.last.append(0)

    def end(self):
        self.out.append(0)
        self.last.pop()


def parquet(num_values: int, page: bytes, codec: int = 0) -> bytes:
    """One INT64 column "x" whose chunk declares `num_values` and holds `page`."""
    w = Thrift()
    w.i32(1, 1)
    w.list(2, 12, 2)
    w.begin(), w.binary(4, b"schema"), w.i32(5, 1), w.end()
    w.begin(), w.i32(1, 2), w.i32(3, 0), w.binary(4, b"x"), w.end()
    w.i64(3, num_values)
    w.list(4, 12, 1)
    w.begin()
    w.list(1, 12, 1)
    w.begin(), w.i64(2, 4), w.begin(3), w.i32(1, 2), w.i32(4, codec), w.i64(5, num_values)
    w.i64(7, len(page)), w.i64(9, 4), w.end(), w.end()
    w.i64(2, 0), w.i64(3, num_values)
    w.end()
    w.out.append(0)
    footer = bytes(w.out)
    return b"PAR1" + page + footer + struct.pack("<I", len(footer)) + b"PAR1"


def page_header(uncompressed: int, compressed: int, num_values: int) -> bytes:
    w = Thrift()
    w.i32(1, 0), w.i32(2, uncompressed), w.i32(3, compressed)
    w.begin(5), w.i32(1, num_values), w.i32(2, 0), w.i32(3, 3), w.i32(4, 3), w.end()
    w.out.append(0)
    return bytes(w.out)


def stored_zip(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def hostile_files(tmp):
    """(name, path) of each hostile file."""
    # XSpace: a plane whose name declares 10 GB.
    plane = varint(2 << 3 | 2) + varint(10 << 30) + b"xx"
    (tmp / "string10g.xplane.pb").write_bytes(len_field(1, plane))
    yield "xspace-10GB-string", tmp / "string10g.xplane.pb"
    # Chrome trace: an event whose name is a string that never ends (10 MB of it, no quote).
    (tmp / "open_string.trace.json").write_bytes(b'{"traceEvents":[{"ph":"X","name":"' +
                                                 b"a" * (10 << 20))
    yield "json-unclosed-string", tmp / "open_string.trace.json"
    # Parquet: a column chunk of 2^31 values; a page of 2^31 - 1 nulls in one RLE run.
    levels = varint((2**31 - 1) << 1) + b"\x00"
    body = struct.pack("<I", len(levels)) + levels
    yield "parquet-2^31-values", stored_zip(tmp / "values.zip", {
        TRACE: parquet(2**31, page_header(len(body), len(body), 2**31 - 1) + body)})
    # Parquet: a Snappy page claiming 2^31 - 1 bytes (what a 32-bit size holds of "4 GB").
    snappy = varint(2**31 - 1) + b"\x00\x00"
    yield "parquet-page-2GB", stored_zip(tmp / "page.zip", {
        TRACE: parquet(1, page_header(2**31 - 1, len(snappy), 1) + snappy, codec=1)})
    # zip: 10 KB declaring 100 MB (10,000x; deflate cannot exceed ~1,032x).
    path = stored_zip(tmp / "ratio.zip", {TRACE: b"x" * 10240})
    data = bytearray(path.read_bytes())
    cd = data.find(b"PK\x01\x02")
    data[cd + 10:cd + 12] = struct.pack("<H", 8)
    data[cd + 24:cd + 28] = struct.pack("<I", 10240 * 10000)
    path.write_bytes(bytes(data))
    yield "zip-10000x-ratio", path
    # JSON nested 100,000 deep as the events (no event at all), and inside an event's args (valid:
    # read, the nesting skipped without recursion).
    nested = b"[" * 100000 + b"]" * 100000
    (tmp / "deep.trace.json").write_bytes(b'{"traceEvents":' + nested + b"}")
    yield "json-100000-deep", tmp / "deep.trace.json"
    (tmp / "deep_args.trace.json").write_bytes(
        b'{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"a","args":{"x":' + nested + b"}}]}")
    yield "json-100000-deep-args", tmp / "deep_args.trace.json"


@pytest.fixture(scope="module")
def gnu_time():
    path = shutil.which("time") or "/usr/bin/time"
    if not shutil.os.access(path, shutil.os.X_OK):
        pytest.skip("GNU time is not installed (scripts/setup.sh installs it)")
    return path


def test_hostile_sizes_are_refused_quickly_in_bounded_memory(jaxprof_bin, tmp_path, gnu_time):
    for name, path in hostile_files(tmp_path):
        for command in ("info", "summary"):
            measured = tmp_path / "time.txt"
            r = subprocess.run([gnu_time, "-o", str(measured), "-f", "%M %e", str(jaxprof_bin),
                                command, str(path)], capture_output=True, text=True, timeout=60)
            rss_kb, seconds = measured.read_text().split()[-2:]
            message = r.stderr.strip().splitlines()
            if name.endswith("-args"):
                assert r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr}"
            else:
                assert r.returncode == 2, f"{name}: exit {r.returncode}: {r.stderr}"
                assert len(message) == 1 and message[0].startswith(f"jaxprof: {path}"), message
            assert int(rss_kb) < MAX_RSS_MB * 1024, f"{name}: {int(rss_kb) // 1024} MB: {message}"
            assert float(seconds) < MAX_SECONDS, f"{name}: {seconds} s: {message}"
