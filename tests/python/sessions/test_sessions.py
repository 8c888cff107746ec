"""`jaxprof sessions LOGDIR` lists the sessions of a log directory newest first with their hosts,
file sizes and times (as os.stat gives them), in table, JSON and CSV; `--extract DIR` copies a
session's raw files out byte for byte; bad input exits 2 with a message. `jaxprof.sessions()` is
the same listing, and XAX's view_profile lists sessions through it."""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest

import ops_check as oc

BUNDLED = oc.DATA_DIR / "jax_cpu_8dev" / "plugins" / "profile" / "session"


def make_logdir(root: Path) -> Path:
    """Two JAX sessions (the newer one with two hosts and an HLO dump), one in XAX's layout,
    and a folder without profile files."""
    log = root / "logs"
    old = log / "plugins" / "profile" / "2026_01_01_10_00_00"
    new = log / "plugins" / "profile" / "2026_01_02_10_00_00"
    xax = log / "train_step_3" / "plugins" / "profile" / "2026_01_01_12_00_00"
    for d in (old, new, xax, log / "notes"):
        d.mkdir(parents=True)
    shutil.copy(BUNDLED / "vm.xplane.pb", old / "vm.xplane.pb")
    shutil.copy(BUNDLED / "vm.xplane.pb", new / "a.xplane.pb")
    shutil.copy(BUNDLED / "vm.trace.json.gz", new / "b.trace.json.gz")
    (new / "module.hlo.pb").write_bytes(b"\0" * 123)
    shutil.copy(BUNDLED / "vm.xplane.pb", xax / "host0.xplane.pb")
    (log / "notes" / "readme.txt").write_text("no profile here")
    times = {old: 1_700_000_000, xax: 1_700_100_000, new: 1_700_200_000}
    for d, t in times.items():
        for i, f in enumerate(sorted(d.iterdir())):
            os.utime(f, (t + i, t + i))
    return log


def cli(binary, *args):
    return oc.run_cli(binary, ["sessions", *map(str, args)])


def test_lists_sessions_newest_first_with_hosts_sizes_and_times(jaxprof_bin, tmp_path):
    oc.require_profile(BUNDLED)
    log = make_logdir(tmp_path)
    proc = cli(jaxprof_bin, log, "--format", "json")
    assert proc.returncode == 0, proc.stderr.decode()
    got = json.loads(proc.stdout)["sessions"]
    assert [s["name"] for s in got] == [
        "plugins/profile/2026_01_02_10_00_00",
        "train_step_3/plugins/profile/2026_01_01_12_00_00",
        "plugins/profile/2026_01_01_10_00_00"]
    assert [s["hosts"] for s in got] == [["a", "b"], ["host0"], ["vm"]]
    assert got[1]["log_dir"] == str(log / "train_step_3")
    for s in got:
        files = sorted(Path(s["path"]).iterdir())
        assert [f["name"] for f in s["files"]] == [f.name for f in files]
        for f, p in zip(s["files"], files):
            st = p.stat()
            assert f["bytes"] == st.st_size and abs(f["mtime"] - st.st_mtime) < 1e-6
        assert s["bytes"] == sum(f.stat().st_size for f in files)
        assert s["mtime"] == max(f["mtime"] for f in s["files"])
    newest = got[0]
    assert {f["name"]: f["host"] for f in newest["files"]} == {
        "a.xplane.pb": "a", "b.trace.json.gz": "b", "module.hlo.pb": None}

    rows = list(csv.DictReader(io.StringIO(cli(jaxprof_bin, log, "--format", "csv")
                                            .stdout.decode())))
    assert len(rows) == 5 and rows[0]["session"] == newest["name"]
    assert int(rows[2]["bytes"]) == 123 and rows[2]["host"] == ""

    table = cli(jaxprof_bin, log).stdout.decode()
    assert "3 sessions under" in table and "newest first" in table
    assert table.index("2026_01_02_10_00_00") < table.index("2026_01_01_10_00_00")
    assert "module.hlo.pb" in table and "2 hosts" in table

    one = json.loads(cli(jaxprof_bin, log, "--session", "train_step_3", "--format", "json")
                     .stdout)["sessions"]
    assert [s["hosts"] for s in one] == [["host0"]]


