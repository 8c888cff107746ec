"""jaxprof.distributed on a real Dask LocalCluster with several worker processes, reading hosts
from local paths and from a real S3-compatible server (moto's, started on 127.0.0.1): the result
equals `jaxprof summary` (and `jaxprof hosts`) on the same hosts."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import ops_check as oc

distributed = pytest.importorskip("dask.distributed")
jd = pytest.importorskip("jaxprof.distributed")

CPU = oc.DATA_DIR / "jax_cpu_8dev" / "plugins" / "profile" / "session" / "vm.xplane.pb"
GEMM = oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb"


def cli_json(binary, args):
    proc = oc.run_cli(binary, args + ["--format", "json"], timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture()
def logdir(tmp_path):
    if not CPU.is_file():
        pytest.skip("no CPU capture")
    run = tmp_path / "logs" / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    for h in range(5):
        (run / f"w{h}.xplane.pb").symlink_to(CPU)
    return tmp_path / "logs"


def test_local_paths_equal_cli(jaxprof_bin, client, logdir):
    got = jd.summarize(str(logdir), client=client, format="json")
    assert got == cli_json(jaxprof_bin, ["summary", str(logdir)])
    assert jd.hosts(str(logdir), client=client, format="json") == \
        cli_json(jaxprof_bin, ["hosts", str(logdir)])
    # The merged partials, written out, are what the CLI reads as profiles.
    merged = jd.partials(str(logdir), client=client, parts="all", fan_in=2)
    path = logdir.parent / "all.partial"
    path.write_bytes(merged)
    assert cli_json(jaxprof_bin, ["summary", str(path)]) == got
    assert cli_json(jaxprof_bin, ["modules", str(path)]) == cli_json(jaxprof_bin,
                                                                      ["modules", str(logdir)])


@pytest.fixture()
def s3_server():
    moto_server = pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    boto3 = pytest.importorskip("boto3")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    options = {"endpoint_url": endpoint, "key": "testing", "secret": "testing"}
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                      aws_secret_access_key="testing", region_name="us-east-1")
    s3.create_bucket(Bucket="profiles")
    yield s3, options, endpoint
    server.stop()


def test_s3_equals_local(jaxprof_bin, client, logdir, s3_server):
    s3, options, endpoint = s3_server
    run = logdir / "plugins" / "profile" / "run"
    for f in sorted(run.iterdir()):
        s3.put_object(Bucket="profiles", Key=f"logs/plugins/profile/run/{f.name}",
                      Body=f.read_bytes())
    if GEMM.is_file():  # a GPU host too, gzip-compressed on the server
        import gzip

        s3.put_object(Bucket="profiles", Key="logs/plugins/profile/run/gpu.xplane.pb.gz",
                      Body=gzip.compress(GEMM.read_bytes()))
        (run / "gpu.xplane.pb").symlink_to(GEMM)
    got = jd.summarize("s3://profiles/logs", client=client, format="json",
                       storage_options=options)
    assert got == cli_json(jaxprof_bin, ["summary", str(logdir)])
    assert got["hosts"][0] == "gpu" or not GEMM.is_file()

    # The command line, with the cluster's scheduler.
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, "-m", "jaxprof.distributed", "s3://profiles/logs", "--format", "json",
         "--scheduler", client.scheduler.address, "--storage-option",
         f"endpoint_url={endpoint}", "--storage-option", "key=testing", "--storage-option",
         "secret=testing"], capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    assert json.loads(proc.stdout) == got
    assert b"hosts" in proc.stderr  # progress

    proc = subprocess.run(
        [sys.executable, "-m", "jaxprof.distributed", "s3://profiles/nothing-here", "--scheduler",
         client.scheduler.address, "--storage-option", f"endpoint_url={endpoint}",
         "--storage-option", "key=testing", "--storage-option", "secret=testing"],
        capture_output=True, env=env, timeout=300)
    assert proc.returncode == 2
    assert b"nothing-here" in proc.stderr
