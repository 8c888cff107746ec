"""Several hosts' XSpace files (symlinks to the real fixtures, one of them under two host names,
and the gzip capture), named one by one (a directory of them is refused: they are not one
capture's hosts): `jaxprof ops` and `info` on them give, per host, what the host's file gives
alone, and the same JSON whether the files are read on several threads or on one (--threads 1)."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

import ops_check as oc

HOSTS = {
    "alpha": oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb",
    "beta": oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb",
    "delta": oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb",  # the same file again
    "gamma": oc.XPLANE_FIXTURES / "tf_v100_8gpu_training.xplane.pb",
}


def named(run_dir):
    """The run's host files, one by one."""
    return [str(p) for p in sorted((run_dir / "plugins" / "profile" / "run").glob("*.xplane.pb*"))]


def cli_json(binary, args):
    proc = oc.run_cli(binary, args + ["--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout.decode(), parse_float=Decimal)


@pytest.fixture()
def run_dir(tmp_path):
    for target in HOSTS.values():
        if not target.is_file():
            pytest.skip(f"fixture {target} not found")
    run = tmp_path / "logs" / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    for host, target in HOSTS.items():
        (run / f"{host}.xplane.pb").symlink_to(target)
    (run / "zeta.xplane.pb.gz").symlink_to(oc.DATA_DIR / "jax_cpu_matmul.xplane.pb.gz")
    return tmp_path / "logs"


def test_threads_do_not_change_the_result(jaxprof_bin, run_dir):
    for command in (["ops"], ["info", "--all-lines"], ["modules"]):
        many = cli_json(jaxprof_bin, command + named(run_dir))
        one = cli_json(jaxprof_bin, command + named(run_dir) + ["--threads", "1"])
        assert many == one, command


def test_each_host_is_its_file_alone(jaxprof_bin, run_dir):
    files = {h: str(t) for h, t in HOSTS.items()}
    files["zeta"] = str(oc.DATA_DIR / "jax_cpu_matmul.xplane.pb.gz")
    ops = cli_json(jaxprof_bin, ["ops", *named(run_dir)])
    info = cli_json(jaxprof_bin, ["info", "--all-lines", *named(run_dir)])
    assert [h["host"] for h in info["hosts"]] == sorted(files)
    assert info["events"] == sum(
        cli_json(jaxprof_bin, ["info", f])["events"] for f in files.values())
    for host, path in files.items():
        alone_ops = cli_json(jaxprof_bin, ["ops", path])
        got = [dict(d, host=None) for d in ops["devices"] if d["host"] == host]
        want = [dict(d, host=None) for d in alone_ops["devices"]]
        # The CPU capture's ops are host-thread events, devices only in a profile whose
        # /device: planes have no ops (docs/cli.md): next to GPU and TPU hosts it has none.
        assert got == (want if host != "zeta" else []), host
        alone = cli_json(jaxprof_bin, ["info", "--all-lines", path])
        # Line times are on the run's clock: the earliest line of all hosts is zero.
        shift = Decimal(alone["base_ns"]) - Decimal(info["base_ns"])
        got_planes = [p for p in info["planes"] if p["host"] == host]
        assert len(got_planes) == len(alone["planes"]), host
        for g, w in zip(got_planes, alone["planes"]):
            assert (g["name"], g["kind"], g["events"], g["stats"]) == \
                (w["name"], w["kind"], w["events"], w["stats"])
            assert [(x["name"], x["id"], x["events"]) for x in g["lines"]] == \
                [(x["name"], x["id"], x["events"]) for x in w["lines"]]
            for x, y in zip(g["lines"], w["lines"]):
                if y["events"]:
                    assert Decimal(x["first_ns"]) == Decimal(y["first_ns"]) + shift
                    assert Decimal(x["last_ns"]) == Decimal(y["last_ns"]) + shift


def test_bad_file_is_named(jaxprof_bin, run_dir, tmp_path):
    bad = tmp_path / "cut.xplane.pb"
    data = HOSTS["alpha"].read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    (run_dir / "plugins" / "profile" / "run" / "epsilon.xplane.pb").symlink_to(bad)
    for threads in ([], ["--threads", "1"]):
        proc = oc.run_cli(jaxprof_bin, ["ops", *named(run_dir)] + threads)
        err = proc.stderr.decode()
        assert proc.returncode == 2
        assert "epsilon.xplane.pb" in err and len(err.strip().splitlines()) == 1, err
