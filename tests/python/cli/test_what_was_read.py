"""Every command says which session and host files it read (stderr under tables, "input" in
JSON), and files that are not the hosts of one capture are refused with what was found and how
to pick (--session, or the files named one by one)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import ops_check as oc

MATMUL = oc.DATA_DIR / "jax_cpu_matmul" / "plugins" / "profile" / "session" / "vm.xplane.pb"
EIGHT = oc.DATA_DIR / "jax_cpu_8dev" / "plugins" / "profile" / "session" / "vm.xplane.pb"
COMMANDS = ["summary", "ops", "modules", "timeline", "kernels", "collectives", "compile", "info",
            "flame"]


def two_sessions(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    for session, source in (("2025_01_01_10_00_00", EIGHT), ("2025_01_02_10_00_00", MATMUL)):
        d = logs / "plugins" / "profile" / session
        d.mkdir(parents=True)
        shutil.copy(oc.require_profile(source), d / "vm.xplane.pb")
    return logs


def test_the_session_read_is_said(jaxprof_bin, tmp_path):
    logs = two_sessions(tmp_path)
    for command in COMMANDS:
        proc = oc.run_cli(jaxprof_bin, [command, str(logs)])
        assert proc.returncode == 0, (command, proc.stderr)
        err = proc.stderr.decode()
        assert ("read session 2025_01_02_10_00_00 (newest of 2 in " in err
                and "--session picks another" in err), (command, err)
        proc = oc.run_cli(jaxprof_bin, [command, str(logs), "--format", "json"])
        data = json.loads(proc.stdout)
        read = data["input"]
        assert read["layout"] == "log-dir" and read["newest_by_default"], command
        assert read["session"] == "2025_01_02_10_00_00"
        assert read["sessions"] == ["2025_01_01_10_00_00", "2025_01_02_10_00_00"]
        assert [h["host"] for h in read["hosts"]] == ["vm"]
        assert read["hosts"][0]["path"].endswith("2025_01_02_10_00_00/vm.xplane.pb")
    picked = json.loads(oc.run_cli(jaxprof_bin, ["ops", str(logs), "--session",
                                                 "2025_01_01_10_00_00", "--format",
                                                 "json"]).stdout)
    assert picked["input"]["session"] == "2025_01_01_10_00_00"
    assert not picked["input"]["newest_by_default"]
    assert len(picked["devices"]) == 8  # the 8-device capture, not the newest


def test_diff_says_both_sides(jaxprof_bin):
    proc = oc.run_cli(jaxprof_bin, ["diff", str(oc.require_profile(MATMUL)), str(MATMUL),
                                    "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    read = json.loads(proc.stdout)["input"]
    assert [r["hosts"][0]["path"] for r in read] == [str(MATMUL), str(MATMUL)]


def test_unrelated_profiles_in_one_folder_are_refused(jaxprof_bin):
    folder = oc.require_profile(oc.XPLANE_FIXTURES)
    for command in (["summary"], ["collectives"], ["ops"]):
        proc = oc.run_cli(jaxprof_bin, [*command, str(folder)])
        assert proc.returncode == 2, proc.stdout
        err = proc.stderr.decode()
        assert err.count("\n") == 1
        assert "not the hosts of one capture" in err
        assert "captured on machine tw003" in err  # three mi300x captures of one machine
        assert "holds GPUs" in err and "TPUs" in err
        for f in ("mi300x_jax_gemm.xplane.pb", "tpu_4chip_inference.xplane.pb"):
            assert f in err
        assert "name the files of one capture as several paths" in err
        assert "straggler" not in proc.stdout.decode()


def test_subfolders_that_are_not_sessions_are_refused(jaxprof_bin, tmp_path):
    for name, source in (("run_a", EIGHT), ("run_b", MATMUL)):
        (tmp_path / name).mkdir()
        shutil.copy(oc.require_profile(source), tmp_path / name / "vm.xplane.pb")
    proc = oc.run_cli(jaxprof_bin, ["ops", str(tmp_path)])
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "neither a run directory nor a log directory" in err
    assert "run_a (1 file), run_b (1 file)" in err and "--session" in err
    # Picking one is the user's call.
    proc = oc.run_cli(jaxprof_bin, ["ops", str(tmp_path), "--session", "run_a", "--format",
                                    "json"])
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["devices"]) == 8
    proc = oc.run_cli(jaxprof_bin, ["ops", str(tmp_path / "run_b")])
    assert proc.returncode == 0 and "read session run_b" in proc.stderr.decode()


def test_files_named_one_by_one_load_with_a_warning(jaxprof_bin):
    gemm = oc.require_profile(oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb")
    conv = oc.require_profile(oc.XPLANE_FIXTURES / "mi300x_jax_conv.xplane.pb")
    proc = oc.run_cli(jaxprof_bin, ["ops", str(gemm), str(conv)])
    assert proc.returncode == 0
    err = proc.stderr.decode()
    assert "may not be hosts of one capture" in err
    assert "read 2 hosts" in err


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_single_file_names_the_file(jaxprof_bin, fmt):
    proc = oc.run_cli(jaxprof_bin, ["ops", str(oc.require_profile(MATMUL)), "--format", fmt])
    assert proc.returncode == 0
    assert proc.stderr.decode().splitlines()[0] == f"jaxprof: read {MATMUL}"
