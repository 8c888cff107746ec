"""critical-path over several hosts: a bench/make_hosts.py set (each host the bundled 8-device
capture, one planted host 1.5x slower, collectives ending together on every host). The hosts'
annotations of one step are one step; its path adds up to the step time and runs through the
planted slow host, which holds the others at every collective: each step's `collectives` name it
the last to arrive, and so does the critical-path section of `report --together`; summary and
the report, which read the hosts one by one, say they have no path for them. host=NAME:median on
a set that models a synchronous job predicts the set made with that host at its normal speed
within 5%."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ops_check as oc

TOOLS = oc.SHARED_TOOLS / "scale_xplane.py"


@pytest.fixture(scope="module")
def host_set(jaxprof_bin, tmp_path_factory):
    """The set of 4 hosts with host 1 planted slow, its name, and its critical-path JSON."""
    root = oc.make_hosts(tmp_path_factory.mktemp("hosts"), jaxprof_bin, "--hosts", "4",
                         "--host-mb", "0.3", "--slow", "1", timeout=300)
    slow = (root / "planted.txt").read_text().split()[0]
    out = subprocess.run([str(jaxprof_bin), "critical-path", str(root), "--format", "json"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    return root, slow, json.loads(out)


def test_path_runs_through_the_planted_slow_host(host_set) -> None:
    _, slow, data = host_set
    assert len(data["steps"]) == 4  # each step marked by 4 hosts, one step each
    for s in data["steps"]:
        assert sum(p["duration_ps"] for p in s["path"]) == round(s["step_ns"] * 1000)
        assert all(op["slack_ns"] >= 0 for op in s["ops"])
        on_path = {}
        for p in s["path"]:
            on_path[p["host"]] = on_path.get(p["host"], 0) + p["duration_ps"]
        assert max(on_path, key=on_path.get) == slow, on_path


def test_the_slow_host_holds_every_collective(host_set) -> None:
    _, slow, data = host_set
    for s in data["steps"]:
        across = [c for c in s["collectives"] if c["hosts"] > 1]
        assert across, f"step {s['number']}: no collective across hosts"
        for c in across:
            assert c["participants"] >= c["hosts"], c
            assert c["host"] == slow, (s["number"], c)
            assert c["device"] and c["spread_ns"] > 0, c
        times = [c["arrival_ps"] for c in s["collectives"]]
        assert times == sorted(times)


def test_report_names_the_holding_host_and_summary_has_no_path(jaxprof_bin, host_set,
                                                                tmp_path: Path) -> None:
    root, slow, data = host_set
    html = tmp_path / "hosts.html"
    subprocess.run([str(jaxprof_bin), "report", str(root), "-o", str(html)], check=True,
                   capture_output=True, timeout=300)
    assert "the path across 4 hosts needs their events together" in html.read_text()
    subprocess.run([str(jaxprof_bin), "report", str(root), "--together", "-o", str(html)],
                   check=True, capture_output=True, timeout=300)
    page = html.read_text()
    table = re.search(r'<table[^>]*id="critical-path-hosts-table".*?</table>', page, re.S)
    assert table, "the report shows which host held the collectives"
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0).split("<tbody>")[1], re.S)
    # An instance that overlapping merged steps both hold counts once.
    held = len({(c["name"], c["arrival_ps"], c["device"]) for s in data["steps"]
                for c in s["collectives"] if c["hosts"] > 1})
    assert len(rows) == 1 and slow in rows[0], rows  # the slow host held them all
    assert f'data-v="{held}"' in rows[0]
    out = subprocess.run([str(jaxprof_bin), "summary", str(root), "--format", "json"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    assert "4 hosts" in json.loads(out)["critical_path"]["unavailable"]


def _make(tmp: Path, binary, hosts: int, slow: int, *extra: str) -> Path:
    return oc.make_hosts(tmp, binary, "--hosts", str(hosts), "--host-mb", "0.3", "--slow",
                         str(slow), "--model", "sync", *extra, timeout=300)


@pytest.mark.skipif(not TOOLS.exists(), reason="make_hosts.py needs ../shared/tools/scale_xplane.py")
@pytest.mark.parametrize("hosts,slow", [(4, 1), (48, 2)])
def test_slow_host_at_the_median(jaxprof_bin, tmp_path: Path, hosts: int, slow: int) -> None:
    """host=host0003:median (the slowest planted host) on a set that models a synchronous job
    (make_hosts.py --model sync: waiting only inside collectives, which end at one instant on
    every host), against the same set made with that host at its normal speed, everything else
    alike (with 48 hosts, host0042 stays 1.35x slow and holds the others in its place): the
    prediction lands within 5% of it (docs/critical-path.md, Not covered yet, has the figures:
    +3.1% with 4 hosts, +0.5% with 48 when this was written)."""
    slow_set = _make(tmp_path / "slow", jaxprof_bin, hosts, slow)
    truth_set = _make(tmp_path / "even", jaxprof_bin, hosts, slow, "--not-slow", "host0003")
    planted = (slow_set / "planted.txt").read_text().split()
    assert planted[0] == "host0003" and len(planted) == 2 * slow
    assert "host0003" not in (truth_set / "planted.txt").read_text()

    def run(path, *extra):
        out = subprocess.run([str(jaxprof_bin), "critical-path", str(path), "--format", "json",
                              *extra], check=True, capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout)

    with_slow = run(slow_set, "--what-if", "host=host0003:median")
    even = run(truth_set)
    [change] = with_slow["what_if"]
    measured, predicted = change["measured_step_ns"], change["predicted_step_ns"]
    steady = [s["step_ns"] for s in even["steps"] if not s["warmup"]]
    truth = sum(steady) / len(steady)
    assert truth < measured, (truth, measured)
    assert abs(predicted - truth) <= 0.05 * truth, (truth, predicted, measured)


@pytest.mark.skipif(not TOOLS.exists(), reason="needs ../shared/tools/scale_xplane.py")
def test_a_host_that_counts_its_steps_again_has_each_step_apart(jaxprof_bin, tmp_path) -> None:
    """The bundled capture repeated three times back to back on one host: its step numbers run
    0..3 three times. Each repeat is a step of its own (the k-th step 2 is not merged with the
    others into one window over the whole capture), each as long as in the capture itself."""
    src = oc.DATA_DIR / "jax_cpu_8dev" / "plugins" / "profile" / "session" / "vm.xplane.pb"
    oc.require_profile(src)
    out = tmp_path / "plugins" / "profile" / "run" / "vm.xplane.pb"
    out.parent.mkdir(parents=True)
    subprocess.run([sys.executable, str(TOOLS), str(src), str(out), "3"], check=True,
                   capture_output=True, timeout=120)

    def steps(path):
        proc = subprocess.run([str(jaxprof_bin), "critical-path", str(path), "--format", "json"],
                              check=True, capture_output=True, text=True, timeout=120)
        # (scale_xplane.py shifts each line by its own span, so the copies' devices do not meet
        # at their collectives as they did: a step's dependencies may form a cycle, and say so.)
        return [(s["number"], s["marked_ns"]) for s in json.loads(proc.stdout)["steps"]]

    once, thrice = steps(src), steps(tmp_path)
    assert [n for n, _ in thrice] == [n for n, _ in once] * 3
    for k, (number, marked) in enumerate(thrice):
        assert marked == pytest.approx(once[k % len(once)][1], rel=1e-9), (k, number)
