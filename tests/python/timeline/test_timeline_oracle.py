"""`jaxprof timeline` against timeline_oracle.py on every real profile: exact picoseconds per
device, the identity compute + exposed comm + exposed memcpy + idle = span, module execution
counts, and CSV agreeing with JSON."""
from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest

import ops_check as oc
import timeline_oracle as to

CASES = oc.profile_cases()
CASE_IDS = [c[0] for c in CASES]
CASE_PATHS = [c[1] for c in CASES]
FIELDS = ("span", "busy", "compute", "comm", "comm_exposed", "memcpy", "memcpy_exposed", "idle",
          "idle_in_modules", "idle_between_modules")


def _ps(ns) -> int:
    v = Decimal(str(ns)) * 1000
    assert v == v.to_integral_value(), f"{ns} ns is not whole picoseconds"
    return int(v)


def _run(binary, path, fmt):
    proc = oc.run_cli(binary, ["timeline", str(path), "--format", fmt, *oc.EVERYTHING])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return proc.stdout.decode()


@pytest.mark.parametrize("path", CASE_PATHS, ids=CASE_IDS)
def test_timeline_matches_oracle(jaxprof_bin, path):
    path = oc.require_profile(path)
    got = json.loads(_run(jaxprof_bin, path, "json"), parse_float=Decimal)
    want = to.timeline(str(path))
    assert want, f"oracle found no devices in {path}"
    assert [d["device"] for d in got["devices"]] == [d["device"] for d in want]
    for g, w in zip(got["devices"], want):
        assert g["events"] == w["events"], g["device"]
        assert g["executions"] == w["executions"], g["device"]
        for f in FIELDS:
            assert _ps(g[f + "_ns"]) == w[f + "_ps"], (g["device"], f)
        # The identity, in exact integers, on every device.
        assert (w["compute_ps"] + w["comm_exposed_ps"] + w["memcpy_exposed_ps"] + w["idle_ps"]
                == w["span_ps"])
        assert w["idle_in_modules_ps"] + w["idle_between_modules_ps"] == w["idle_ps"]
        assert 0 <= w["comm_exposed_ps"] <= w["comm_ps"]
        assert 0 <= w["memcpy_exposed_ps"] <= w["memcpy_ps"]
    n = len(want)
    for f in FIELDS:
        mean = Decimal(sum(w[f + "_ps"] for w in want)) / n / 1000
        assert abs(Decimal(str(got["average"][f + "_ns"])) - mean) <= abs(mean) * Decimal(1e-12) + \
            Decimal("1e-6"), f


@pytest.mark.parametrize("path", CASE_PATHS, ids=CASE_IDS)
def test_timeline_csv_matches_json(jaxprof_bin, path):
    path = oc.require_profile(path)
    js = json.loads(_run(jaxprof_bin, path, "json"), parse_float=Decimal)
    rows = list(csv.DictReader(io.StringIO(_run(jaxprof_bin, path, "csv"))))
    assert len(rows) == len(js["devices"])
    for row, d in zip(rows, js["devices"]):
        assert row["device"] == d["device"]
        for f in FIELDS:
            assert _ps(row[f + "_ns"]) == _ps(d[f + "_ns"])


@pytest.mark.parametrize("path", CASE_PATHS, ids=CASE_IDS)
def test_module_execution_oracle_is_consistent(path):
    """Every execution lies inside its device's span and holds at least one op, except TPU module
    events without ops (a module line can record programs with no XLA op events)."""
    path = oc.require_profile(path)
    tl = {d["device"]: d for d in to.timeline(str(path))}
    for dev, execs in to.module_executions(str(path)).items():
        for x in execs:
            assert x["start"] <= x["end"]
        if dev in tl and execs and tl[dev]["executions"]:
            assert sum(1 for x in execs if x["warmup"]) <= len(
                {(x["name"], x["program_id"]) for x in execs})


def test_cpu_matmul_numbers(jaxprof_bin):
    """Numbers from tests/data/README.md: 20 ops summing to 35,143,993,000 ps that never overlap,
    all compute; 10 executions."""
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_matmul")
    got = json.loads(_run(jaxprof_bin, path, "json"), parse_float=Decimal)["devices"]
    assert len(got) == 1
    d = got[0]
    assert _ps(d["busy_ns"]) == _ps(d["compute_ns"]) == 35143993000
    assert d["executions"] == 10
    assert _ps(d["comm_ns"]) == 0 and _ps(d["memcpy_ns"]) == 0


def test_cpu_8dev_collectives_are_communication(jaxprof_bin):
    """all-reduce.5 and psum_invariant.7 (opcode all-reduce) are the only communication: with no
    overlap on a CPU device, comm = the sum of their durations (34,604,103,000 + 8,635,646,000 ps
    over all devices)."""
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_8dev")
    got = json.loads(_run(jaxprof_bin, path, "json"), parse_float=Decimal)["devices"]
    assert len(got) == 8
    assert sum(_ps(d["comm_ns"]) for d in got) == 34604103000 + 8635646000
    assert sum(_ps(d["comm_exposed_ns"]) for d in got) == 34604103000 + 8635646000
    assert all(d["executions"] == 8 for d in got)
