"""`jaxprof ops` against the reference implementation in xplane_oracle.py, on
every real profile (shared fixtures and the project's own CPU captures), for
every grouping and a set of filters; plus CSV sanity and error handling."""
from __future__ import annotations

import csv
import gzip
import io
import random
import re
import shutil
import time
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

import ops_check as oc
import xplane_oracle as xo

CASES = oc.profile_cases()
CASE_IDS = [c[0] for c in CASES]
CASE_PATHS = [c[1] for c in CASES]


def _profile(path: Path) -> Path:
    return oc.require_profile(path)


def _ps_to_ns_text(ps: int) -> str:
    return f"{ps // 1000}.{ps % 1000:03d}"


# ---------------------------------------------------------------------------
# Every grouping, no filters
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("group_by", xo.GROUP_BYS)
@pytest.mark.parametrize("path", CASE_PATHS, ids=CASE_IDS)
def test_ops_group_by(jaxprof_bin, path, group_by):
    path = _profile(path)
    got = oc.run_ops_json(jaxprof_bin, path, ["--group-by", group_by])
    want = xo.ops(oc.oracle_devices(str(path)), group_by)
    assert want, f"oracle found no devices in {path}"
    oc.compare_ops(got, want, group_by, label=f"{path.name} --group-by {group_by}")


@pytest.mark.parametrize("path", CASE_PATHS, ids=CASE_IDS)
def test_ops_default_group_by_is_hlo_op(jaxprof_bin, path):
    path = _profile(path)
    got = oc.run_ops_json(jaxprof_bin, path)
    want = xo.ops(oc.oracle_devices(str(path)), "hlo-op")
    oc.compare_ops(got, want, "hlo-op", label=f"{path.name} (default grouping)")


# ---------------------------------------------------------------------------
# Filters. Their values come from the profile itself so that each one selects
# a real, non-trivial subset.
# ---------------------------------------------------------------------------

def _most_common_display(dev: xo.DeviceResult) -> str:
    c = Counter(e.display for e in dev.events)
    best = max(c.values())
    return min(n for n, k in c.items() if k == best)


