"""`jaxprof ops` against the oracle on the hand-made profiles of
synthetic_profiles.py: nesting, tolerance, identical intervals, split lines,
negative offsets, epoch timestamps, stat lookup, the CPU-backend fallback."""
from __future__ import annotations

import pytest

import ops_check as oc
import synthetic_profiles as sp
import xplane_oracle as xo

BUILDERS = {
    "gpu_tpu": lambda p: sp.build_gpu_tpu(p),
    "gpu_tpu_gz": lambda p: sp.build_gpu_tpu(p, compress=True),
    "cpu_backend": lambda p: sp.build_cpu_backend(p),
}
NAMES = {"gpu_tpu": "synthetic_gpu.xplane.pb", "gpu_tpu_gz": "synthetic_gpu.xplane.pb.gz",
         "cpu_backend": "synthetic_cpu.xplane.pb"}

CASES = [
    ([], {}, None),
    (["--min-duration", "1.5"], {"min_duration_ns": "1.5"}, None),
    (["--min-duration", "0.0015"], {"min_duration_ns": "0.0015"}, None),
    (["--match", "^(dup|child|fusion\\.[0-9])$"], {"match": "^(dup|child|fusion\\.[0-9])$"}, None),
    (["--prefix", "c"], {"prefix": "c"}, None),
    (["--device", "TPU"], {"device": "TPU"}, None),
    (["--device", "re:^/(device|host):[CG]PU"], {"device": "re:^/(device|host):[CG]PU"}, None),
    (["--top", "2"], {}, 2),
]


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("synthetic")
    for key, build in BUILDERS.items():
        build(d / NAMES[key])
    return d


@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: " ".join(CASES[i][0]) or "plain")
@pytest.mark.parametrize("group_by", xo.GROUP_BYS)
@pytest.mark.parametrize("profile", list(BUILDERS))
def test_synthetic(jaxprof_bin, synthetic_dir, profile, group_by, case):
    args, kwargs, top = CASES[case]
    path = synthetic_dir / NAMES[profile]
    got = oc.run_ops_json(jaxprof_bin, path, ["--group-by", group_by, *args])
    want = xo.ops(xo.analyze_path(str(path)), group_by, **kwargs)
    oc.compare_ops(got, want, group_by, top=top,
                   label=f"{path.name} --group-by {group_by} {' '.join(args)}")


def test_synthetic_log_dir(jaxprof_bin, tmp_path):
    run = tmp_path / "plugins" / "profile" / "2025_02_03_04_05_06"
    run.mkdir(parents=True)
    sp.build_cpu_backend(run / "hostb.xplane.pb.gz", compress=True)
    got = oc.run_ops_json(jaxprof_bin, tmp_path, ["--group-by", "hlo-op"])
    want = xo.ops(xo.analyze_path(str(tmp_path)), "hlo-op")
    assert want[0]["host"] == "hostb"
    oc.compare_ops(got, want, "hlo-op", label="synthetic log dir")
