#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into OUT/<target>/.

Seeds come from three places: the project's own captures (tests/data), small inputs written here
for the shapes those lack, and cut-down copies of the shared real profiles (../shared/fixtures),
made afresh at every run so that no copy of them lives in the repository. Every seed is kept
small (a few KiB to a few tens of KiB): the fuzzer mutates one input thousands of times a second.

usage: make_seeds.py OUT [--shared DIR]

Needs pyarrow for the Parquet seeds (scripts/setup.sh installs it); without it those are skipped.
"""
import argparse
import gzip
import io
import json
import lzma
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from protowire import fields, int_field, len_field, read_varint, varint  # noqa: E402


# ---- protobuf wire format -------------------------------------------------------------------











def map_key(entry):
    for number, wire_type, value, _ in fields(entry):
        if number == 1 and wire_type == 0:
            return value
    return 0


def note_stats(message, stats_field, stat_ids):
    """The stat metadata ids that the XStats in `message` (its field `stats_field`) name."""
    for number, wire_type, value, _ in fields(message):
        if number == stats_field and wire_type == 2:
            for n2, w2, v2, _ in fields(value):
                if n2 in (1, 7) and w2 == 0:
                    stat_ids.add(v2)


def trim_line(line, max_events, used, stat_ids):
    out, kept = bytearray(), 0
    for number, wire_type, value, raw in fields(line):
        if number == 4 and wire_type == 2:
            if kept == max_events:
                continue
            kept += 1
            for n2, w2, v2, _ in fields(value):
                if n2 == 1 and w2 == 0:
                    used.add(v2)
            note_stats(value, 4, stat_ids)
        out += raw
    return bytes(out)


def trim_plane(plane, max_lines, max_events, max_metadata_bytes):
    """The plane with its first lines and their first events, and the metadata those name."""
    used, stat_ids, lines, other = set(), set(), [], bytearray()
    event_metadata, stat_metadata = [], []
    note_stats(plane, 6, stat_ids)
    for number, wire_type, value, raw in fields(plane):
        if number == 3 and wire_type == 2:
            if len(lines) < max_lines:
                lines.append(len_field(3, trim_line(value, max_events, used, stat_ids)))
        elif number == 4 and wire_type == 2:
            event_metadata.append((value, raw))
        elif number == 5 and wire_type == 2:
            stat_metadata.append((value, raw))
        else:
            other += raw
    out = bytearray(other)
    for line in lines:
        out += line
    kept_unused = 0
    for entry, raw in event_metadata:
        if len(raw) > max_metadata_bytes:
            continue
        if map_key(entry) in used or kept_unused < 2:  # e.g. /host:metadata's modules
            kept_unused += map_key(entry) not in used
            out += raw
            for n2, w2, v2, _ in fields(entry):
                if n2 == 2 and w2 == 2:
                    note_stats(v2, 5, stat_ids)
    for entry, raw in stat_metadata:
        if map_key(entry) in stat_ids:
            out += raw
    return bytes(out)


def trim_xspace(space, max_planes=6, max_lines=4, max_events=10, max_metadata_bytes=6000):
    out, planes = bytearray(), 0
    for number, wire_type, value, raw in fields(space):
        if number == 1 and wire_type == 2:
            if planes == max_planes:
                continue
            planes += 1
            out += len_field(1, trim_plane(value, max_lines, max_events, max_metadata_bytes))
        else:
            out += raw
    return bytes(out)


# ---- writers --------------------------------------------------------------------------------

class Corpus:
    def __init__(self, root):
        self.root = Path(root)
        self.count = {}

    def add(self, target, name, data):
        if isinstance(data, str):
            data = data.encode()
        d = self.root / target
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
        self.count[target] = self.count.get(target, 0) + 1


def zip_bytes(members, method=zipfile.ZIP_STORED, force_zip64=False):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        for name, data in members:
            if name.endswith("/"):
                z.writestr(zipfile.ZipInfo(name), b"")
                continue
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            with z.open(info, "w", force_zip64=force_zip64) as f:
                f.write(data)
    return buf.getvalue()


def chrome_traces():
    """Small traces in the shapes the importer reads."""
    events = [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "Stream #2"}},
        {"ph": "M", "pid": 3, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "X", "pid": 1, "tid": 2, "ts": 10.5, "dur": 3.25, "name": "fusion.1",
         "args": {"hlo_op": "fusion.1", "hlo_module": "jit_f", "program_id": "7"}},
        {"ph": "X", "pid": 1, "tid": 2, "ts": 14, "dur": 1, "name": "all-reduce.2",
         "args": {"hlo_op": "all-reduce.2", "hlo_module": "jit_f", "program_id": 7}},
        {"ph": "B", "pid": 3, "tid": 4, "ts": 1, "name": "PjitFunction(f)"},
        {"ph": "E", "pid": 3, "tid": 4, "ts": 9},
        {"ph": "i", "pid": 3, "tid": 4, "ts": 5, "name": "marker", "s": "t"},
        {"ph": "C", "pid": 3, "ts": 5, "name": "mem", "args": {"bytes": 10}},
        {"ph": "X", "pid": "tpu", "tid": "XLA Ops", "ts": "20", "dur": "2", "name": "fusion",
         "args": {"long_name": "%fusion.3 = f32[8] fusion(x)", "escaped": "a\\\"b\u00e9"}},
        {},
    ]
    yield "object.json", json.dumps({"displayTimeUnit": "ns", "traceEvents": events,
                                     "metadata": {"x": [1, {"y": "}"}]}})
    yield "array.json", json.dumps(events[:8])
    yield "array_open.json", json.dumps(events[:5])[:-1] + ",\n"
    yield "exponents.json", json.dumps({"traceEvents": [
        {"ph": "X", "pid": 0, "tid": 0, "ts": 1.5e3, "dur": 9.9999999999999995e-07, "name": "a"},
        {"ph": "X", "pid": 0, "tid": 0, "ts": -2, "dur": 0, "name": "b"}]})


def hlo_modules(shared):
    for p in sorted((shared / "fixtures/xplane").glob("*.hlo_proto.pb")):
        data = p.read_bytes()
        if len(data) <= 24000:
            yield p.name, data


def bare_module(hlo_proto):
    """The HloModuleProto inside an HloProto (its field 1)."""
    for number, wire_type, value, _ in fields(hlo_proto):
        if number == 1 and wire_type == 2:
            return bytes(value)
    return b""


def add_parquet_seeds(corpus, shared):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        print("make_seeds: no pyarrow, skipping Parquet and nsys-jax seeds", file=sys.stderr)
        return
    archive = shared / "fixtures/nsys-jax/pax_fsdp4_4proc_proc0.zip"
    if not archive.exists():
        return
    z = zipfile.ZipFile(archive)
    trace = pq.read_table(io.BytesIO(z.read("nvtx_gpu_proj_trace/trace.parquet")))
    # The first module execution with its thunks, and the rows before it (compile ranges).
    names = trace.column("Name").to_pylist()
    first = next(i for i, n in enumerate(names) if n and n.startswith("TSL:XlaModule:"))
    trace = trace.slice(0, first + 24)
    threads = pq.read_table(io.BytesIO(z.read("thread-metadata.parquet")))
    pids = set(trace.column("PID").to_pylist())
    keep = [i for i, p in enumerate(threads.column("PID").to_pylist()) if p in pids][:12]
    threads = threads.take(keep)
    devices = pq.read_table(io.BytesIO(z.read("device-metadata.parquet")))
    pushpop = lzma.decompress(z.read("report_nvtx_pushpop_trace.csv.xz")).decode()
    pushpop = "\n".join(pushpop.splitlines()[:30]) + "\n"
    dumps = [(i.filename, z.read(i.filename)) for i in z.infolist()
             if i.filename.startswith("dump/module_0003.") and i.filename.endswith(".hlo.pb.xz")]

    def parquet(table, **options):
        buf = io.BytesIO()
        # Without pandas' schema note, which is most of a small file's bytes.
        pq.write_table(table.replace_schema_metadata(None), buf, **options)
        return buf.getvalue()

    variants = {
        "snappy_dict": dict(compression="snappy"),
        "plain_v2": dict(compression="none", use_dictionary=False, data_page_version="2.0"),
        "gzip_small_pages": dict(compression="gzip", data_page_size=512),
        "none_dict_v1": dict(compression="none", data_page_version="1.0"),
    }
    for name, options in variants.items():
        corpus.add("parquet", f"trace_{name}.parquet", parquet(trace, **options))
    corpus.add("parquet", "threads.parquet", parquet(threads, compression="none"))
    corpus.add("parquet", "devices.parquet", parquet(devices, compression="snappy"))
    newer = pa.table({
        "Text": pa.array(["XlaModule:#hlo_module=jit_f,program_id=3#", "Thunk:#hlo_op=fusion.1#",
                          None]),
        "Start": pa.array([100, 110, 120], pa.int64()),
        "End": pa.array([200, 150, 130], pa.int64()),
        "Range ID": pa.array([1, 2, 3], pa.int64()),
        "Parent ID": pa.array([None, 1, 1], pa.int64()),
        "PID": pa.array([5, 5, 5], pa.int64()),
        "TID": pa.array([5, 5, 6], pa.int64()),
        "tags": pa.array([["a"], [], None], pa.list_(pa.string())),
    })
    corpus.add("parquet", "newer_layout.parquet", parquet(newer, compression="none"))
    corpus.add("csv", "pushpop.csv", pushpop)

    small_trace = parquet(trace, compression="none", use_dictionary=False)
    members = [
        ("nvtx_gpu_proj_trace/trace.parquet", small_trace),
        ("thread-metadata.parquet", parquet(threads, compression="none", use_dictionary=False)),
        ("device-metadata.parquet", parquet(devices, compression="none", use_dictionary=False)),
        ("report_nvtx_pushpop_trace.csv.xz", lzma.compress(pushpop.encode())),
    ] + dumps
    corpus.add("nsys_jax", "process.zip", zip_bytes(members))
    corpus.add("nsys_jax", "trace_only.zip", zip_bytes(members[:1]))
    corpus.add("nsys_jax", "deflated.zip", zip_bytes(members[:3], zipfile.ZIP_DEFLATED))
    combined = [("nvtx_gpu_proj_trace/trace.parquet/", b"")]
    combined += [(f"nvtx_gpu_proj_trace/trace.parquet/proc{k}", small_trace) for k in range(2)]
    combined += [(f"report_nvtx_pushpop_trace.csv.xz/proc{k}", members[3][1]) for k in range(2)]
    corpus.add("nsys_jax", "combined.zip", zip_bytes(combined))
    corpus.add("nsys_jax", "newer.zip", zip_bytes(
        [("nvtx_gpu_proj_trace/trace.parquet", parquet(newer.drop(["tags"]), compression="none")),
         ("report_nvtx_pushpop_trace.parquet", parquet(pa.table({
             "Start (ns)": pa.array([1, 2], pa.int64()), "End (ns)": pa.array([5, 3], pa.int64()),
             "Text": ["TSL:XlaCompile:#module=jit_f,program_id=3#", "TSL:XlaPass:#name=dce#"],
             "PID": pa.array([5, 5], pa.int64()), "TID": pa.array([5, 6], pa.int64())}),
             compression="none"))]))
    corpus.add("analyses", "nsys_process.zip", zip_bytes(members))
    for name, data in dumps:
        corpus.add("xz", Path(name).name, data)


def add_partial_seeds(corpus, jaxprof, spaces):
    """Partial files the CLI writes from the cut-down profiles: one host each, and two together."""
    if not jaxprof or not Path(jaxprof).exists():
        print("make_seeds: no jaxprof binary, no partial seeds", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        written = []
        for name, space in spaces:
            profile = Path(tmp) / (name + ".xplane.pb")
            profile.write_bytes(space)
            out = Path(tmp) / (name + ".partial")
            r = subprocess.run([jaxprof, "partial", str(profile), "-o", str(out)],
                               capture_output=True, timeout=120)
            if r.returncode == 0 and out.stat().st_size <= 65536:
                corpus.add("partial", out.name, out.read_bytes())
                written.append(out)
        if len(written) >= 2:
            both = Path(tmp) / "two_hosts.partial"
            r = subprocess.run([jaxprof, "partial", str(written[0]), str(written[1]), "-o",
                                str(both)], capture_output=True, timeout=120)
            if r.returncode == 0:
                corpus.add("partial", both.name, both.read_bytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--jaxprof", help="the CLI, to write partial files (no partial seeds without)")
    args = ap.parse_args()
    corpus = Corpus(args.out)
    shared = Path(args.shared)

    # XSpace: the project's small captures and the shared profiles, cut down.
    spaces = []
    data = ROOT / "tests/data"
    matmul = data / "jax_cpu_matmul/plugins/profile/session/vm.xplane.pb"
    eight = data / "jax_cpu_8dev/plugins/profile/session/vm.xplane.pb"
    if matmul.exists():
        spaces.append(("jax_cpu_matmul", matmul.read_bytes()))
        spaces.append(("jax_cpu_matmul_trimmed", trim_xspace(matmul.read_bytes())))
    if eight.exists():
        spaces.append(("jax_cpu_8dev_trimmed", trim_xspace(eight.read_bytes(), max_planes=12)))
    for p in sorted((shared / "fixtures/xplane").glob("*.xplane.pb")):
        spaces.append((p.stem.replace(".xplane", ""), trim_xspace(p.read_bytes())))
    for name, space in spaces:
        corpus.add("xspace", name + ".xplane.pb", space)
        if len(space) < 40000:
            corpus.add("analyses", name + ".xplane.pb", space)
    # gzip: whole files, concatenated members and a zlib stream.
    for name, space in spaces[:4]:
        corpus.add("gzip", name + ".gz", gzip.compress(space, mtime=0))
    corpus.add("gzip", "two_members.gz", gzip.compress(b"a" * 100, mtime=0) +
               gzip.compress(b"b" * 100, mtime=0))
    corpus.add("gzip", "zlib.z", zlib.compress(b"\x0a\x02\x12\x00" * 50))
    corpus.add("gzip", "empty.gz", gzip.compress(b"", mtime=0))

    # Chrome traces: the project's own (cut to their first events) and small written ones.
    for trace in sorted(data.glob("*/plugins/profile/session/*.trace.json.gz")):
        doc = json.loads(gzip.decompress(trace.read_bytes()))
        doc["traceEvents"] = doc["traceEvents"][:60]
        name = trace.parts[-5] + ".trace.json"
        corpus.add("chrome_trace", name, json.dumps(doc))
        corpus.add("analyses", name, json.dumps(doc))
    for name, text in chrome_traces():
        corpus.add("chrome_trace", name, text)
        corpus.add("analyses", "written_" + name, text)

    # HloProto: the shared module dumps, wrapped and bare.
    for name, proto in hlo_modules(shared):
        corpus.add("hlo", name, proto)
        corpus.add("hlo", "bare_" + name, bare_module(proto))

    # zip: stored, deflated, zip64, directories, nsys-jax member names.
    sample = [("nvtx_gpu_proj_trace/trace.parquet", b"PAR1" + b"\0" * 40 + b"PAR1"),
              ("dump/", b""), ("dump/module_0001.jit_f.after_optimizations.hlo.pb.xz", b"x" * 300),
              ("report_nvtx_pushpop_trace.csv.xz", b"Start,End\n1,2\n")]
    corpus.add("zip", "stored.zip", zip_bytes(sample))
    corpus.add("zip", "deflated.zip", zip_bytes(sample, zipfile.ZIP_DEFLATED))
    corpus.add("zip", "zip64.zip", zip_bytes(sample[:2], zipfile.ZIP_DEFLATED, force_zip64=True))

    # xz: checks of every kind, two streams, an empty stream.
    text = b"Start (ns),End (ns),Text,PID,TID\n1,5,\"TSL:XlaPass:#name=a,b#\",3,3\n" * 20
    # Small dictionaries: the decoder allocates what the header declares (8 MiB by default), which
    # would cost each run more than the decoding.
    small = [{"id": lzma.FILTER_LZMA2, "dict_size": 4096}]
    for check, name in ((lzma.CHECK_CRC32, "crc32"), (lzma.CHECK_CRC64, "crc64"),
                        (lzma.CHECK_SHA256, "sha256"), (lzma.CHECK_NONE, "none")):
        corpus.add("xz", name + ".xz", lzma.compress(text, check=check, filters=small))
    corpus.add("xz", "delta_x86.xz", lzma.compress(text, filters=[
        {"id": lzma.FILTER_DELTA, "dist": 4}, {"id": lzma.FILTER_X86}, *small]))
    corpus.add("xz", "two_streams.xz", lzma.compress(b"a" * 10, filters=small) +
               lzma.compress(b"b" * 10, filters=small))
    corpus.add("xz", "empty.xz", lzma.compress(b"", filters=small))

    corpus.add("csv", "quoted.csv",
               'Start (ns),End (ns),Text,PID,TID\n1,5,"a ""quoted"", name",3,3\n'
               '2,4,"multi\nline",3,4\n')
    add_parquet_seeds(corpus, shared)
    add_partial_seeds(corpus, args.jaxprof, spaces)
    for target, n in sorted(corpus.count.items()):
        print(f"make_seeds: {n:3d} seeds for {target}")


if __name__ == "__main__":
    main()
