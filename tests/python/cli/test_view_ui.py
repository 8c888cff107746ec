"""`jaxprof view --ui tensorboard|xprof` starts that viewer on the capture's log directory (the
one above plugins/profile/<session>/): `tensorboard --logdir LOGDIR --port 6006`, `xprof server
--logdir LOGDIR --port 8791` (xprof 2.x's CLI); --print-command prints that command line;
without the command on PATH it says how to install it and exits 2. `jaxprof.view(ui=...)` runs
the same command line (from the same C++ code)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ops_check as oc

LOGDIR = oc.DATA_DIR / "jax_cpu_8dev"
SESSION = LOGDIR / "plugins" / "profile" / "session"


def run(binary, args, path_env=None):
    env = dict(os.environ)
    if path_env is not None:
        env["PATH"] = path_env
    return subprocess.run([str(binary), "view", *map(str, args)], capture_output=True,
                          env=env, timeout=60, cwd=str(oc.ROOT))


def recorder(bin_dir: Path, name: str, record: Path) -> None:
    """An executable `name` that writes the arguments it was started with to `record`."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > {record}\n")
    script.chmod(0o755)


@pytest.mark.parametrize("ui,want", [
    ("tensorboard", ["tensorboard", "--logdir", str(LOGDIR.resolve()), "--port", "6006"]),
    ("xprof", ["xprof", "server", "--logdir", str(LOGDIR.resolve()), "--port", "8791"])])
def test_print_command(jaxprof_bin, ui, want):
    oc.require_profile(LOGDIR)
    for path in (LOGDIR, SESSION, SESSION / "vm.xplane.pb"):
        proc = run(jaxprof_bin, [path, "--ui", ui, "--print-command"])
        assert proc.returncode == 0, proc.stderr.decode()
        assert proc.stdout.decode().split() == want
    proc = run(jaxprof_bin, [LOGDIR, "--ui", ui, "--print-command", "--port", "7000"])
    assert proc.stdout.decode().split() == want[:-1] + ["7000"]


@pytest.mark.parametrize("ui,install", [("tensorboard", "pip install tensorboard xprof"),
                                        ("xprof", "pip install xprof")])
def test_not_installed_says_how_to_install(jaxprof_bin, tmp_path, ui, install):
    oc.require_profile(LOGDIR)
    (tmp_path / "empty").mkdir()
    proc = run(jaxprof_bin, [LOGDIR, "--ui", ui], path_env=str(tmp_path / "empty"))
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert f"{ui} is not installed (no `{ui}` on PATH)" in err and install in err
    assert "--ui perfetto" in err


@pytest.mark.parametrize("ui", ["tensorboard", "xprof"])
def test_starts_the_command_it_prints(jaxprof_bin, tmp_path, ui):
    oc.require_profile(LOGDIR)
    record = tmp_path / "args.txt"
    recorder(tmp_path / "bin", ui, record)
    printed = run(jaxprof_bin, [LOGDIR, "--ui", ui, "--print-command"]).stdout.decode().split()
    proc = run(jaxprof_bin, [LOGDIR, "--ui", ui], path_env=str(tmp_path / "bin"))
    assert proc.returncode == 0, proc.stderr.decode()
    assert record.read_text().split("\n")[:-1] == printed[1:]
    assert f"starting {ui} on {LOGDIR.resolve()}" in proc.stdout.decode()


def test_bad_input_exits_2(jaxprof_bin, tmp_path):
    oc.require_profile(LOGDIR)
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copy(SESSION / "vm.xplane.pb", loose / "vm.xplane.pb")
    proc = run(jaxprof_bin, [loose, "--ui", "xprof", "--print-command"])
    assert proc.returncode == 2 and "is not in the layout xprof reads" in proc.stderr.decode()
    proc = run(jaxprof_bin, [LOGDIR, "--print-command"])
    assert proc.returncode == 2 and "--print-command goes with" in proc.stderr.decode()
    proc = run(jaxprof_bin, [LOGDIR, "--ui", "chrome"])
    assert proc.returncode == 2


def test_python_view_ui(jaxprof_bin, tmp_path, monkeypatch, capsys):
    oc.require_profile(LOGDIR)
    jaxprof = pytest.importorskip("jaxprof")
    for ui in ("tensorboard", "xprof"):
        v = jaxprof.view(LOGDIR, ui=ui, print_command=True)
        cli = run(jaxprof_bin, [LOGDIR, "--ui", ui, "--print-command"]).stdout.decode().split()
        assert v.command == cli and v.process is None
        assert capsys.readouterr().out.split() == cli
    assert jaxprof.view(LOGDIR, ui="xprof", print_command=True, port=7000,
                        quiet=True).command[-1] == "7000"
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RuntimeError, match="pip install xprof"):
        jaxprof.view(LOGDIR, ui="xprof")
    record = tmp_path / "args.txt"
    recorder(tmp_path / "bin", "tensorboard", record)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with jaxprof.view(LOGDIR, ui="tensorboard", quiet=True) as v:
        assert v.wait(30) == 0
    assert record.read_text().split("\n")[:-1] == v.command[1:]
    with pytest.raises(ValueError):
        jaxprof.view(LOGDIR, ui="chrome")
