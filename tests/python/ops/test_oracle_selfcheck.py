"""Tests of the oracle itself, against numbers worked out by hand, so that the
comparison with the CLI cannot rest on an oracle that is silently wrong."""
from __future__ import annotations

import math

import pytest

import ops_check as oc
import synthetic_profiles as sp
import xplane_oracle as xo

GEMM = oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb"


# ---------------------------------------------------------------------------
# mi300x_jax_gemm, /device:GPU:0. Read off the file event by event:
#   Stream #16: 42 kernels, Stream #17: 12 copies, no two events overlap.
#   First event: Stream #17 [0] at offset 509421000 ps, 6480000 ps
#   (__amd_rocclr_copyBuffer.kd, no hlo_op).
#   Last end: Stream #16 [41] at 9781832000 + 183801000 = 9965633000 ps.
#   Stream #16 [4..6]: gemm_fusion_dot_general.1 in jit_dot: 4880000, 4640000,
#   5480000 ps (sum 15000000; mean 5000000; squared deviations 1.44e10 +
#   1.296e11 + 2.304e11 = 3.744e11; variance 1.248e11 ps^2).
#   copy.1 (jit_convert_element_type), 12 events on Stream #16:
#   4320000 2160000 2080000 2120000 1960000 1920000 2000000 2120000 2160000
#   2160000 2400000 2240000 -> 27640000 ps.
#   Stream #17 copies: 6480000 3720000 3680000 3640000 8680000 5080000 4040000
#   4240000 5360000 4960000 4600000 5760000 -> 60240000 ps.
#   custom-call.1 (jit_dot), 15 events: 12440000+9640000+9280000
#   + 154160000+148080000+147040000 + 672121000+587481000+573401000
#   + 112040000+106760000+133480000 + 184280000+184880000+183801000 = 3218884000.
#   wrapped_broadcast (jit_broadcast_in_dim), 12 events: 153720000.
#   Busy (no overlap) = sum of all = 3475484000 ps; span = 9965633000 - 509421000.
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gemm_devices():
    if not GEMM.is_file():
        pytest.skip(f"{GEMM} not available")
    return xo.analyze_path(str(GEMM))


def test_gemm_devices_and_host(gemm_devices):
    assert [d.device for d in gemm_devices] == ["/device:GPU:0"]
    d = gemm_devices[0]
    assert d.host == "mi300x_jax_gemm"
    assert len(d.events) == 54
    assert d.busy_ps == 3_475_484_000
    assert d.span_ps == 9_965_633_000 - 509_421_000 == 9_456_212_000


def test_gemm_single_events(gemm_devices):
    evs = gemm_devices[0].events
    first = min(evs, key=lambda e: e.start_ps)
    assert first.dur_ps == 6_480_000
    assert first.kernel == "__amd_rocclr_copyBuffer.kd" and first.hlo_op is None
    gemm = sorted((e for e in evs if e.hlo_op == "gemm_fusion_dot_general.1"),
                  key=lambda e: e.start_ps)
    assert [e.dur_ps for e in gemm] == [4_880_000, 4_640_000, 5_480_000]
    assert all(e.hlo_module == "jit_dot" and e.program_id == 5 for e in gemm)
    last = max(evs, key=lambda e: e.end_ps)
    assert last.dur_ps == 183_801_000 and last.hlo_op == "custom-call.1"
    assert all(e.self_ps == e.dur_ps for e in evs)  # nothing nests on a stream here


