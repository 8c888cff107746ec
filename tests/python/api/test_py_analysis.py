"""The Python analysis API (the jaxprof package): loading, ops/info equal to the CLI's JSON,
zero-copy event columns, and errors for bad files."""
from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ops_check

jaxprof = pytest.importorskip("jaxprof", reason="the jaxprof package is not installed (pip install .)")

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
SHARED = Path(os.environ.get("JAXPROF_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures"))
BAD = SHARED / "bad" / "tpu_inference_utf8_mangled.xplane.pb"


def cli() -> str:
    """The jaxprof command the package installed (same build as the extension)."""
    path = shutil.which("jaxprof")
    if path is None:
        pytest.skip("the jaxprof command is not on PATH")
    return path


def cli_json(*args: str) -> dict:
    out = subprocess.run([cli(), *args, "--format", "json"], check=True, capture_output=True,
                         text=True).stdout
    return ops_check.api_view(args[0], json.loads(out))


PROFILES = [
    DATA / "jax_cpu_8dev",
    DATA / "jax_cpu_matmul" / "plugins" / "profile" / "session" / "vm.xplane.pb",
    DATA / "jax_cpu_matmul.xplane.pb.gz",
]
SHARED_PROFILES = sorted((SHARED / "xplane").glob("*.xplane.pb")) if (SHARED / "xplane").is_dir() else []


