"""`export --steps A:B` and `--time START:END` cut a window of the trace: exactly the slices of the
whole export that overlap the window (kept whole), the memory counters clipped to it (the value in
effect at its start, then the points inside), and the arrows whose both ends are kept; the
protobuf trace holds the same events as the JSON one. And a trace that would pass --warn-size
gets a warning with a --steps range that fits (docs/export.md, "A window")."""
from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal

import pytest

import ops_check as oc
from test_export_proto import read_json, read_proto, trace_class  # noqa: F401 (a fixture)

BUNDLED = oc.DATA_DIR / "jax_cpu_8dev"
GPU = oc.SHARED_FIXTURES / "xplane" / "mi300x_jax_conv.xplane.pb"


def export(binary, path, out, *args):
    proc = oc.run_cli(binary, ["export", str(path), "--perfetto", str(out), *args])
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def events(path):
    return json.loads(path.read_bytes(), parse_float=Decimal)["traceEvents"]


def ps(us):
    return int(Decimal(us) * 10**6)


def keeps(begin, end, start, dur):
    return begin <= start <= end if dur <= 0 else start < end and start + dur > begin


def expected(whole, begin, end):
    """The window of the whole export: slices, counter points, arrows."""
    slices = {(e["pid"], e["tid"], e["name"], ps(e["ts"]), ps(e["dur"])) for e in whole
              if e["ph"] == "X" and keeps(begin, end, ps(e["ts"]), ps(e["dur"]))}
    out_ids = {e["bind_id"] for e in whole if e["ph"] == "X" and e.get("flow_out")
               and keeps(begin, end, ps(e["ts"]), ps(e["dur"]))}
    in_ids = {e["bind_id"] for e in whole if e["ph"] == "X" and e.get("flow_in")
              and keeps(begin, end, ps(e["ts"]), ps(e["dur"]))}
    # Collectives' arrival arrows: flow events bound to the slice that starts at their time.
    dur = {(e["pid"], e["tid"], e["ts"]): e["dur"] for e in whole if e["ph"] == "X"}
    for phase, ids in (("s", out_ids), ("f", in_ids)):
        ids.update(e["id"] for e in whole if e["ph"] == phase and
                   keeps(begin, end, ps(e["ts"]), ps(dur[e["pid"], e["tid"], e["ts"]])))
    tracks = defaultdict(list)
    for e in whole:
        if e["ph"] == "C":
            tracks[e["pid"], e["tid"]].append((ps(e["ts"]), e["args"]["bytes"]))
    counters = {}
    for key, points in tracks.items():
        before = [v for t, v in points if t < begin]
        inside = [(t, v) for t, v in points if begin <= t <= end]
        clipped = ([(begin, before[-1])] if before and (not inside or inside[0][0] > begin)
                   else []) + inside
        if clipped:
            counters[key] = clipped
    return slices, counters, out_ids & in_ids


def got(window):
    slices = {(e["pid"], e["tid"], e["name"], ps(e["ts"]), ps(e["dur"])) for e in window
              if e["ph"] == "X"}
    counters = defaultdict(list)
    for e in window:
        if e["ph"] == "C":
            counters[e["pid"], e["tid"]].append((ps(e["ts"]), e["args"]["bytes"]))
    out_ids = {e["bind_id"] for e in window if e.get("flow_out")}
    in_ids = {e["bind_id"] for e in window if e.get("flow_in")}
    out_ids |= {e["id"] for e in window if e["ph"] == "s"}
    in_ids |= {e["id"] for e in window if e["ph"] == "f"}
    return slices, dict(counters), out_ids, in_ids


def check_window(binary, tmp_path, trace_class, path, begin, end, args):  # noqa: F811
    export(binary, path, tmp_path / "whole.json")
    proc = export(binary, path, tmp_path / "w.json", *args)
    export(binary, path, tmp_path / "w.pftrace", *args)
    whole = events(tmp_path / "whole.json")
    want_slices, want_counters, want_flows = expected(whole, begin, end)
    slices, counters, out_ids, in_ids = got(events(tmp_path / "w.json"))
    assert slices == want_slices
    assert counters == want_counters
    assert out_ids == in_ids == want_flows
    assert 0 < len(slices) < sum(e["ph"] == "X" for e in whole)
    assert f"kept {len(slices)} of {sum(e['ph'] == 'X' for e in whole)} slices" in \
        proc.stderr.decode()
    # The protobuf holds the same events per track as the JSON window.
    want, want_c, want_f = read_json(tmp_path / "w.json")
    proto, proto_c, flows_out, flows_in = read_proto(trace_class, tmp_path / "w.pftrace")
    assert set(proto) == set(want)
    for key in want:
        assert sorted(proto[key]) == sorted(want[key]), key
    assert dict(proto_c) == dict(want_c)
    # An arrow into two kernels (one launch, one correlation id) ends once in the protobuf, as
    # in the whole export (test_export_proto.py).
    assert len(flows_out) == len(want_flows) and flows_in <= flows_out
    assert bool(flows_in) == bool(want_f)
    return slices, counters, want_flows