def test_gemm_hlo_op_groups(gemm_devices):
    (dev,) = xo.ops(gemm_devices, "hlo-op")
    g = {(x.module, x.name): x for x in dev["groups"]}
    assert [(x.module, x.name) for x in dev["groups"]] == [
        ("jit_dot", "custom-call.1"), ("jit_broadcast_in_dim", "wrapped_broadcast"),
        ("", "__amd_rocclr_copyBuffer.kd"), ("jit_convert_element_type", "copy.1"),
        ("jit_dot", "gemm_fusion_dot_general.1")]
    cc = g[("jit_dot", "custom-call.1")]
    assert (cc.count, cc.total_ps, cc.self_ps) == (15, 3_218_884_000, 3_218_884_000)
    assert (cc.min_ps, cc.max_ps) == (9_280_000, 672_121_000)
    wb = g[("jit_broadcast_in_dim", "wrapped_broadcast")]
    assert (wb.count, wb.total_ps) == (12, 153_720_000)
    cb = g[("", "__amd_rocclr_copyBuffer.kd")]
    assert (cb.count, cb.total_ps, cb.min_ps, cb.max_ps) == (12, 60_240_000, 3_640_000, 8_680_000)
    c1 = g[("jit_convert_element_type", "copy.1")]
    assert (c1.count, c1.total_ps, c1.min_ps, c1.max_ps) == (12, 27_640_000, 1_920_000, 4_320_000)
    gf = g[("jit_dot", "gemm_fusion_dot_general.1")]
    assert (gf.count, gf.total_ps, gf.self_ps) == (3, 15_000_000, 15_000_000)
    assert gf.variance_ps2() == 124_800_000_000
    js = xo.to_json(xo.ops(gemm_devices, "hlo-op"))["devices"][0]
    jg = [x for x in js["groups"] if x["name"] == "gemm_fusion_dot_general.1"][0]
    assert jg["total_ns"] == 15000.0 and jg["mean_ns"] == 5000.0
    assert math.isclose(jg["std_ns"], math.sqrt(124_800_000_000) / 1000, rel_tol=1e-15)
    assert math.isclose(jg["share"], 15_000_000 / 3_475_484_000, rel_tol=1e-15)
    assert sum(x.total_ps for x in dev["groups"]) == dev["busy_ps"]


def test_gemm_kernel_and_module_groups(gemm_devices):
    (dev,) = xo.ops(gemm_devices, "kernel")
    g = {x.name: x for x in dev["groups"]}
    # the copy kernel serves copy.1 (Stream #16) and the untagged copies (Stream #17)
    cb = g["__amd_rocclr_copyBuffer.kd"]
    assert (cb.count, cb.total_ps) == (24, 27_640_000 + 60_240_000)
    (dev,) = xo.ops(gemm_devices, "module")
    g = {(x.name, x.program_id): x for x in dev["groups"]}
    assert g[("(no module)", None)].total_ps == 60_240_000
    assert g[("jit_dot", 5)].total_ps == 15_000_000
    assert sum(x.count for k, x in g.items() if k[0] == "jit_dot") == 18


def test_gemm_filters(gemm_devices):
    (dev,) = xo.ops(gemm_devices, "hlo-op", prefix="gemm_")
    assert [x.name for x in dev["groups"]] == ["gemm_fusion_dot_general.1"]
    # exactly on the boundary: 4880000 and 5480000 are kept, 4640000 is not
    (dev,) = xo.ops(gemm_devices, "hlo-op", match="^gemm", min_duration_ns="4880")
    assert dev["groups"][0].count == 2 and dev["groups"][0].total_ps == 10_360_000
    # filters leave busy alone
    assert dev["busy_ps"] == 3_475_484_000
    assert xo.ops(gemm_devices, device="GPU:1") == []
    assert len(xo.ops(gemm_devices, device="re:GPU:[0-3]$")) == 1
    (dev,) = xo.ops(gemm_devices, "hlo-op", top=2)
    assert [x.name for x in dev["groups"]] == ["custom-call.1", "wrapped_broadcast"]


# ---------------------------------------------------------------------------
# Synthetic profiles (see synthetic_profiles.py for the event list)
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpu_tpu(tmp_path_factory):
    p = tmp_path_factory.mktemp("synthetic") / "synthetic_gpu.xplane.pb"
    sp.build_gpu_tpu(p)
    return xo.analyze_path(str(p))


