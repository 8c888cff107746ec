"""The newer `trace.parquet` layout (Nsight Systems 2024.5 and later: "Text", "Start", "End",
"Range ID", "Parent ID", "Range Stack" as a list of ids, no "TSL:" domain prefix) and the Parquet
write options the reader claims to handle, on real files written by pyarrow.

The process-0 fixture's older-layout table is converted row by row into the newer layout, written
with pyarrow (Snappy, gzip or no compression; dictionary or plain encoding; data pages v1 or v2;
several row groups and small pages), packed into a copy of the archive, and read by the CLI: the
reference figures and every per-module figure must come out as from the original archive."""
from __future__ import annotations

import io
import json
import subprocess
import zipfile

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

TRACE = "nvtx_gpu_proj_trace/trace.parquet"


def newer_layout_table(archive):
    """The archive's trace in the newer layout, as nsys-jax's loader renames it back."""
    with zipfile.ZipFile(archive) as z:
        old = pq.read_table(io.BytesIO(z.read(TRACE))).to_pydict()
    rows = [i for i, rid in enumerate(old["RangeId"]) if rid is not None]
    assert len(rows) == len(old["RangeId"]) - 1  # the older layout's one summary row goes

    def col(name):
        return [old[name][i] for i in rows]

    def stack(s):
        return [int(x) for x in s.split(":")[1:]]

    # XLA's ranges lose their domain ("TSL:"); NCCL's ranges are neither modules nor thunks.
    names = [n.removeprefix("TSL:") for n in col("Name")]
    assert sum(n.startswith("XlaModule:") for n in names) > 300
    start = col("Projected Start")
    return pa.table({
        "Text": pa.array(names, pa.string()),
        "Start": pa.array(start, pa.int64()),
        "End": pa.array([s + d for s, d in zip(start, col("Projected Duration"))], pa.int64()),
        "Children Count": pa.array(col("NumChild"), pa.int64()),
        "Range ID": pa.array([int(x) for x in col("RangeId")], pa.int64()),
        "Parent ID": pa.array([None if x is None else int(x) for x in col("ParentId")], pa.int64()),
        "PID": pa.array(col("PID"), pa.int64()),
        "Range Stack": pa.array([stack(s) for s in col("RangeStack")], pa.list_(pa.int64())),
        "Stack Level": pa.array([int(x) for x in col("Lvl")], pa.int64()),
        "TID": pa.array(col("TID"), pa.int64()),
        "Rank": pa.array(col("Rank"), pa.int64()),
    })


@pytest.fixture(scope="module")
def newer_table(proc0):
    return newer_layout_table(proc0)


def repack(archive, dest_dir, replace):
    """A copy of `archive` (same name, so the same host name) with members swapped for new bytes."""
    dest_dir.mkdir(exist_ok=True)
    dest = dest_dir / archive.name
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(dest, "w") as out:
        for info in src.infolist():
            data = replace.get(info.filename, None)
            out.writestr(info, src.read(info) if data is None else data)
    return dest