@pytest.mark.parametrize("path", PROFILES + SHARED_PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("group_by", ["hlo-op", "kernel", "module", "category"])
def test_ops_equals_cli_json(path: Path, group_by: str) -> None:
    got = jaxprof.load(path).ops(group_by)
    assert got.data == cli_json("ops", str(path), "--group-by", group_by)
    assert len(got.rows) == sum(len(d["groups"]) for d in got.data["devices"])


def test_ops_filters_equal_cli_json() -> None:
    path = DATA / "jax_cpu_8dev"
    got = jaxprof.load(path).ops(match="fusion|dot", min_duration_ns=5, top=3,
                                 device="/device:CPU:1")
    want = cli_json("ops", str(path), "--match", "fusion|dot", "--min-duration", "5", "--top",
                    "3", "--device", "/device:CPU:1")
    assert got.data == want


def test_info_equals_cli_json() -> None:
    path = DATA / "jax_cpu_8dev"
    got = jaxprof.load(path).info()
    assert got.data == cli_json("info", str(path), "--all-lines")
    assert [r["name"] for r in got.rows] == ["/host:metadata", "/host:CPU", "Task Environment"]


def test_results_render_and_convert() -> None:
    r = jaxprof.load(DATA / "jax_cpu_matmul.xplane.pb.gz").ops()
    html = r._repr_html_()
    assert html.startswith('<div class="jaxprof-cli">') and "<table>" in html
    assert "ynn_fusion" in html and "total (" in html  # the CLI's columns, with their units
    pd = pytest.importorskip("pandas")
    df = r.to_pandas()
    assert list(df.columns[:4]) == ["device", "host", "name", "count"]
    assert df["total_ns"].sum() == pytest.approx(sum(g["total_ns"] for g in r.rows))


def test_devices_and_planes() -> None:
    p = jaxprof.load(DATA / "jax_cpu_8dev")
    assert p.devices == [f"/device:CPU:{i}" for i in range(8)]
    assert [pl.name for pl in p.planes] == ["/host:metadata", "/host:CPU", "Task Environment"]
    assert p.hosts == ["vm"]


def test_events_are_zero_copy_views_that_outlive_the_profile() -> None:
    # Every execution counted, as the raw events are (warm-up runs included).
    p = jaxprof.load(DATA / "jax_cpu_8dev", include_autotuning=True, include_warmup=True)
    ev = p.events()
    start = ev.start_ps
    assert len(start) == p.num_events == 23898
    assert not start.flags.writeable and not start.flags.owndata
    again = p.events().start_ps
    assert np.shares_memory(start, again)  # both view the same C++ column
    # The device's ops: on the CPU backend they are picked out of shared host lines (a gather).
    dev = p.events("/device:CPU:0")
    total_ops = sum(g["count"] for g in p.ops().devices[0]["groups"])
    assert len(dev) == total_ops
    expected = int(dev.duration_ps.sum())
    del p, ev, again, dev
    gc.collect()
    # The view keeps the profile's memory alive on its own.
    assert len(start) == 23898 and int(start.min()) >= 0
    q = jaxprof.load(DATA / "jax_cpu_8dev")
    assert int(q.events("/device:CPU:0").duration_ps.sum()) == expected


def test_single_line_device_is_a_view() -> None:
    path = SHARED / "xplane" / "mi300x_jax_gemm.xplane.pb"
    if not path.is_file():
        pytest.skip("shared fixtures missing")
    p = jaxprof.load(path, include_autotuning=True, include_warmup=True)  # as the raw events
    dev = p.events(p.devices[0])
    full = p.events()
    assert np.shares_memory(dev.start_ps, full.start_ps)
    total_ns = sum(g["total_ns"] for g in p.ops().devices[0]["groups"])
    assert int(dev.duration_ps.sum()) == round(total_ns * 1000)


def test_events_to_pandas_and_arrow() -> None:
    p = jaxprof.load(DATA / "jax_cpu_matmul.xplane.pb.gz")
    ev = p.events("/device:CPU:0")
    pd = pytest.importorskip("pandas")
    df = ev.to_pandas()
    assert set(df["hlo_op"].astype(str)) == {"ynn_fusion", "ynn_fusion.1"}
    assert df["duration_ps"].sum() == ev.duration_ps.sum()
    pa = pytest.importorskip("pyarrow")
    table = ev.to_arrow()
    assert table.num_rows == len(ev)
    assert table.column("name").to_pylist()[0] in ("ynn_fusion", "ynn_fusion.1")
    all_events = p.events()
    arr = all_events.to_arrow().column("start_ps").chunk(0)
    # pyarrow wraps the NumPy view: same address as the C++ column.
    assert arr.buffers()[1].address == all_events.start_ps.ctypes.data


def test_corrupt_profile_raises_profile_error() -> None:
    if not BAD.is_file():
        pytest.skip("shared fixtures missing")
    with pytest.raises(jaxprof.CorruptProfileError) as info:
        jaxprof.load(BAD).ops()
    assert info.value.path == str(BAD)
    assert "corrupt" in info.value.reason
    assert isinstance(info.value, jaxprof.ProfileError)
    with pytest.raises(jaxprof.ProfileError):
        jaxprof.load(BAD).events()


def test_missing_and_bad_options() -> None:
    with pytest.raises(jaxprof.ProfileNotFoundError) as info:
        jaxprof.load("/nonexistent/profile.xplane.pb")
    assert info.value.path == "/nonexistent/profile.xplane.pb"
    with pytest.raises(jaxprof.ProfileNotFoundError):
        jaxprof.load(DATA / "jax_cpu_8dev", session="nope")
    p = jaxprof.load(DATA / "jax_cpu_matmul.xplane.pb.gz")
    with pytest.raises(jaxprof.InvalidOptionError):
        p.ops(match="(")
    with pytest.raises(jaxprof.InvalidOptionError):
        p.ops("nonsense")
    with pytest.raises(KeyError):
        p.events("/device:GPU:7")


def test_not_a_profile(tmp_path: Path) -> None:
    f = tmp_path / "junk.xplane.pb"
    f.write_bytes(b"\xff" * 100)
    with pytest.raises(jaxprof.CorruptProfileError):
        jaxprof.load(f).info()


@pytest.mark.parametrize("path", PROFILES[:2] + SHARED_PROFILES[:2], ids=lambda p: p.name)
def test_other_analyses_equal_cli_json(path: Path) -> None:
    p = jaxprof.load(path)
    assert p.timeline().data == cli_json("timeline", str(path))
    modules = p.modules()
    assert modules.data == cli_json("modules", str(path))
    assert len(modules.rows) == len(modules.data["modules"])
    assert p.kernels().data == cli_json("kernels", str(path))
    assert "<table>" in p.timeline()._repr_html_()