@pytest.fixture(scope="module")
def cpu_backend(tmp_path_factory):
    p = tmp_path_factory.mktemp("synthetic") / "synthetic_cpu.xplane.pb.gz"
    sp.build_cpu_backend(p, compress=True)
    return xo.analyze_path(str(p))


def _self_by_start(dev):
    return sorted((e.start_ps - min(x.start_ps for x in dev.events), e.dur_ps, e.self_ps)
                  for e in dev.events)


def test_synthetic_devices(gpu_tpu):
    assert [(d.device, d.host) for d in gpu_tpu] == [("/device:GPU:0", "synthetic_gpu"),
                                                     ("/device:TPU:0", "synthetic_gpu")]
    gpu, tpu = gpu_tpu
    # GPU: [0,15000) (P, C3, C4 and the memcpy) + [20000,25000) + N + Q
    assert gpu.busy_ps == 15_000 + 5_000 + 1_000 + 100_000
    assert gpu.span_ps == 1_100_000
    assert len(gpu.events) == 12
    assert tpu.busy_ps == 50_000 + 10_500 and tpu.span_ps == 110_000


def test_synthetic_self_times(gpu_tpu):
    gpu, tpu = gpu_tpu
    assert _self_by_start(gpu) == sorted([
        (0, 10_000, 6_500),          # P: C1 u C2 = 3000, C3 clipped = 500
        (1_000, 2_000, 1_500),       # C1: C2 ends 1000 after it -> nested, clipped 500
        (2_500, 1_500, 1_500),       # C2
        (5_000, 10_000, 10_000),     # M, other stream
        (9_500, 1_300, 300),         # C3: C4 ends 700 after it -> nested, clipped 1000
        (9_800, 1_700, 1_700),       # C4: ends 1500 after P -> not in P
        (20_000, 5_000, 0),          # Da: first in file, parent of its twin
        (20_000, 5_000, 5_000),      # Db
        (22_000, 0, 0),              # Z
        (500_000, 1_000, 1_000),     # N: negative offset on the second XLine
        (1_000_000, 100_000, 80_000),  # Q: E comes from the other XLine with the same id
        (1_010_000, 20_000, 20_000),   # E
    ])
    assert _self_by_start(tpu) == sorted([
        (0, 50_000, 30_000), (1_000, 10_000, 10_000), (11_000, 10_000, 10_000),
        (99_500, 5_500, 5_500),      # K starts 500 ps before J: neither nests
        (100_000, 10_000, 10_000),
    ])


def test_synthetic_hlo_op_groups(gpu_tpu):
    gpu, tpu = xo.ops(gpu_tpu, "hlo-op")
    got = [(g.module, g.name, g.count, g.total_ps, g.self_ps) for g in gpu["groups"]]
    assert got == [
        ("jit_a", "fusion.1", 2, 110_000, 86_500),    # ref stat on the event
        ("jit_a", "dot.2", 2, 22_000, 21_500),        # event stat beats metadata stat
        ("", "MemcpyH2D", 1, 10_000, 10_000),          # tie on total: "MemcpyH2D" < "dup"
        ("jit_b", "dup", 2, 10_000, 5_000),           # no hlo_op: display name
        ("", "tail_kernel", 3, 4_000, 3_000),          # no display name: name
        ("jit_a", "meta_op", 1, 1_500, 1_500),        # metadata stat
        ("", "marker", 1, 0, 0),
    ]
    got = [(g.module, g.name, g.count, g.total_ps, g.self_ps) for g in tpu["groups"]]
    assert got == [("", "while.1", 1, 50_000, 30_000), ("", "fusion.3", 2, 20_000, 20_000),
                   ("", "copy.4", 1, 10_000, 10_000), ("", "copy.5", 1, 5_500, 5_500)]


