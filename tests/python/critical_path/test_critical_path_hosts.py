"""critical-path over several hosts: a bench/make_hosts.py set (each host the bundled 8-device
capture, one planted host 1.5x slower, collectives ending together on every host). The hosts'
annotations of one step are one step; its path adds up to the step time and runs through the
planted slow host, which holds the others at every collective. (What host=NAME:median predicts
for such a set is not checked: docs/critical-path.md, Not covered yet.)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ops_check as oc

ROOT = Path(__file__).resolve().parents[3]
TOOLS = oc.SHARED_TOOLS / "scale_xplane.py"


@pytest.mark.skipif(not TOOLS.exists(), reason="make_hosts.py needs ../shared/tools/scale_xplane.py")
def test_path_runs_through_the_planted_slow_host(jaxprof_bin, tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_hosts.py"), str(tmp_path),
                    "--hosts", "4", "--host-mb", "0.3", "--slow", "1", "--jaxprof",
                    str(jaxprof_bin)], check=True, capture_output=True, timeout=300)
    slow = (tmp_path / "planted.txt").read_text().split()[0]
    out = subprocess.run([str(jaxprof_bin), "critical-path", str(tmp_path), "--format", "json"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    data = json.loads(out)
    assert len(data["steps"]) == 4  # each step marked by 4 hosts, one step each
    for s in data["steps"]:
        assert sum(p["duration_ps"] for p in s["path"]) == round(s["step_ns"] * 1000)
        assert all(op["slack_ns"] >= 0 for op in s["ops"])
        on_path = {}
        for p in s["path"]:
            on_path[p["host"]] = on_path.get(p["host"], 0) + p["duration_ps"]
        assert max(on_path, key=on_path.get) == slow, on_path


def _make(tmp: Path, binary, slow: int) -> Path:
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_hosts.py"), str(tmp), "--hosts", "4",
                    "--host-mb", "0.3", "--slow", str(slow), "--marks-follow-devices",
                    "--jaxprof", str(binary)], check=True, capture_output=True, timeout=300)
    return tmp


@pytest.mark.skipif(not TOOLS.exists(), reason="make_hosts.py needs ../shared/tools/scale_xplane.py")
def test_slow_host_at_the_median(jaxprof_bin, tmp_path: Path) -> None:
    """host=NAME:median on a set whose hosts wait for their devices (step marks without drift),
    against the same set made without the slow host: the prediction moves toward it, never past
    it. How far it gets is in docs/critical-path.md (the host's start in the step and the
    collectives' transfers stay as measured)."""
    slow_set = _make(tmp_path / "slow", jaxprof_bin, 1)
    truth_set = _make(tmp_path / "even", jaxprof_bin, 0)
    slow = (slow_set / "planted.txt").read_text().split()[0]

    def run(path, *extra):
        out = subprocess.run([str(jaxprof_bin), "critical-path", str(path), "--format", "json",
                              *extra], check=True, capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout)

    with_slow = run(slow_set, "--what-if", f"host={slow}:median")
    even = run(truth_set)
    [change] = with_slow["what_if"]
    measured, predicted = change["measured_step_ns"], change["predicted_step_ns"]
    truth = sum(s["step_ns"] for s in even["steps"] if not s["warmup"]) / sum(
        1 for s in even["steps"] if not s["warmup"])
    assert truth < measured
    assert truth <= predicted < measured, (truth, predicted, measured)
