"""Collectives' arrival arrows in the export: for every instance that spans several devices, an
arrow from the op event of the device that started it first to that of the device that started
it last (the one the others waited for), as `jaxprof collectives --instances` names them. In
JSON the arrow is a pair of flow events (phases s and f) bound to the slices they start at; in
the protobuf, flow ids on the slices; jaxprof's reader skips them."""
from __future__ import annotations

import json
from decimal import Decimal

import ops_check as oc

PROFILE = oc.DATA_DIR / "jax_cpu_8dev"


def test_arrows_run_from_first_to_last_arrival(jaxprof_bin, tmp_path):
    oc.require_profile(PROFILE)
    out = tmp_path / "t.json"
    proc = oc.run_cli(jaxprof_bin, ["export", str(PROFILE), "--perfetto", str(out)])
    assert proc.returncode == 0, proc.stderr.decode()
    coll = json.loads(oc.run_cli(jaxprof_bin, ["collectives", str(PROFILE), "--instances",
                                               "--include-warmup", "--format", "json"]).stdout)
    several = [i for i in coll["instances"] if i["devices"] > 1]
    assert several
    assert f"{len(several)} collective arrival arrows" in proc.stderr.decode()

    events = json.loads(out.read_text(), parse_float=Decimal)["traceEvents"]
    slices = {(e["pid"], e["tid"], e["ts"]): e for e in events if e.get("ph") == "X"}
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f"}
    assert set(starts) == set(ends) and len(starts) == len(several)
    got = []
    for fid, s in starts.items():
        f = ends[fid]
        assert f["bp"] == "e" and s["name"] == f["name"] == "jaxprof collective arrival"
        first = slices[s["pid"], s["tid"], s["ts"]]
        last = slices[f["pid"], f["tid"], f["ts"]]
        assert first["args"]["hlo_op"] == last["args"]["hlo_op"]
        assert first["args"]["device_ordinal"] != last["args"]["device_ordinal"]
        assert s["ts"] < f["ts"]
        got.append((first["args"]["hlo_op"], s["ts"] * 1000,
                    f"/device:CPU:{last['args']['device_ordinal']}"))
    # The first start is the instance's; the last arrival is the device it calls late.
    want = sorted((i["name"], Decimal(str(i["first_start_ns"])), i["late_device"])
                  for i in several)
    assert sorted(got) == want

    # Read back, the arrows leave no trace and no note.
    proc = oc.run_cli(jaxprof_bin, ["summary", str(out)])
    assert proc.returncode == 0 and b"other phases" not in proc.stderr
