"""Several hosts on one clock: bench/make_hosts.py offsets every host's clock by a known amount
(up to 100 us) with collectives that end together on every host, as in a synchronous job. The
export moves each host's times by the offset `jaxprof hosts` estimates, so that collectives end at
one instant on the timeline within the estimate's stated error; `--no-align` keeps the recorded
clocks, and the two exports differ by exactly the offsets."""
from __future__ import annotations

import json
import statistics
from collections import defaultdict
from decimal import Decimal

import pytest

import ops_check as oc


@pytest.fixture(scope="module")
def three_hosts(tmp_path_factory, jaxprof_bin):
    return oc.make_hosts(tmp_path_factory.mktemp("clock"), jaxprof_bin, "--hosts", "3",
                         "--host-mb", "0.6", "--slow", "1", "--variants", "2")


def export(binary, src, dst, *extra):
    proc = oc.run_cli(binary, ["export", str(src), "--perfetto", str(dst), *extra], timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return proc.stderr.decode(), json.loads(dst.read_text(), parse_float=Decimal)


def to_ps(us):
    return int(Decimal(us) * 1000000)


def slices_by_host(trace):
    host_of = {e["pid"]: e["args"].get("host") for e in trace["traceEvents"]
               if e.get("ph") == "M" and e["name"] == "process_name"}
    by_host = defaultdict(list)
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            by_host[host_of[e["pid"]]].append(e)
    return by_host


def test_hosts_share_one_clock(jaxprof_bin, three_hosts, tmp_path):
    truth = {}
    for line in (three_hosts / "hosts.txt").read_text().splitlines():
        if not line.startswith("#"):
            host, _, offset_ns = line.split()
            truth[host] = int(offset_ns) * 1000
    reference = statistics.median(truth.values())
    hosts = oc.run_cli(jaxprof_bin, ["hosts", str(three_hosts), "--format", "json"])
    estimate = {h["host"]: h for h in json.loads(hosts.stdout)["hosts"]}

    note, aligned = export(jaxprof_bin, three_hosts, tmp_path / "aligned.json")
    _, recorded = export(jaxprof_bin, three_hosts, tmp_path / "recorded.json", "--no-align")
    assert "3 hosts put on one clock" in note and "--no-align" in note
    notes = [e for e in aligned["traceEvents"] if e.get("name") == "jaxprof_notes"]
    assert any("3 hosts put on one clock" in n for n in notes[0]["args"]["notes"])

    # Every slice of a host moved by exactly that host's estimated offset, which is the planted
    # one (against the median host) within the stated error.
    a, r = slices_by_host(aligned), slices_by_host(recorded)
    for host, est in estimate.items():
        offset_ps = int(Decimal(str(est["clock_offset_ns"])) * 1000)
        error_ps = int(Decimal(str(est["clock_offset_error_ns"])) * 1000)
        assert abs(offset_ps - (truth[host] - reference)) <= error_ps
        assert len(a[host]) == len(r[host]) > 0
        for x, y in zip(a[host], r[host]):
            assert x["name"] == y["name"] and x["dur"] == y["dur"]
            assert to_ps(y["ts"]) - to_ps(x["ts"]) == offset_ps

    # On the shared clock, each collective instance ends at one instant on every host (the median
    # over a host's devices: its devices end within nanoseconds of each other).
    worst = max(int(Decimal(str(h["clock_offset_error_ns"])) * 1000) for h in estimate.values())
    def ends(trace):
        per_host = defaultdict(lambda: defaultdict(list))
        for host, events in slices_by_host(trace).items():
            for e in events:
                if e.get("args", {}).get("category") == "collective":
                    per_host[host][(e["tid"], e["name"])].append(to_ps(e["ts"]) + to_ps(e["dur"]))
        return per_host
    spread_aligned, spread_recorded = [], []
    for trace, spread in ((aligned, spread_aligned), (recorded, spread_recorded)):
        per_host = ends(trace)
        keys = set.intersection(*(set(v) for v in per_host.values()))
        assert keys
        for key in keys:
            for k in range(min(len(per_host[h][key]) for h in per_host)):
                at = [per_host[h][key][k] for h in per_host]
                spread.append(max(at) - min(at))
    assert statistics.median(spread_aligned) <= 2 * worst + 1000
    assert statistics.median(spread_recorded) > 10 * (2 * worst + 1000)


def test_one_host_and_python(jaxprof_bin, three_hosts, tmp_path):
    import jaxprof
    p = jaxprof.load(str(three_hosts))
    written = p.export_perfetto(tmp_path / "t.json")
    assert any("hosts put on one clock" in n for n in written["notes"])
    written = p.export_perfetto(tmp_path / "u.json", align=False)
    assert not any("one clock" in n for n in written["notes"])
    one = sorted(three_hosts.rglob("*.xplane.pb"))[0]
    note, _ = export(jaxprof_bin, one, tmp_path / "one.json")
    assert "one clock" not in note
