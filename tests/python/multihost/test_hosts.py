"""`jaxprof hosts` on a run of 12 hosts made from the project's 8-device CPU capture by
bench/make_hosts.py: two planted slow hosts (compute 1.5x and 1.35x slower, collectives ending
together on every host as in a synchronous job) are ranked first and flagged slow, and every
host's clock offset is recovered from when collectives end."""
from __future__ import annotations

import json
import statistics

import pytest

import ops_check as oc


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory, jaxprof_bin):
    return oc.make_hosts(tmp_path_factory.mktemp("hosts"), jaxprof_bin, "--hosts", "12",
                         "--host-mb", "0.6", "--slow", "2", "--variants", "3")


def hosts_json(binary, args):
    proc = oc.run_cli(binary, ["hosts"] + args + ["--format", "json"], timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout)


def test_planted_slow_hosts_rank_first(jaxprof_bin, bench_run):
    r = hosts_json(jaxprof_bin, [str(bench_run)])
    planted = [line.split()[0] for line in (bench_run / "planted.txt").read_text().splitlines()]
    assert planted == ["host0003", "host0042"][: len(planted)] or planted
    ranked = [h["host"] for h in r["hosts"]]
    assert ranked[: len(planted)] == planted
    assert sorted(h["host"] for h in r["hosts"] if h["slow"]) == sorted(planted)
    first = r["hosts"][0]
    assert first["arrived_last"] == first["collectives"] == r["instances"] > 0
    assert first["waited_ns"] == 0 and first["wait_caused_ns"] > 0
    assert all(h["late_ns"] < first["late_ns"] for h in r["hosts"][1:])


def test_clock_offsets_are_recovered(jaxprof_bin, bench_run):
    r = hosts_json(jaxprof_bin, [str(bench_run)])
    truth = {}
    for line in (bench_run / "hosts.txt").read_text().splitlines():
        if not line.startswith("#"):
            host, _, offset = line.split()
            truth[host] = int(offset)
    reference = statistics.median(truth.values())
    for h in r["hosts"]:
        assert h["clock_offset_ns"] == pytest.approx(truth[h["host"]] - reference, abs=1.0)


def test_hosts_from_partials_and_threads(jaxprof_bin, bench_run, tmp_path):
    want = hosts_json(jaxprof_bin, [str(bench_run)])
    parts = tmp_path / "parts"
    proc = oc.run_cli(jaxprof_bin, ["partial", str(bench_run), "-o", str(parts) + "/"])
    assert proc.returncode == 0, proc.stderr
    got = hosts_json(jaxprof_bin, [str(parts)])
    # What was read differs (the partials); what they say does not.
    assert [h["host"] for h in got.pop("input")["hosts"]] == \
        [h["host"] for h in want["input"]["hosts"]]
    assert got == {k: v for k, v in want.items() if k != "input"}
    assert hosts_json(jaxprof_bin, [str(bench_run), "--threads", "1"]) == want
    proc = oc.run_cli(jaxprof_bin, ["hosts", str(bench_run), "--top", "3"])
    assert b"3 of 12 hosts shown; --top 0 shows all" in proc.stdout
    assert b"host0003 (slow)" in proc.stdout


def test_compile_share_is_a_hosts_time_against_the_span(jaxprof_bin, bench_run):
    """Each host compiles while its own devices run: the compile observation gives one host's
    compile time against a device's span (the sum over 12 hosts ran past the span and was shown
    clipped to 100%, with a warning about events counted twice)."""
    proc = oc.run_cli(jaxprof_bin, ["summary", str(bench_run), "--format", "json"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert b"share above 100%" not in proc.stderr
    r = json.loads(proc.stdout)
    hosts = len(r["hosts"])
    compile_obs = [o for o in r["observations"] if o["rule"] == "compile"]
    assert compile_obs, r["observations"]
    o = compile_obs[0]
    assert f"a host ({r['compile']['compiles']} compiles on {hosts} hosts" in o["text"]
    assert 0 < o["share"] < 1
    assert o["time_ns"] == pytest.approx(r["compile"]["wall_ns"] / hosts, abs=1)
