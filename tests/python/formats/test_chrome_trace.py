"""jaxprof on Chrome trace JSON (`<host>.trace.json.gz`, what JAX writes next to the xplane):
`ops` must give what it gives on the xplane of the same run, event counts must match a plain
json parse, and bad input must exit 2 naming the file.

Tolerance against the xplane: counts equal; totals and self times within 1 ps per event. XLA's
exporter writes times as %.17g microseconds, which carry every picosecond exactly, except that
it writes zero-length events as 1e-06 us (1 ps) so viewers show them. On the CPU captures the
numbers are equal to the picosecond.
"""
from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

import ops_check as oc

RUNS = ("jax_cpu_8dev", "jax_cpu_matmul")


def run_dir(name: str) -> Path:
    return oc.require_profile(oc.DATA_DIR / name) / "plugins" / "profile" / "session"


def ops_groups(binary, path, group_by):
    """(device, module, name) -> [count, total ps, self ps]; modules by name only (the trace
    has no program ids)."""
    got = oc.run_ops_json(binary, path, ["--group-by", group_by])
    out = defaultdict(lambda: [0, 0, 0])
    for d in got["devices"]:
        for g in d["groups"]:
            key = (d["device"], g.get("module", ""), g["name"])
            acc = out[key]
            acc[0] += g["count"]
            acc[1] += round(Decimal(str(g["total_ns"])) * 1000)
            acc[2] += round(Decimal(str(g["self_ns"])) * 1000)
    return dict(out)


def compare_with_xplane(binary, trace: Path, xplane: Path, group_by: str, exact: bool):
    t, x = ops_groups(binary, trace, group_by), ops_groups(binary, xplane, group_by)
    assert t.keys() == x.keys(), sorted(set(t) ^ set(x))[:5]
    for key, (count, total, self_ps) in x.items():
        tc, tt, ts = t[key]
        assert tc == count, key
        slack = 0 if exact else count  # 1 ps per event
        assert abs(tt - total) <= slack, (key, tt, total)
        assert abs(ts - self_ps) <= slack, (key, ts, self_ps)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("group_by", ["hlo-op", "module", "kernel", "name"])
def test_ops_on_trace_equals_ops_on_xplane(jaxprof_bin, run, group_by):
    d = run_dir(run)
    compare_with_xplane(jaxprof_bin, d / "vm.trace.json.gz", d / "vm.xplane.pb", group_by,
                        exact=True)


