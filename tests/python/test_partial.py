"""Partial summaries (docs/multihost.md): a set of partials gives exactly the JSON of the same
hosts' profiles, whatever the grouping and order in which the partials were written and merged,
and the same as the Python API's one profile of all hosts (read together, not host by host)."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import ops_check as oc

# Host name -> profile: a run directory mixing GPU, TPU and CPU-backend hosts, a TPU host twice
# under two names, and the project's own 8-device CPU capture under two names.
HOSTS = {
    "alpha": oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb",
    "beta": oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb",
    "delta": oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb",
    "gamma": oc.XPLANE_FIXTURES / "tf_v100_8gpu_training.xplane.pb",
}
CPU = oc.DATA_DIR / "jax_cpu_8dev" / "plugins" / "profile" / "session" / "vm.xplane.pb"

COMMANDS = [
    ["summary"],
    ["summary", "--top", "50", "--observations", "10"],
    ["ops"],
    ["ops", "--group-by", "kernel"],
    ["ops", "--group-by", "name", "--prefix", "f"],
    ["ops", "--group-by", "module"],
    ["ops", "--group-by", "category"],
    ["ops", "--group-by", "opcode", "--device", "TPU"],
    ["ops", "--match", "fusion|convolution", "--top", "3"],
    ["timeline"],
    ["modules"],
    ["modules", "--top-ops", "0"],
    ["collectives", "--instances"],
    ["compile"],
    ["compile", "--passes-only", "--top-steps", "3"],
]


def cli(binary, args, ok=True):
    proc = oc.run_cli(binary, args, timeout=300)
    if ok:
        assert proc.returncode == 0, (args, proc.stderr.decode(errors="replace")[-3000:])
    return proc


def cli_json(binary, args):
    return json.loads(cli(binary, args + ["--format", "json"]).stdout)


def make_run(root, hosts):
    run = root / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    for host, target in hosts.items():
        (run / f"{host}.xplane.pb").symlink_to(target)
    return run


@pytest.fixture()
def mixed_run(tmp_path):
    for target in list(HOSTS.values()) + [CPU]:
        if not target.is_file():
            pytest.skip(f"fixture {target} not found")
    return make_run(tmp_path / "mixed", HOSTS)


@pytest.fixture()
def cpu_run(tmp_path):
    if not CPU.is_file():
        pytest.skip(f"fixture {CPU} not found")
    # Two hosts of the CPU backend: their devices are the host threads' device ordinals.
    return make_run(tmp_path / "cpu", {"w0": CPU, "w1": CPU, "w2": CPU})


def write_partials(binary, run, out_dir):
    out_dir.mkdir()
    cli(binary, ["partial", str(run), "-o", str(out_dir) + "/"])
    return sorted(out_dir.glob("*.partial"))


@pytest.mark.parametrize("which", ["mixed", "cpu"])
def test_partials_equal_profiles(jaxprof_bin, tmp_path, request, which):
    run = request.getfixturevalue(f"{which}_run")
    per_host = write_partials(jaxprof_bin, run, tmp_path / "per_host")
    assert len(per_host) == len(list(run.glob("*.xplane.pb")))
    one = tmp_path / "all.partial.gz"
    cli(jaxprof_bin, ["partial", str(run), "-o", str(one)])
    # Merged in another grouping and order: the last host first, then the rest.
    first = tmp_path / "first.partial"
    cli(jaxprof_bin, ["partial", str(per_host[-1]), "-o", str(first)])
    rest = tmp_path / "rest.partial"
    cli(jaxprof_bin, ["partial"] + [str(p) for p in reversed(per_host[:-1])] + ["-o", str(rest)])
    for command in COMMANDS:
        want = cli_json(jaxprof_bin, command + [str(run)])
        assert cli_json(jaxprof_bin, command + [str(tmp_path / "per_host")]) == want, command
        assert cli_json(jaxprof_bin, command + [str(one)]) == want, command
        assert cli_json(jaxprof_bin, command + [str(rest), str(first)]) == want, command
        # Host by host on one thread, or all at once: the same.
        assert cli_json(jaxprof_bin, command + [str(run), "--threads", "1"]) == want, command


def test_diff_and_check_from_partials(jaxprof_bin, cpu_run, tmp_path):
    parts = tmp_path / "cpu.partial"
    cli(jaxprof_bin, ["partial", str(cpu_run), "-o", str(parts)])
    want = cli_json(jaxprof_bin, ["diff", str(cpu_run), str(cpu_run)])
    assert cli_json(jaxprof_bin, ["diff", str(parts), str(cpu_run)]) == want
    want = cli_json(jaxprof_bin, ["check", str(cpu_run), str(cpu_run), "--metric", "module:jit_train_step"])
    got = cli_json(jaxprof_bin, ["check", str(parts), str(parts), "--metric", "module:jit_train_step"])
    assert got == want


def test_bad_partials(jaxprof_bin, tmp_path, cpu_run):
    junk = tmp_path / "junk.partial"
    junk.write_bytes(b"\x0a\x03abc")
    proc = cli(jaxprof_bin, ["summary", str(junk)], ok=False)
    assert proc.returncode == 2
    assert b"junk.partial" in proc.stderr and b"not a jaxprof partial" in proc.stderr
    good = tmp_path / "good.partial"
    cli(jaxprof_bin, ["partial", str(cpu_run), "-o", str(good)])
    data = good.read_bytes()
    cut = tmp_path / "cut.partial"
    cut.write_bytes(data[: len(data) // 2])
    proc = cli(jaxprof_bin, ["summary", str(cut)], ok=False)
    assert proc.returncode == 2, proc.stderr
    assert b"cut.partial" in proc.stderr
    # The same host twice is refused, named.
    proc = cli(jaxprof_bin, ["summary", str(good), str(good)], ok=False)
    assert proc.returncode == 2 and b"given twice" in proc.stderr
    # Commands that read events refuse partials with a message.
    proc = cli(jaxprof_bin, ["flame", str(good)], ok=False)
    assert proc.returncode == 2 and b"partial" in proc.stderr
    proc = cli(jaxprof_bin, ["ops", str(good), "--min-duration", "5"], ok=False)
    assert proc.returncode == 2 and b"--min-duration" in proc.stderr


def test_keep_going_skips_a_damaged_host(jaxprof_bin, tmp_path):
    if not CPU.is_file():
        pytest.skip("no CPU capture")
    run = make_run(tmp_path / "logs", {"w0": CPU, "w1": CPU})
    data = CPU.read_bytes()
    (run / "w2.xplane.pb").write_bytes(data[: len(data) // 3])
    proc = cli(jaxprof_bin, ["summary", str(run), "--format", "json"], ok=False)
    assert proc.returncode == 2 and b"w2.xplane.pb" in proc.stderr
    proc = cli(jaxprof_bin, ["summary", str(run), "--format", "json", "--keep-going"])
    assert b"skipped host w2" in proc.stderr and b"read 2 hosts, skipped 1" in proc.stderr
    got = json.loads(proc.stdout)
    assert got["hosts"] == ["w0", "w1"]
    good = make_run(tmp_path / "good", {"w0": CPU, "w1": CPU})
    assert got == cli_json(jaxprof_bin, ["summary", str(good)])
