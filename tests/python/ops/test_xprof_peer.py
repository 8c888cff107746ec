"""jaxprof's per-op figures against XProf's own (its hlo_stats tool, run on the profile through
XProf's Python converter), where XProf installs: skipped cleanly when `xprof` is not importable.

XProf aggregates every device of a host by (program id, HLO op); `jaxprof ops --by-program` keeps
devices apart, so its rows are summed over devices here. On TPU both take an op's time from the
device's own clock (docs/clocks.md)."""
from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict

import pytest

TPU = "tpu_4chip_inference.xplane.pb"


def xprof_hlo_stats(profile, tmp_path):
    raw = pytest.importorskip("xprof.convert.raw_to_tool_data")
    # XProf treats the file's directory as a session and writes caches there: a fresh one.
    session = tmp_path / "session"
    session.mkdir()
    link = session / "host.xplane.pb"
    os.symlink(profile, link)
    data, _ = raw.xspace_to_tool_data([str(link)], "hlo_stats", {"use_saved_result": False})
    table = json.loads(data)
    cols = [c["id"] for c in table["cols"]]
    rows = []
    for r in table["rows"]:
        rows.append(dict(zip(cols, (c.get("v") for c in r["c"]))))
    return rows


def jaxprof_by_program(binary, profile):
    # XProf counts every op event: compare with all work included (docs/steady-state.md).
    proc = subprocess.run([str(binary), "ops", str(profile), "--by-program",
                           "--include-autotuning", "--include-warmup", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = defaultdict(lambda: {"count": 0, "total_ps": 0, "self_ps": 0})
    for d in json.loads(proc.stdout)["devices"]:
        for g in d["groups"]:
            (program,) = g["program_ids"]  # one program per row when split
            acc = out[(str(program), g["name"])]
            acc["count"] += g["count"]
            acc["total_ps"] += round(g["total_ns"] * 1000)
            acc["self_ps"] += round(g["self_ns"] * 1000)
    return out


def ps_of_us(us):
    return round(float(us) * 1e6)


def test_tpu_op_totals_equal_xprof(jaxprof_bin, xplane_fixtures, tmp_path):
    profile = xplane_fixtures / TPU
    if not profile.is_file():
        pytest.skip(f"{profile} missing")
    theirs = xprof_hlo_stats(profile, tmp_path)
    ours = jaxprof_by_program(jaxprof_bin, profile)
    assert theirs, "XProf returned no rows"
    for row in theirs:
        key = (str(row["program_id"]), row["hlo_op_name"])
        assert key in ours, key
        mine = ours[key]
        assert mine["count"] == int(row["occurrences"]), key
        assert mine["total_ps"] == ps_of_us(row["total_time"]), key
        # TPU op lines do not nest here: self time is the time, in both.
        assert mine["self_ps"] == ps_of_us(row["total_self_time"]), key
    # jaxprof has no op XProf does not (every TPU op carries the stats XProf keys on).
    assert set(ours) == {(str(r["program_id"]), r["hlo_op_name"]) for r in theirs}