def steps_of(binary, path):
    proc = oc.run_cli(binary, ["modules", str(path), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout, parse_float=Decimal)["steps"]["steps"]


def test_steps_window(jaxprof_bin, tmp_path, trace_class):  # noqa: F811
    oc.require_profile(BUNDLED)
    steps = {s["number"]: s for s in steps_of(jaxprof_bin, BUNDLED)}
    assert set(steps) == {0, 1, 2, 3}
    begin = int(Decimal(steps[1]["start_ns"]) * 1000)
    end = int(Decimal(steps[2]["end_ns"]) * 1000)
    slices, _, _ = check_window(jaxprof_bin, tmp_path, trace_class, BUNDLED, begin, end,
                                ["--steps", "1:2"])
    # The user's step annotations 1 and 2 are there, 0 and 3 are not.
    names = {(n, s) for _, _, n, s, _ in slices}
    assert {s for n, s in names if n == "train"} >= {begin}


def test_time_window_with_units(jaxprof_bin, tmp_path, trace_class):  # noqa: F811
    oc.require_profile(BUNDLED)
    check_window(jaxprof_bin, tmp_path, trace_class, BUNDLED, 72 * 10**9, 73_500_000_000,
                 ["--time", "72ms:73500us"])


def test_time_window_clips_counters_and_keeps_arrows(jaxprof_bin, tmp_path,
                                                     trace_class):  # noqa: F811
    oc.require_profile(GPU)
    export(jaxprof_bin, GPU, tmp_path / "all.json")
    xs = [e for e in events(tmp_path / "all.json") if e["ph"] == "X"]
    first = min(ps(e["ts"]) for e in xs)
    last = max(ps(e["ts"]) + ps(e["dur"]) for e in xs)
    begin, end = first + (last - first) // 3, first + 2 * (last - first) // 3
    begin_ns, end_ns = begin // 1000, end // 1000
    _, counters, flows = check_window(jaxprof_bin, tmp_path, trace_class, GPU, begin_ns * 1000,
                                      end_ns * 1000, ["--time", f"{begin_ns}:{end_ns}"])
    assert counters and flows


def test_bad_windows_exit_2(jaxprof_bin, tmp_path):
    oc.require_profile(BUNDLED)
    for args, says in ((["--steps", "7:9"], "steps are 0 to 3"),
                       (["--steps", "a:b"], "not a step number"),
                       (["--time", "3ms:1ms"], "not after the start"),
                       (["--time", "1 parsec:2"], "not a time"),
                       (["--time", "1:2", "--steps", "1"], "not both")):
        proc = oc.run_cli(jaxprof_bin, ["export", str(BUNDLED), "--perfetto",
                                        str(tmp_path / "t.pftrace"), *args])
        assert proc.returncode == 2 and says in proc.stderr.decode(), args


def test_size_warning_suggests_steps_that_fit(jaxprof_bin, tmp_path):
    oc.require_profile(BUNDLED)
    quiet = export(jaxprof_bin, BUNDLED, tmp_path / "t.pftrace")
    assert "warning: the trace would be" not in quiet.stderr.decode()
    proc = export(jaxprof_bin, BUNDLED, tmp_path / "t.pftrace", "--warn-size", "1000000")
    err = proc.stderr.decode()
    assert "warning: the trace would be about" in err and "Perfetto's UI holds" in err
    # Step 0 holds the compiles; the steady steps 1 to 3 fit in 1 MB.
    assert "--steps 1:3" in err
    # The suggested window is written without a warning.
    again = export(jaxprof_bin, BUNDLED, tmp_path / "t.pftrace", "--warn-size", "1000000",
                   "--steps", "1:3")
    assert "warning: the trace would be" not in again.stderr.decode()
    assert (tmp_path / "t.pftrace").stat().st_size < 1000000