def test_synthetic_module_groups(gpu_tpu):
    gpu, tpu = xo.ops(gpu_tpu, "module")
    got = [(g.name, g.program_id, g.count, g.total_ps) for g in gpu["groups"]]
    assert got == [("jit_a", sp.BIG_PROGRAM_ID, 2, 110_000), ("jit_a", 3, 3, 23_500),
                   ("(no module)", None, 5, 14_000), ("jit_b", 7, 2, 10_000)]
    got = [(g.name, g.program_id, g.count, g.total_ps) for g in tpu["groups"]]
    assert got == [("(no module)", 42, 3, 70_000), ("(no module)", None, 2, 15_500)]


def test_synthetic_filters(gpu_tpu):
    gpu, tpu = xo.ops(gpu_tpu, "name", min_duration_ns="1.5")
    # drops N (1000), C3 (1300) and Z (0); keeps C2 (1500) on the boundary
    assert {g.name: g.count for g in gpu["groups"]} == {
        "parent_kernel": 2, "child": 3, "MemcpyH2D": 1, "dup": 2, "tail_kernel": 1}
    gpu, tpu = xo.ops(gpu_tpu, "kernel", match="^(dup|child)$")
    assert {g.name: g.count for g in gpu["groups"]} == {"child_kernel": 3, "dup_kernel": 2}
    assert tpu["groups"] == []
    (tpu,) = xo.ops(gpu_tpu, "name", device="TPU", prefix="copy")
    assert [g.name for g in tpu["groups"]] == ["copy.4", "copy.5"]
    assert tpu["busy_ps"] == 60_500


def test_cpu_backend(cpu_backend):
    (dev,) = cpu_backend
    assert (dev.device, dev.host) == ("/host:CPU", "synthetic_cpu")
    assert dev.busy_ps == 50_500 + 10_000 and dev.span_ps == 70_000
    assert _self_by_start(dev) == sorted([
        (0, 50_000, 35_000),      # A: B and C (clipped to 5000) nest; eigen_work does not count
        (5_000, 10_000, 10_000),  # E, other thread
        (10_000, 10_000, 10_000),  # B
        (45_000, 5_500, 5_500),   # C
        (60_000, 10_000, 10_000),  # D, second XLine of thread 10
    ])
    (res,) = xo.ops(cpu_backend, "hlo-op")
    assert [(g.module, g.name, g.count, g.total_ps, g.self_ps) for g in res["groups"]] == [
        ("jit_cpu", "while.3", 1, 50_000, 35_000), ("jit_cpu", "fusion.7", 3, 30_000, 30_000),
        ("jit_cpu", "fusion.8", 1, 5_500, 5_500)]
    (res,) = xo.ops(cpu_backend, "module")
    assert [(g.name, g.program_id, g.count) for g in res["groups"]] == [("jit_cpu", 0, 5)]


def test_profile_files_in_log_dir(tmp_path):
    run_old = tmp_path / "plugins" / "profile" / "2024_01_01_00_00_00"
    run_new = tmp_path / "plugins" / "profile" / "2024_06_01_00_00_00"
    run_old.mkdir(parents=True)
    run_new.mkdir(parents=True)
    sp.build_cpu_backend(run_old / "old.xplane.pb")
    sp.build_cpu_backend(run_new / "hostb.xplane.pb.gz", compress=True)
    assert xo.profile_files(str(tmp_path)) == [str(run_new / "hostb.xplane.pb.gz")]
    (dev,) = xo.analyze_path(str(tmp_path))
    assert dev.host == "hostb"


def test_loader_refuses_garbage(tmp_path):
    p = tmp_path / "garbage.xplane.pb"
    p.write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    with pytest.raises(xo.OracleError):
        xo.load_xspace(str(p))
    p.write_bytes(b"\x1f\x8b\x08\x00")
    with pytest.raises(xo.OracleError):
        xo.load_xspace(str(p))
