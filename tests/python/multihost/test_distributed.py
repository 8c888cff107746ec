"""jaxprof.distributed on a real Dask LocalCluster with several worker processes, reading hosts
from local paths and from a real S3-compatible server (moto's, started on 127.0.0.1): the result
equals `jaxprof summary` (and `jaxprof hosts`) on the same hosts."""
from __future__ import annotations

import json
import os
import re
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


def figures(doc):
    """A command's JSON less `input` (which says how the paths were read: the CLI's and the
    Python API's paths, or a partial file's, differ while the figures must not)."""
    return {k: v for k, v in doc.items() if k != "input"}


def host_files(logdir):
    """The made-up hosts of `logdir`, named one by one: they are copies of one capture (one
    machine), so a directory of them is refused as "not the hosts of one capture"."""
    return [str(p) for p in sorted((logdir / "plugins" / "profile" / "run").iterdir())]


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
    files = host_files(logdir)
    got = jd.summarize(files, client=client, format="json")
    # The same JSON, "input" (what was read) included.
    assert got == cli_json(jaxprof_bin, ["summary", *files])
    assert got["hosts"] == [f"w{h}" for h in range(5)]
    assert jd.hosts(files, client=client, format="json") == \
        cli_json(jaxprof_bin, ["hosts", *files])
    # The merged partials, written out, are what the CLI reads as profiles.
    merged = jd.partials(files, client=client, parts="all", fan_in=2)
    path = logdir.parent / "all.partial"
    path.write_bytes(merged)
    assert figures(cli_json(jaxprof_bin, ["summary", str(path)])) == figures(got)
    assert figures(cli_json(jaxprof_bin, ["modules", str(path)])) == \
        figures(cli_json(jaxprof_bin, ["modules", *files]))
    # The directory of those copies is refused, by the CLI and by the cluster alike.
    proc = oc.run_cli(jaxprof_bin, ["summary", str(logdir)], timeout=300)
    assert proc.returncode == 2 and b"not the hosts of one capture" in proc.stderr
    with pytest.raises(jd.ProfileError, match="not the hosts of one capture") as refused:
        jd.summarize(str(logdir), client=client, format="json")
    assert f"(jaxprof {files[0]})" in str(refused.value), "the file it suggests exists"


def test_batches_and_keep_going(jaxprof_bin, client, logdir, tmp_path):
    """Any batching gives the same result; a damaged host stops the run, or with keep_going is
    left out and reported, never silently."""
    files = host_files(logdir)
    want = figures(cli_json(jaxprof_bin, ["summary", *files]))
    for batch in (1, 2, 5):
        assert figures(jd.summarize(files, client=client, format="json", batch=batch)) == want
    run = logdir / "plugins" / "profile" / "run"
    data = CPU.read_bytes()
    (run / "w9.xplane.pb").write_bytes(data[: len(data) // 3])
    files = host_files(logdir)
    assert files[-1].endswith("w9.xplane.pb")
    with pytest.raises(jd.ProfileError, match="w9"):
        jd.summarize(files, client=client, format="json")
    for batch in (1, 3, None):  # the damaged host alone in its batch, or with others
        skipped = []
        got = jd.summarize(files, client=client, format="json", keep_going=True,
                           skipped=skipped, batch=batch)
        assert figures(got) == want
        assert [s[0] for s in skipped] == ["w9"] and "w9.xplane.pb" in skipped[0][2]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, "-m", "jaxprof.distributed", *files, "--format", "json",
         "--scheduler", client.scheduler.address, "--keep-going", "--quiet"],
        capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    assert figures(json.loads(proc.stdout)) == want
    assert b"skipped host w9" in proc.stderr and b"read 5 hosts, skipped 1" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "jaxprof.distributed", *files, "--scheduler",
         client.scheduler.address, "--quiet"], capture_output=True, env=env, timeout=300)
    assert proc.returncode == 2 and b"w9.xplane.pb" in proc.stderr
    # Every host damaged: an error even with keep_going.
    bad = tmp_path / "bad" / "plugins" / "profile" / "run"
    bad.mkdir(parents=True)
    (bad / "x.xplane.pb").write_bytes(data[: len(data) // 3])
    with pytest.raises(jd.ProfileError, match="no host could be read"):
        jd.summarize(str(tmp_path / "bad"), client=client, keep_going=True)


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
    # Copies of one capture: named one by one (the directory of them is refused).
    urls = [f"s3://profiles/logs/plugins/profile/run/{f.name}" for f in sorted(run.iterdir())
            if f.name.startswith("w")]
    if GEMM.is_file():
        urls.insert(0, "s3://profiles/logs/plugins/profile/run/gpu.xplane.pb.gz")
    got = jd.summarize(urls, client=client, format="json", storage_options=options)
    assert figures(got) == figures(cli_json(jaxprof_bin, ["summary", *host_files(logdir)]))
    assert got["hosts"][0] == "gpu" or not GEMM.is_file()
    # A damaged object: skipped and named with keep_going (files named: no cached listing).
    s3.put_object(Bucket="profiles", Key="logs/plugins/profile/run/zz.xplane.pb",
                  Body=CPU.read_bytes()[:1000])
    good = "s3://profiles/logs/plugins/profile/run/w0.xplane.pb"
    bad = "s3://profiles/logs/plugins/profile/run/zz.xplane.pb"
    skipped = []
    assert jd.summarize([good, bad], client=client, format="json", storage_options=options,
                        keep_going=True, skipped=skipped) == \
        jd.summarize([good], client=client, format="json", storage_options=options)
    assert [s[:2] for s in skipped] == [("zz", bad)]
    s3.delete_object(Bucket="profiles", Key="logs/plugins/profile/run/zz.xplane.pb")
    # A damaged partial file is named by its URL, skipped or not.
    s3.put_object(Bucket="profiles", Key="parts/bad.partial", Body=b"not a partial file")
    bad = "s3://profiles/parts/bad.partial"
    from jaxprof.errors import ProfileError
    with pytest.raises(ProfileError, match=re.escape(bad)):
        jd.summarize([good, bad], client=client, format="json", storage_options=options)
    skipped = []
    jd.summarize([good, bad], client=client, format="json", storage_options=options,
                 keep_going=True, skipped=skipped)
    assert [s[1] for s in skipped] == [bad] and bad in skipped[0][2]

    # The command line, with the cluster's scheduler.
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, "-m", "jaxprof.distributed", *urls, "--format", "json",
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


def test_command_line_output_rules(jaxprof_bin, client, logdir, tmp_path):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    files = host_files(logdir)
    base = [sys.executable, "-m", "jaxprof.distributed", *files, "--quiet"]
    # summary has no CSV (as `jaxprof summary`): refused before any work, naming the option.
    proc = subprocess.run(base + ["--format", "csv"], capture_output=True, env=env, timeout=120)
    assert proc.returncode == 2 and b"--format" in proc.stderr
    from jaxprof.errors import InvalidOptionError
    with pytest.raises(InvalidOptionError, match="format='csv'"):
        jd.summarize(files, client=client, format="csv")
    # hosts: the CLI's table (units in the headers); -o says what it wrote.
    out = tmp_path / "merged.partial"
    proc = subprocess.run(base + ["--command", "hosts", "--scheduler", client.scheduler.address,
                                  "-o", str(out)], capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    assert out.is_file()
    assert f"jaxprof-dask: wrote {out} (".encode() in proc.stderr
    text = proc.stdout.decode()
    assert "median step (" in text and text == oc.run_cli(
        jaxprof_bin, ["hosts", str(out)]).stdout.decode()
