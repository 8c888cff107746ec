"""The command-line output rules (docs/cli.md "Output"): formats honoured or refused, one number
format, a default --top on terminals, files written announced, flame without idle by default,
devices in natural order."""
from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest

import ops_check
import xspace_builder as xb

EXAMPLE = ops_check.DATA_DIR / "jax_cpu_8dev"
MATMUL = ops_check.DATA_DIR / "jax_cpu_matmul.xplane.pb.gz"

# Every command that prints results, and the formats its --help must list (exactly).
FORMATS = {
    "summary": ["table", "json"],
    "info": ["table", "json", "csv"],
    "ops": ["table", "json", "csv"],
    "modules": ["table", "json", "csv"],
    "timeline": ["table", "json", "csv"],
    "compile": ["table", "json", "csv"],
    "flame": ["table", "json", "csv"],
    "collectives": ["table", "json", "csv"],
    "kernels": ["table", "json", "csv"],
    "autotune-report": ["table", "json", "csv"],
    "roofline": ["table", "json", "csv"],
    "hosts": ["table", "json", "csv"],
    "critical-path": ["table", "json", "csv"],
}
NO_FORMAT = ["report", "export", "view", "partial"]  # they write a file


def run(binary: Path, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def run_on_terminal(binary: Path, *args, columns: int = 200) -> Tuple[int, str]:
    """Runs with stdout on a pseudo-terminal of `columns` columns; returns (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdout and stderr are the terminal
        try:
            import fcntl
            import struct
            import termios
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
            env = {**os.environ, "COLUMNS": str(columns)}
            os.execve(str(binary), [str(binary), *map(str, args)], env)
        except BaseException:
            os._exit(127)
    chunks: List[bytes] = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode().replace("\r\n", "\n")


def help_formats(binary: Path, command: str) -> List[str]:
    text = run(binary, command, "--help").stdout
    m = re.search(r"--format\s+\S*\s+Output format: ([a-z, ]+)", text)
    return [f.strip() for f in m.group(1).split(",")] if m else []


@pytest.mark.parametrize("command", sorted(FORMATS))
def test_help_lists_exactly_the_formats_that_work(jaxprof_bin, command):
    assert help_formats(jaxprof_bin, command) == FORMATS[command]
    for fmt in FORMATS[command]:
        r = run(jaxprof_bin, command, EXAMPLE, "--format", fmt)
        assert r.returncode == 0, (command, fmt, r.stderr)
        if fmt == "json":
            json.loads(r.stdout)
        if fmt == "csv":
            assert "," in r.stdout.splitlines()[0] and not r.stdout.lstrip().startswith("{")
        if fmt == "table":
            assert not r.stdout.lstrip().startswith("{")


@pytest.mark.parametrize("command,fmt", [("summary", "csv"), ("report", "json"),
                                         ("export", "csv"), ("view", "json"), ("ops", "xml")])
def test_a_format_a_command_cannot_write_is_refused(jaxprof_bin, tmp_path, command, fmt):
    extra = ["--perfetto", tmp_path / "t.json"] if command == "export" else []
    r = run(jaxprof_bin, command, EXAMPLE, *extra, "--format", fmt, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "--format" in r.stderr
    assert not list(tmp_path.iterdir()), "nothing is written when the command line is refused"


@pytest.mark.parametrize("command", NO_FORMAT)
def test_commands_that_write_a_file_offer_no_format(jaxprof_bin, command):
    assert "--format" not in run(jaxprof_bin, command, "--help").stdout


def table_outputs(binary: Path, shared: Path) -> List[str]:
    profiles = [EXAMPLE, shared / "xplane" / "tpu_4chip_inference.xplane.pb",
                shared / "xplane" / "tf_v100_8gpu_training.xplane.pb",
                shared / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip"]
    out = []
    for p in profiles:
        if not p.exists():
            continue
        for command in ("summary", "ops", "kernels", "collectives", "timeline", "modules",
                        "compile", "flame", "roofline", "hosts"):
            r = run(binary, command, p)
            assert r.returncode == 0, (command, p, r.stderr)
            out.append(r.stdout)
    return out


def test_one_number_format_in_every_table(jaxprof_bin, shared_fixtures):
    text = "\n".join(table_outputs(jaxprof_bin, shared_fixtures))
    text = text.replace("GB/s = 1e9 bytes/s", "")  # the bandwidth convention's own words
    assert not re.search(r"(?<![\w.])\d+(\.\d+)?[eE][-+]?\d+(?!\w)", text), "no exponents"
    assert not re.search(r"(?<![\d.])0(\.0+)? ?(ps|ns|us|ms|s|B|KiB|MiB|GiB|GB/s)\b", text), \
        "zero reads 0, without a unit"
    assert not re.search(r"(?<![\d.])0\.0%", text), "a zero share reads 0"
    # Units are named once, in the header of each measured column.
    assert re.search(r"total \((ns|us|ms|s)\)", text)
    assert re.search(r"size \((B|KiB|MiB|GiB)\)", text)
    assert re.search(r"busbw \((B/s|KB/s|MB/s|GB/s|TB/s)\)", text)


def test_column_units_and_unknowns(jaxprof_bin, shared_fixtures):
    # The TPU profile's all-reduce moves 5 GiB: one way to write it in tables and in the summary.
    tpu = shared_fixtures / "xplane" / "tpu_4chip_inference.xplane.pb"
    coll = run(jaxprof_bin, "collectives", tpu).stdout
    assert "size (GiB)" in coll and "5.00" in coll
    data = json.loads(run(jaxprof_bin, "collectives", tpu, "--format", "json").stdout)
    assert data["ops"][0]["message_bytes"] == 5368709120
    # A kernel without launch details (nsys-jax archives) shows unknown, never 0.
    archive = shared_fixtures / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip"
    kernels = run(jaxprof_bin, "kernels", archive, "--top", "3").stdout
    row = kernels.splitlines()[3]
    assert "\u2014" in row, kernels
    k = json.loads(run(jaxprof_bin, "kernels", archive, "--format", "json", "--top", "1").stdout)
    assert k["kernels"][0]["configs"][0]["occupancy_pct"] is None


def test_default_top_on_a_terminal(jaxprof_bin, shared_fixtures):
    archive = shared_fixtures / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip"
    piped = run(jaxprof_bin, "ops", archive).stdout
    code, tty = run_on_terminal(jaxprof_bin, "ops", archive, columns=200)
    assert code == 0, tty
    total = len(json.loads(run(jaxprof_bin, "ops", archive, "--format", "json").stdout)
                ["devices"][0]["groups"])
    assert total > 1000
    assert f"20 of {total} hlo-op groups shown; --top 0 shows all" in tty
    assert len(tty.splitlines()) < 40
    # The table's lines are fitted to the terminal (docs/cli.md); stderr's notes ("jaxprof:
    # read ...", "jaxprof: set apart ...": the archive's autotuning and warm-up) share the
    # pseudo-terminal here and are prose, not table rows.
    assert "jaxprof: set apart from the steady state: autotuning" in tty
    table = [line for line in tty.splitlines() if not line.startswith("jaxprof: ")]
    assert all(len(line) <= 200 for line in table), "lines fit the terminal"
    assert max(len(line) for line in piped.splitlines()) > 200
    # Piped output, JSON and CSV stay complete; --top given on a terminal is obeyed.
    assert len(piped.splitlines()) > total
    assert len(run(jaxprof_bin, "ops", archive, "--format", "csv").stdout.splitlines()) == total + 1
    code, tty5 = run_on_terminal(jaxprof_bin, "ops", archive, "--top", "5")
    assert f"5 of {total} hlo-op groups shown" in tty5
    code, all_rows = run_on_terminal(jaxprof_bin, "ops", archive, "--top", "0", "--wide")
    assert len(all_rows.splitlines()) > total and "shown;" not in all_rows
    for command in ("kernels", "compile", "roofline"):
        code, out = run_on_terminal(jaxprof_bin, command, archive)
        assert code == 0 and " shown; --top 0 shows all" in out, (command, out)
        assert len(out.splitlines()) < 120, command


def test_wide_keeps_full_names(jaxprof_bin, shared_fixtures):
    v100 = shared_fixtures / "xplane" / "tf_v100_8gpu_training.xplane.pb"
    names = [k["name"] for k in json.loads(
        run(jaxprof_bin, "kernels", v100, "--format", "json").stdout)["kernels"]]
    long = [n for n in names if len(n) > 60]
    assert long
    cut = run(jaxprof_bin, "kernels", v100).stdout
    wide = run(jaxprof_bin, "kernels", v100, "--wide").stdout
    assert all(n in wide for n in long)
    assert not any(n in cut for n in long)
    # Cut names still tell the kernels apart.
    rows = [line[:60] for line in cut.splitlines()[3:3 + len(names)]]
    assert len(set(rows)) == len(rows), rows


def test_every_written_file_is_announced(jaxprof_bin, tmp_path):
    cases = [
        (["flame", EXAMPLE, "-o", tmp_path / "f.svg"], tmp_path / "f.svg"),
        (["flame", EXAMPLE, "--folded", tmp_path / "f.txt"], tmp_path / "f.txt"),
        (["flame", EXAMPLE, "--speedscope", tmp_path / "f.json"], tmp_path / "f.json"),
        (["report", EXAMPLE, "-o", tmp_path / "r.html"], tmp_path / "r.html"),
        (["export", EXAMPLE, "--perfetto", tmp_path / "t.json.gz"], tmp_path / "t.json.gz"),
        (["diff", MATMUL, MATMUL, "-o", tmp_path / "d.html"], tmp_path / "d.html"),
        (["roofline", MATMUL, "--svg", tmp_path / "r.svg"], tmp_path / "r.svg"),
        (["partial", EXAMPLE, "-o", tmp_path / "e.partial"], tmp_path / "e.partial"),
        (["partial", EXAMPLE, "-o", f"{tmp_path / 'per_host'}/"],
         tmp_path / "per_host" / "vm.partial"),
    ]
    for args, path in cases:
        r = run(jaxprof_bin, *args)
        assert r.returncode == 0, (args, r.stderr)
        assert path.is_file()
        assert f"jaxprof: wrote {path} (" in r.stderr, (args, r.stderr)
        assert str(path) not in r.stdout, "stdout keeps only results"


def test_flame_leaves_idle_out_unless_asked(jaxprof_bin):
    plain = json.loads(run(jaxprof_bin, "flame", EXAMPLE, "--format", "json").stdout)
    idle = json.loads(run(jaxprof_bin, "flame", EXAMPLE, "--idle", "--format", "json").stdout)

    def idle_ns(tree):
        total = 0
        stack = [tree]
        while stack:
            n = stack.pop()
            total += n["total_ns"] if n["kind"] == "idle" else 0
            stack.extend(n.get("children", []))
        return total

    def frame_ns(tree, name):
        total = 0
        stack = [tree]
        while stack:
            n = stack.pop()
            total += n["total_ns"] if n["name"] == name else 0
            stack.extend(n.get("children", []))
        return total

    assert idle_ns(plain["tree"]) == 0
    # --idle adds the idle frames and nothing else: busy + idle = span.
    assert idle_ns(idle["tree"]) > 0
    assert plain["tree"]["total_ns"] + idle_ns(idle["tree"]) == idle["tree"]["total_ns"]
    # Idle is most of the span once warm-up and compile time are counted (the reason it is off
    # by default, docs/flame.md). The steady state has the same span here (train_step, compiled
    # before the trace, runs steady from step 0), but global_sse's compile inside it is one
    # "[set apart]" frame, not idle.
    whole = json.loads(run(jaxprof_bin, "flame", EXAMPLE, "--idle", "--include-warmup",
                           "--format", "json").stdout)
    assert idle_ns(whole["tree"]) > 0.5 * whole["tree"]["total_ns"]
    assert idle["tree"]["total_ns"] == whole["tree"]["total_ns"]
    set_apart = frame_ns(idle["tree"], "[set apart]")
    assert set_apart > 0 and frame_ns(whole["tree"], "[set apart]") == 0
    assert idle_ns(idle["tree"]) - set_apart < 0.5 * idle_ns(whole["tree"])
    assert "[idle" not in run(jaxprof_bin, "flame", EXAMPLE).stdout
    assert run(jaxprof_bin, "flame", EXAMPLE, "--no-idle").returncode == 0  # still accepted


def shuffled_gpus(path: Path, order=(7, 1, 10, 6, 0, 2)) -> List[str]:
    space = xb.SpaceBuilder()
    for i in order:
        gpu = space.plane(f"/device:GPU:{i}")
        k = gpu.event_md(f"kernel_{i}", stats={"hlo_module": "jit_f"})
        line = gpu.line(7, "Stream #7(Kernel)", timestamp_ns=1000)
        gpu.event(line, k, offset_ps=1000 * i, duration_ps=5000, stats={"hlo_op": xb.Ref("f.1")})
    space.write(path)
    return [f"/device:GPU:{i}" for i in sorted(order)]


def test_devices_in_natural_order(jaxprof_bin, tmp_path):
    path = tmp_path / "gpus.xplane.pb"
    want = shuffled_gpus(path)
    ops = json.loads(run(jaxprof_bin, "ops", path, "--format", "json").stdout)
    assert [d["device"] for d in ops["devices"]] == want
    timeline = json.loads(run(jaxprof_bin, "timeline", path, "--format", "json").stdout)
    assert [d["device"] for d in timeline["devices"]] == want
    kernels = json.loads(run(jaxprof_bin, "kernels", path, "--format", "json").stdout)
    assert kernels["devices"] == want
    flame = json.loads(run(jaxprof_bin, "flame", path, "--format", "json").stdout)
    assert [d["name"] for d in flame["tree"]["children"]] == want
    table = run(jaxprof_bin, "ops", path).stdout
    assert [l.split()[0] for l in table.splitlines() if l.startswith("/device")] == want