def test_extract_copies_the_raw_files(jaxprof_bin, tmp_path):
    oc.require_profile(BUNDLED)
    log = make_logdir(tmp_path)
    out = tmp_path / "out"
    proc = cli(jaxprof_bin, log, "--extract", out)  # the newest
    assert proc.returncode == 0, proc.stderr.decode()
    target = out / "2026_01_02_10_00_00"
    src = log / "plugins" / "profile" / "2026_01_02_10_00_00"
    assert sorted(p.name for p in target.iterdir()) == sorted(p.name for p in src.iterdir())
    for p in src.iterdir():
        assert (target / p.name).read_bytes() == p.read_bytes()
    assert "copied session plugins/profile/2026_01_02_10_00_00 (3 files" in proc.stdout.decode()
    proc = cli(jaxprof_bin, log, "--extract", out, "--session", "2026_01_01_10_00_00")
    assert proc.returncode == 0 and (out / "2026_01_01_10_00_00" / "vm.xplane.pb").is_file()
    # The copy reads as the original.
    summary = [json.loads(oc.run_cli(jaxprof_bin, ["summary", str(d), "--format", "json"])
                          .stdout)["device"]
               for d in (log / "plugins" / "profile" / "2026_01_01_10_00_00",
                         out / "2026_01_01_10_00_00")]
    assert summary[0] == summary[1]


def test_bad_input_exits_2(jaxprof_bin, tmp_path):
    oc.require_profile(BUNDLED)
    log = make_logdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    cli(jaxprof_bin, log, "--extract", tmp_path / "out")
    for args, says in (([tmp_path / "missing"], "no such file or directory"),
                       ([tmp_path / "file"], "not a directory"),
                       ([tmp_path / "empty"], "no sessions"),
                       ([log, "--session", "nope"], "no session 'nope'; sessions: plugins/"),
                       ([log, "--session", "profile", "--extract", tmp_path / "x"],
                        "no session 'profile'"),
                       ([log, "--extract", tmp_path / "file"], "exists and is not a directory"),
                       ([log, "--extract", tmp_path / "out"], "holds files already")):
        proc = cli(jaxprof_bin, *args)
        assert proc.returncode == 2, (args, proc.stderr.decode())
        assert says in proc.stderr.decode(), (args, proc.stderr.decode())


def test_python_sessions_is_the_cli_listing(jaxprof_bin, tmp_path):
    oc.require_profile(BUNDLED)
    jaxprof = pytest.importorskip("jaxprof")
    from jaxprof.compat.xax.sessions import find_session, list_sessions

    log = make_logdir(tmp_path)
    cli_json = json.loads(cli(jaxprof_bin, log, "--format", "json").stdout)["sessions"]
    assert jaxprof.sessions(log) == cli_json
    # XAX's view_profile lists through it, oldest first.
    xax = list_sessions(log)
    assert [s.name for s in xax] == [s["name"] for s in reversed(cli_json)]
    assert [s.host_names for s in xax] == [s["hosts"] for s in reversed(cli_json)]
    assert find_session(xax, "train_step_3").path == log / "train_step_3" / "plugins" / \
        "profile" / "2026_01_01_12_00_00"
    out = jaxprof.extract_session(log, tmp_path / "py", "2026_01_01_10_00_00")
    assert (Path(out) / "vm.xplane.pb").read_bytes() == (BUNDLED / "vm.xplane.pb").read_bytes()
    with pytest.raises(jaxprof.ProfileNotFoundError):
        jaxprof.sessions(tmp_path / "missing")
