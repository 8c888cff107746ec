"""`jaxprof kernels` on the real GPU profiles: per kernel name, counts, times and every launch
configuration are recomputed here from the raw events and kernel_details strings (read with the
protobuf package, sharing nothing with the C++ decoder); grid and block must be the numbers the
stat text states. TPU and CPU profiles must say there are no GPU kernels and exit 0."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from decimal import Decimal

import pytest

import ops_check as oc
import xplane_oracle as xo

GPU_FIXTURES = ["mi300x_jax_gemm", "mi300x_jax_elementwise", "mi300x_jax_conv",
                "tf_v100_8gpu_training"]


def _stat_text(stat, names):
    return stat.str_value or (names.get(stat.ref_value, "") if stat.ref_value else "")


def expected_kernels(path):
    """{name: (count, total_ps, Counter(details -> count))} over GPU stream lines, copies and
    fills without kernel_details left out."""
    space = xo.load_xspace(str(path))
    out = defaultdict(lambda: [0, 0, Counter()])
    for plane in space.planes:
        if not plane.name.startswith("/device:GPU:"):
            continue
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        md = dict(plane.event_metadata.items())
        for line in plane.lines:
            if not line.name.startswith("Stream #"):
                continue
            for ev in line.events:
                stats = {names.get(s.metadata_id): s for s in ev.stats}
                details = _stat_text(stats["kernel_details"], names) if "kernel_details" in stats \
                    else ""
                if not details and ("memcpy_details" in stats or "memset_details" in stats):
                    continue
                acc = out[md[ev.metadata_id].name]
                acc[0] += 1
                acc[1] += ev.duration_ps
                acc[2][details] += 1
    return out


def run_kernels(binary, path, *extra):
    # Against raw events: every event counts (the steady state is tested on its own).
    proc = oc.run_cli(binary, ["kernels", str(path), "--format", "json", *oc.EVERYTHING, *extra])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return oc.parse_json(proc.stdout), proc.stderr.decode()


def _dim3(text, key):
    m = re.search(rf"(?:^|\s){key}:(\d+),(\d+),(\d+)", text)
    return [int(g) for g in m.groups()] if m else None


@pytest.mark.parametrize("name", GPU_FIXTURES)
def test_kernels_match_raw_events(jaxprof_bin, xplane_fixtures, name):
    path = xplane_fixtures / f"{name}.xplane.pb"
    if not path.exists():
        pytest.skip(f"{path} missing")
    got, _ = run_kernels(jaxprof_bin, path)
    want = expected_kernels(path)
    assert got["message"] is None
    assert {k["name"] for k in got["kernels"]} == set(want)
    assert got["kernel_events"] == sum(v[0] for v in want.values())
    for k in got["kernels"]:
        count, total_ps, configs = want[k["name"]]
        assert k["count"] == count, k["name"]
        assert k["total_ns"] == Decimal(total_ps) / 1000, k["name"]
        assert Counter({c["kernel_details"]: c["count"] for c in k["configs"]}) == configs
        for c in k["configs"]:
            text = c["kernel_details"]
            assert c["grid"] == _dim3(text, "grid"), text
            assert c["block"] == _dim3(text, "block"), text
            regs = re.search(r"(?:^|\s)regs:(\d+)", text)
            assert c["registers"] == (int(regs.group(1)) if regs else None), text
    totals = [k["total_ns"] for k in got["kernels"]]
    assert totals == sorted(totals, reverse=True)


def test_gemm_kernels_name_their_hlo_op(jaxprof_bin, xplane_fixtures):
    got, _ = run_kernels(jaxprof_bin, xplane_fixtures / "mi300x_jax_gemm.xplane.pb")
    gemms = [k for k in got["kernels"] if k["name"].startswith("Cijk_")]
    assert gemms and all(k["hlo_op"] == "custom-call.1" for k in gemms)
    assert all(k["op_name"] == "jit(dot)/dot_general" for k in gemms)
    top = got["kernels"][0]
    assert top["configs"][0]["shared_bytes"] == 29568  # group_mem of its kernel_details


@pytest.mark.parametrize("profile", ["tpu", "cpu"])
def test_non_gpu_profiles_have_no_kernels(jaxprof_bin, xplane_fixtures, profile):
    path = (xplane_fixtures / "tpu_4chip_inference.xplane.pb" if profile == "tpu"
            else oc.require_profile(oc.DATA_DIR / "jax_cpu_8dev"))
    got, stderr = run_kernels(jaxprof_bin, path)
    assert got["kernels"] == [] and got["kernel_events"] == 0
    assert got["message"].startswith("no GPU kernels")
    assert "no GPU kernels" in stderr
    table = oc.run_cli(jaxprof_bin, ["kernels", str(path)])
    assert table.returncode == 0
    assert table.stdout.decode().startswith("no GPU kernels")