def cli_json(jaxprof_bin, command, path, *args):
    out = subprocess.run([str(jaxprof_bin), command, str(path), *args, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    out = json.loads(out)
    out.pop("input", None)  # the archive read: the figures must not depend on its layout
    return out


# (pyarrow write options, the column chunk encodings and codec they must produce)
VARIANTS = {
    "snappy-dictionary-v1": (dict(compression="snappy", use_dictionary=True,
                                  data_page_version="1.0"), "SNAPPY", "RLE_DICTIONARY"),
    "uncompressed-plain-v1": (dict(compression="none", use_dictionary=False,
                                   data_page_version="1.0"), "UNCOMPRESSED", None),
    "gzip-dictionary-v2": (dict(compression="gzip", use_dictionary=True,
                                data_page_version="2.0"), "GZIP", "RLE_DICTIONARY"),
    "snappy-plain-dictionary-format-1": (dict(compression="snappy", use_dictionary=True,
                                              version="1.0"), "SNAPPY", "PLAIN_DICTIONARY"),
    "uncompressed-plain-v2-small-pages": (dict(compression="none", use_dictionary=False,
                                               data_page_version="2.0", data_page_size=4096,
                                               row_group_size=3000), "UNCOMPRESSED", None),
}


def export(jaxprof_bin, path, out):
    subprocess.run([str(jaxprof_bin), "export", str(path), "--perfetto", str(out)], check=True,
                   capture_output=True)
    with open(out) as f:
        return json.load(f)["traceEvents"]


@pytest.fixture(scope="module")
def original(jaxprof_bin, proc0, tmp_path_factory):
    return {
        "ops": cli_json(jaxprof_bin, "ops", proc0, "--group-by", "module"),
        "modules": cli_json(jaxprof_bin, "modules", proc0),
        "trace": export(jaxprof_bin, proc0, tmp_path_factory.mktemp("orig") / "trace.json"),
    }


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_newer_layout_gives_the_same_figures(jaxprof_bin, proc0, newer_table, original, tmp_path,
                                             variant):
    options, codec, dictionary = VARIANTS[variant]
    buf = io.BytesIO()
    pq.write_table(newer_table, buf, **options)
    data = buf.getvalue()
    # The file really is written the way the variant says (else the test proves nothing).
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    chunks = [meta.row_group(g).column(c) for g in range(meta.num_row_groups)
              for c in range(meta.num_columns)]
    assert {c.compression for c in chunks} == {codec}
    encodings = set().union(*(set(c.encodings) for c in chunks))
    if dictionary:
        assert dictionary in encodings
    else:
        assert not encodings & {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
    if "row_group_size" in options:
        assert meta.num_row_groups == -(-newer_table.num_rows // options["row_group_size"])

    path = repack(proc0, tmp_path / variant, {TRACE: data})
    ops = cli_json(jaxprof_bin, "ops", path, "--group-by", "module")
    (dev,) = ops["devices"]
    assert dev["device"] == "/device:GPU:0"
    # Every op event (13827) less the autotuner's and the warm-up runs' (steady-state.md).
    assert dev["events"] + dev["set_apart"] == 13827
    step = next(g for g in dev["groups"] if g.get("program_id") == 40)
    assert step["name"] == "pjit__wrapped_step_fn"
    assert step["count"] == 4 * 2610  # five runs, the first a warm-up
    assert ops == original["ops"]
    assert cli_json(jaxprof_bin, "modules", path) == original["modules"]

    # Every exported event (modules, ops, categories) at the same time, with the same args.
    trace = export(jaxprof_bin, path, tmp_path / "trace.json")
    assert trace == original["trace"]
    # Module executions are named with their program id (export.md).
    steps = [e["dur"] for e in trace if e.get("name") == "pjit__wrapped_step_fn(40)"]
    assert steps == [147966.759, 143040.768, 127312.430, 127464.524, 126859.056]


PUSHPOP_CSV = "report_nvtx_pushpop_trace.csv.xz"
PUSHPOP_PARQUET = "report_nvtx_pushpop_trace.parquet"


def pushpop_table(archive, newer_names):
    """The host push/pop CSV as a Parquet table: with the CSV's column names, or with the newer
    names ("Start", "End", "Text") and without the "TSL:" domain on range names."""
    import csv
    import lzma
    with zipfile.ZipFile(archive) as z:
        rows = list(csv.DictReader(io.StringIO(lzma.decompress(z.read(PUSHPOP_CSV)).decode())))
    assert len(rows) > 10000

    def ints(key):
        return pa.array([int(r[key]) if r[key] != "" else None for r in rows], pa.int64())

    names = [r["Name"] for r in rows]
    if newer_names:
        names = [n.removeprefix("TSL:") for n in names]
    cols = {
        ("Start" if newer_names else "Start (ns)"): ints("Start (ns)"),
        ("End" if newer_names else "End (ns)"): ints("End (ns)"),
        ("Text" if newer_names else "Name"): pa.array(names, pa.string()),
        "PID": ints("PID"),
        "TID": ints("TID"),
        "RangeId": ints("RangeId"),
        "ParentId": ints("ParentId"),
    }
    return pa.table(cols)


@pytest.mark.parametrize("newer_names", [False, True], ids=["csv-names", "newer-names"])
def test_pushpop_parquet_gives_the_same_compile_figures(jaxprof_bin, proc0, tmp_path, newer_names):
    buf = io.BytesIO()
    pq.write_table(pushpop_table(proc0, newer_names), buf)
    dest_dir = tmp_path / "pushpop"
    dest_dir.mkdir()
    dest = dest_dir / proc0.name
    with zipfile.ZipFile(proc0) as src, zipfile.ZipFile(dest, "w") as out:
        for info in src.infolist():
            if info.filename != PUSHPOP_CSV:
                out.writestr(info, src.read(info))
        out.writestr(PUSHPOP_PARQUET, buf.getvalue())
    got = cli_json(jaxprof_bin, "compile", dest)
    assert got["compiles"] == 17
    assert got["wall_ns"] == 69388404880
    assert got == cli_json(jaxprof_bin, "compile", proc0)