@pytest.mark.parametrize("run", RUNS)
def test_event_counts_match_a_json_parse(jaxprof_bin, run):
    path = run_dir(run) / "vm.trace.json.gz"
    events = json.load(gzip.open(path))["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    want = Counter(names[(e["pid"], e["tid"])] for e in events if e.get("ph") == "X")
    proc = oc.run_cli(jaxprof_bin, ["info", path, "--format", "json", "--all-lines"])
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    got = Counter({line["name"]: line["events"] for p in info["planes"] for line in p["lines"]})
    assert got == want
    assert info["events"] == sum(want.values())


def test_run_dir_prefers_the_xplane_and_falls_back_to_the_trace(jaxprof_bin, tmp_path):
    d = run_dir("jax_cpu_matmul")
    both = tmp_path / "both"
    both.mkdir()
    for f in ("vm.xplane.pb", "vm.trace.json.gz"):
        shutil.copy(d / f, both / f)
    only_trace = tmp_path / "trace"
    only_trace.mkdir()
    shutil.copy(d / "vm.trace.json.gz", only_trace / "vm.trace.json.gz")
    shutil.copy(d / "vm.trace.json.gz", only_trace / "vm.memory_profile.json.gz")

    def files(path):
        proc = oc.run_cli(jaxprof_bin, ["info", path, "--format", "json"])
        assert proc.returncode == 0, proc.stderr
        return [Path(h["file"]).name for h in json.loads(proc.stdout)["hosts"]]

    assert files(both) == ["vm.xplane.pb"]
    assert files(only_trace) == ["vm.trace.json.gz"]


def test_perfetto_trace_written_by_python_json(jaxprof_bin, tmp_path):
    # What jax.profiler writes as perfetto_trace.json.gz: json.dumps of the same trace.
    d = run_dir("jax_cpu_matmul")
    trace = json.load(gzip.open(d / "vm.trace.json.gz"))
    del trace["metadata"]
    out = tmp_path / "perfetto_trace.json.gz"
    with gzip.open(out, "wt") as f:
        json.dump(trace, f)
    compare_with_xplane(jaxprof_bin, out, d / "vm.xplane.pb", "hlo-op", exact=True)


def exported_traces(tmp_path_factory):
    """GPU and TPU traces made from the shared xplane fixtures by JAX's own exporter."""
    pytest.importorskip("jax")
    fixtures = [p for p in oc.fixture_profiles()
                if p.name.startswith(("mi300x_jax_gemm", "tpu_4chip"))]
    if not fixtures:
        pytest.skip("shared xplane fixtures not available")
    out = tmp_path_factory.mktemp("exported")
    script = (
        "import sys\n"
        "from jax._src.lib import _profiler\n"
        "s = _profiler.ProfilerSession(_profiler.ProfileOptions()); s.stop()\n"
        "for src, dst in zip(sys.argv[1::2], sys.argv[2::2]):\n"
        "    s.export(open(src, 'rb').read(), dst)\n")
    args = []
    for p in fixtures:
        args += [str(p), str(out / p.name.split(".")[0])]
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          timeout=300, env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    if proc.returncode != 0:
        pytest.skip(f"this JAX cannot export traces: {proc.stderr[-300:]}")
    return sorted(out.glob("*/plugins/profile/*"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return exported_traces(tmp_path_factory)


@pytest.mark.parametrize("group_by", ["hlo-op", "kernel", "name"])
def test_gpu_and_tpu_traces_exported_by_jax_match_their_xplanes(jaxprof_bin, exported, group_by):
    assert exported
    for d in exported:
        compare_with_xplane(jaxprof_bin, d / "vm.trace.json.gz", d / "vm.xplane.pb", group_by,
                            exact=False)


@pytest.mark.parametrize("text, fragment", [
    (b"", "empty"),
    (b"not json", "not a Chrome trace"),
    (b'{"displayTimeUnit": "ns"}', "traceEvents"),
    (b'{"traceEvents": 5}', "not an array"),
    (b'{"traceEvents": [{"ph": "X", "ts": 1, "name": "a"}', "truncated"),
    (b'{"traceEvents": [{"ph": "X", "ts": [1], "name": "a"}]}', '"ts"'),
    (b'{"traceEvents": [{"ph": 1, "ts": 1}]}', "wrong shape"),
])
def test_bad_json_exits_2_naming_the_file(jaxprof_bin, tmp_path, text, fragment):
    path = tmp_path / "bad.trace.json"
    path.write_bytes(text)
    proc = oc.run_cli(jaxprof_bin, ["ops", path])
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert str(path) in err and fragment in err, err
    assert len(err.strip().splitlines()) == 1


def test_truncated_gzip_exits_2_naming_the_file(jaxprof_bin, tmp_path):
    data = (run_dir("jax_cpu_8dev") / "vm.trace.json.gz").read_bytes()
    path = tmp_path / "cut.trace.json.gz"
    path.write_bytes(data[: len(data) // 2])
    proc = oc.run_cli(jaxprof_bin, ["ops", path])
    assert proc.returncode == 2
    assert str(path) in proc.stderr.decode()


def test_fresh_capture_trace_matches_its_xplane(jaxprof_bin, tmp_path_factory):
    pytest.importorskip("jax", reason="jax is needed to capture profiles")
    out = tmp_path_factory.mktemp("capture_trace")
    script = oc.ROOT / "tests" / "data" / "capture_cpu_profiles.py"
    proc = subprocess.run([sys.executable, str(script), "--out", str(out)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for run in RUNS:
        (d,) = (out / run / "plugins" / "profile").iterdir()
        for group_by in ("hlo-op", "module"):
            compare_with_xplane(jaxprof_bin, d / "vm.trace.json.gz", d / "vm.xplane.pb", group_by,
                                exact=False)


def test_hlo_protos_given_beside_a_trace_add_opcodes_and_op_paths(jaxprof_bin, tmp_path):
    import xplane_oracle as xo
    d = run_dir("jax_cpu_matmul")
    space = xo.load_xspace(str(d / "vm.xplane.pb"))
    (plane,) = [p for p in space.planes if p.name == "/host:metadata"]
    names = {k: v.name for k, v in plane.stat_metadata.items()}
    hlo = tmp_path / "jit_two_matmuls.hlo.pb"
    for m in plane.event_metadata.values():
        for st in m.stats:
            if names.get(st.metadata_id) == "Hlo Proto":
                hlo.write_bytes(st.bytes_value)
    got = oc.run_ops_json(jaxprof_bin, d / "vm.trace.json.gz", [hlo])
    (device,) = got["devices"]
    assert {g["opcode"] for g in device["groups"]} == {"fusion"}
    assert all(g["op_name"] == "jit(two_matmuls)/dot_general" for g in device["groups"])