def _literal_token(dev: xo.DeviceResult) -> str:
    names = sorted({e.display for e in dev.events})
    name = names[len(names) // 2]
    tokens = re.findall(r"[A-Za-z0-9_]{3,}", name) or [name]
    tok = tokens[len(tokens) // 2]
    return tok[1:7] if len(tok) > 4 else tok


def _filter_setup(kind: str, devices):
    """(CLI args, oracle kwargs, group_by, top) for one filter kind."""
    d0 = devices[0]
    gb = "hlo-op"
    if kind == "prefix":
        name = _most_common_display(d0)
        p = name[:max(1, len(name) // 2)]
        return ["--prefix", p], {"prefix": p}, gb, None
    if kind == "prefix-none":
        p = "no-such-op-prefix:"
        return ["--prefix", p], {"prefix": p}, gb, None
    if kind == "match-literal":
        tok = _literal_token(d0)
        return ["--match", tok, "--group-by", "name"], {"match": tok}, "name", None
    if kind == "match-regex":
        rx = r"\.[0-9]+$|^[a-cA-C_]"
        return ["--match", rx, "--group-by", "kernel"], {"match": rx}, "kernel", None
    if kind == "min-duration-median":
        durs = sorted(e.dur_ps for e in d0.events)
        ns = _ps_to_ns_text(durs[len(durs) // 2])  # exact: an event sits on the boundary
        return ["--min-duration", ns], {"min_duration_ns": ns}, gb, None
    if kind == "min-duration-sub-ns":
        return ["--min-duration", "0.5"], {"min_duration_ns": "0.5"}, gb, None
    if kind == "device-substr":
        sub = devices[-1].device[-5:]
        return ["--device", sub], {"device": sub}, gb, None
    if kind == "device-re":
        spec = "re:(GPU|TPU):[13]$|CPU$"
        return ["--device", spec], {"device": spec}, "module", None
    if kind == "device-none":
        return ["--device", "no-such-device"], {"device": "no-such-device"}, gb, None
    if kind == "top3":
        return ["--top", "3"], {}, gb, 3
    if kind == "top1-kernel":
        return ["--top", "1", "--group-by", "kernel"], {}, "kernel", 1
    if kind == "combined":
        p = _most_common_display(d0)[:1]
        dev = d0.device
        args = ["--group-by", "name", "--prefix", p, "--min-duration", "0.001",
                "--device", dev, "--top", "2"]
        return args, {"prefix": p, "min_duration_ns": "0.001", "device": dev}, "name", 2
    raise ValueError(kind)


FILTER_KINDS = ["prefix", "prefix-none", "match-literal", "match-regex", "min-duration-median",
                "min-duration-sub-ns", "device-substr", "device-re", "device-none", "top3",
                "top1-kernel", "combined"]


@pytest.mark.parametrize("kind", FILTER_KINDS)
@pytest.mark.parametrize("path", CASE_PATHS, ids=CASE_IDS)
def test_ops_filters(jaxprof_bin, path, kind):
    path = _profile(path)
    devices = oc.oracle_devices(str(path))
    args, kwargs, group_by, top = _filter_setup(kind, devices)
    if "--group-by" not in args:
        args = [*args, "--group-by", group_by]
    got = oc.run_ops_json(jaxprof_bin, path, args)
    want = xo.ops(devices, group_by, **kwargs)
    oc.compare_ops(got, want, group_by, top=top, label=f"{path.name} {' '.join(args)}")


# ---------------------------------------------------------------------------
# Other ways to hand over the same profile
# ---------------------------------------------------------------------------

def _small_fixture() -> Path:
    p = oc.XPLANE_FIXTURES / "mi300x_jax_conv.xplane.pb"
    if not p.is_file():
        pytest.skip(f"{p} not available")
    return p


def test_ops_gzip_copy(jaxprof_bin, tmp_path):
    src = _small_fixture()
    gz = tmp_path / "mi300x_jax_conv.xplane.pb.gz"
    gz.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
    got = oc.run_ops_json(jaxprof_bin, gz, ["--group-by", "hlo-op"])
    want = xo.ops(xo.analyze_path(str(gz)), "hlo-op")
    assert want[0]["host"] == "mi300x_jax_conv"
    oc.compare_ops(got, want, "hlo-op", label=str(gz.name))


def test_ops_log_dir(jaxprof_bin, tmp_path):
    src = _small_fixture()
    run = tmp_path / "logs" / "plugins" / "profile" / "2025_01_01_00_00_00"
    run.mkdir(parents=True)
    shutil.copyfile(src, run / "worker7.xplane.pb")
    got = oc.run_ops_json(jaxprof_bin, tmp_path / "logs", ["--group-by", "module"])
    want = xo.ops(xo.analyze_path(str(tmp_path / "logs")), "module")
    assert {d["host"] for d in want} == {"worker7"}
    oc.compare_ops(got, want, "module", label="log dir")


# ---------------------------------------------------------------------------
# CSV against JSON
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", CASE_PATHS, ids=CASE_IDS)
def test_ops_csv_matches_json(jaxprof_bin, path):
    path = _profile(path)
    js = oc.run_ops_json(jaxprof_bin, path, ["--group-by", "hlo-op"])
    proc = oc.run_cli(jaxprof_bin, ["ops", path, "--format", "csv", "--group-by", "hlo-op",
                                         *oc.EVERYTHING])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    rows = list(csv.reader(io.StringIO(proc.stdout.decode("utf-8"))))
    assert rows, "empty CSV output"
    header, data = rows[0], rows[1:]
    for col in ("name", "count", "total_ns"):
        assert col in header, f"CSV header {header} lacks {col!r}"
    assert all(len(r) == len(header) for r in data), "ragged CSV rows"
    jgroups = [(d, g) for d in js["devices"] for g in d["groups"]]
    assert len(data) == len(jgroups), f"{len(data)} CSV rows, {len(jgroups)} JSON groups"
    col = {c: i for i, c in enumerate(header)}
    for r, (d, g) in zip(data, jgroups):
        assert r[col["name"]] == g["name"]
        assert int(r[col["count"]]) == g["count"]
        if "device" in col:
            assert r[col["device"]] == d["device"]
        for key in ("total_ns", "self_ns", "min_ns", "max_ns", "mean_ns", "std_ns", "share"):
            if key in col:
                a, b = Fraction(Decimal(r[col[key]])), Fraction(g[key])
                assert abs(a - b) <= max(Fraction(1, 10**6), abs(b) / 10**9), \
                    f"CSV {key} {r[col[key]]} != JSON {g[key]} for {g['name']}"


# ---------------------------------------------------------------------------
# Errors: exit 2, one line on stderr naming the file, quickly
# ---------------------------------------------------------------------------

ERROR_TIMEOUT_S = 10


def _assert_refused(binary, path: Path, max_s: float = 5.0):
    t0 = time.monotonic()
    proc = oc.run_cli(binary, ["ops", path, "--format", "json"], timeout=ERROR_TIMEOUT_S)
    elapsed = time.monotonic() - t0
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 2, f"exit {proc.returncode} for {path}; stderr: {err[-500:]}"
    assert str(path) in err or path.name in err, f"stderr does not name {path}: {err!r}"
    assert len(err.strip().splitlines()) == 1, f"stderr is not one line: {err!r}"
    assert elapsed < max_s, f"took {elapsed:.1f}s to refuse {path}"
    return err


def _oracle_refuses(path: Path) -> bool:
    try:
        xo.analyze_path(str(path))
    except xo.OracleError:
        return True
    return False


def test_missing_file(jaxprof_bin, tmp_path):
    missing = tmp_path / "no_such_profile.xplane.pb"
    proc = oc.run_cli(jaxprof_bin, ["ops", missing, "--format", "json"], timeout=ERROR_TIMEOUT_S)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 2, f"exit {proc.returncode}; stderr: {err!r}"
    assert str(missing) in err, f"stderr does not name {missing}: {err!r}"


def test_mangled_fixture_refused(jaxprof_bin, shared_fixtures):
    bad = shared_fixtures / "bad" / "tpu_inference_utf8_mangled.xplane.pb"
    if not bad.is_file():
        pytest.skip(f"{bad} not available")
    assert _oracle_refuses(bad)
    _assert_refused(jaxprof_bin, bad)


def test_empty_file_refused(jaxprof_bin, tmp_path):
    p = tmp_path / "empty.xplane.pb"
    p.write_bytes(b"")
    _assert_refused(jaxprof_bin, p)


TRUNCATIONS = [("gemm", "mi300x_jax_gemm", 0.5), ("gemm", "mi300x_jax_gemm", 0.999),
               ("gemm", "mi300x_jax_gemm", -1), ("tpu", "tpu_4chip_inference", 0.37),
               ("tf", "tf_v100_8gpu_training", 0.9)]


@pytest.mark.parametrize("short,name,cut", TRUNCATIONS,
                         ids=[f"{s}-{c}" for s, _, c in TRUNCATIONS])
def test_truncated_copy_refused(jaxprof_bin, xplane_fixtures, tmp_path, short, name, cut):
    src = xplane_fixtures / f"{name}.xplane.pb"
    if not src.is_file():
        pytest.skip(f"{src} not available")
    data = src.read_bytes()
    n = len(data) - 1 if cut == -1 else int(len(data) * cut)
    p = tmp_path / f"{name}_cut{n}.xplane.pb"
    p.write_bytes(data[:n])
    assert _oracle_refuses(p), "this cut happens to be a valid XSpace; pick another"
    _assert_refused(jaxprof_bin, p)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_bytes_refused(jaxprof_bin, tmp_path, seed):
    data = random.Random(seed).randbytes(50_000)
    if data[:2] == b"\x1f\x8b":
        data = b"\x00" + data
    p = tmp_path / f"random{seed}.xplane.pb"
    p.write_bytes(data)
    assert _oracle_refuses(p)
    _assert_refused(jaxprof_bin, p)


def test_cut_gzip_refused(jaxprof_bin, xplane_fixtures, tmp_path):
    src = xplane_fixtures / "tpu_4chip_inference.xplane.pb"
    if not src.is_file():
        pytest.skip(f"{src} not available")
    gz = gzip.compress(src.read_bytes(), mtime=0)
    p = tmp_path / "tpu_cut.xplane.pb.gz"
    p.write_bytes(gz[: len(gz) // 2])
    assert _oracle_refuses(p)
    _assert_refused(jaxprof_bin, p)
