"""`export --critical-path`: each step's critical path (`jaxprof critical-path`) on the timeline,
a derived "critical path" track on each process it runs through with every segment to the
picosecond, and an arrow from each segment to the next of its step; jaxprof's reader leaves it
out."""
from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal

import pytest

import ops_check as oc

CASES = [oc.DATA_DIR / "jax_cpu_8dev", oc.SHARED_FIXTURES / "xplane" / "mi300x_jax_gemm.xplane.pb"]


def ps(us):
    return int(Decimal(us) * 10**6)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name.split(".")[0])
def test_path_segments_and_arrows(jaxprof_bin, tmp_path, path):
    oc.require_profile(path)
    out = tmp_path / "t.json"
    proc = oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(out),
                                    "--critical-path"])
    assert proc.returncode == 0, proc.stderr.decode()
    want = json.loads(oc.run_cli(jaxprof_bin, ["critical-path", str(path), "--format",
                                               "json"]).stdout)
    events = json.loads(out.read_text(), parse_float=Decimal)["traceEvents"]
    tracks = {(e["pid"], e["tid"]) for e in events
              if e.get("ph") == "M" and e["name"] == "thread_name"
              and e["args"]["name"] == "critical path"}
    assert tracks
    segs = [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in tracks]
    got = sorted((e["args"]["step"], ps(e["ts"]), ps(e["dur"]), e["name"]) for e in segs)
    expected = sorted((s["number"], seg["start_ps"], seg["duration_ps"], seg["name"])
                      for s in want["steps"] for seg in s["path"])
    assert got == expected
    # Arrows: from each segment to the next one of its step.
    at = {(e["pid"], e["tid"], e["ts"]): e for e in segs}
    starts = {e["id"]: e for e in events if e.get("ph") == "s"
              and e["name"] == "jaxprof critical path"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f"
            and e["name"] == "jaxprof critical path"}
    assert set(starts) == set(ends)
    assert len(starts) == sum(max(len(s["path"]) - 1, 0) for s in want["steps"])
    for fid, s in starts.items():
        a, b = at[s["pid"], s["tid"], s["ts"]], at[ends[fid]["pid"], ends[fid]["tid"],
                                                    ends[fid]["ts"]]
        assert a["args"]["step"] == b["args"]["step"]
        assert ps(a["ts"]) + ps(a["dur"]) <= ps(b["ts"])
    # Read back, the track and its arrows leave no trace.
    plain = tmp_path / "plain.json"
    oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(plain)])
    a = oc.run_cli(jaxprof_bin, ["summary", str(out), "--format", "json"])
    b = oc.run_cli(jaxprof_bin, ["summary", str(plain), "--format", "json"])
    assert a.returncode == b.returncode == 0 and b"other phases" not in a.stderr
    strip = lambda d: {k: v for k, v in json.loads(d).items() if k != "input"}  # noqa: E731
    assert strip(a.stdout) == strip(b.stdout)
