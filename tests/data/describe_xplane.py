#!/usr/bin/env python3
"""Describe the structure of an XSpace file (*.xplane.pb or *.xplane.pb.gz).

A small, dependency-free reader of the protobuf wire format, used to write (and to
re-check) the structural facts in tests/data/README.md. It is an independent reference
for jaxprof's importer, not part of jaxprof.

    python3 tests/data/describe_xplane.py FILE [FILE...]

Field numbers (XSpace, XPlane, XLine, XEvent, XStat, XEventMetadata, XStatMetadata) are
the public ones listed in the project's design notes; for the HloProto in /host:metadata
only HloProto.hlo_module=1, HloModuleProto{name=1, entry_computation_name=2,
computations=3}, HloComputationProto{name=1, instructions=2} and
HloInstructionProto{name=1, opcode=2} are read.
"""

from __future__ import annotations

import gzip
import statistics
import struct
import sys
from pathlib import Path
from collections import Counter, defaultdict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
import protowire  # noqa: E402


def fields(b):
    """(field number, wire type, value) for each field of one message."""
    for number, wire_type, value, _ in protowire.fields(b):
        yield number, wire_type, value


_varint = protowire.read_varint
_s64 = protowire.signed

# ----------------------------------------------------------------------------- wire








def _str(v):
    return bytes(v).decode("utf-8", "replace")


# ---------------------------------------------------------------------- messages

def parse_stat(b):
    d = {"mid": 0, "kind": None, "val": None}
    for f, _, v in fields(b):
        if f == 1:
            d["mid"] = v
        elif f == 2:
            d["kind"], d["val"] = "double", struct.unpack("<d", v)[0]
        elif f == 3:
            d["kind"], d["val"] = "uint64", v
        elif f == 4:
            d["kind"], d["val"] = "int64", _s64(v)
        elif f == 5:
            d["kind"], d["val"] = "str", _str(v)
        elif f == 6:
            d["kind"], d["val"] = "bytes", bytes(v)
        elif f == 7:
            d["kind"], d["val"] = "ref", v
    return d


def parse_event(b):
    d = {"mid": 0, "off": 0, "dur": 0, "nocc": None, "stats": []}
    for f, _, v in fields(b):
        if f == 1:
            d["mid"] = v
        elif f == 2:
            d["off"] = _s64(v)
        elif f == 5:
            d["nocc"] = v
        elif f == 3:
            d["dur"] = _s64(v)
        elif f == 4:
            d["stats"].append(parse_stat(v))
    return d


def parse_line(b):
    d = {"id": 0, "name": "", "ts": 0, "dur": 0, "display_id": None,
         "display_name": None, "events": []}
    for f, _, v in fields(b):
        if f == 1:
            d["id"] = _s64(v)
        elif f == 2:
            d["name"] = _str(v)
        elif f == 3:
            d["ts"] = _s64(v)
        elif f == 4:
            d["events"].append(parse_event(v))
        elif f == 9:
            d["dur"] = _s64(v)
        elif f == 10:
            d["display_id"] = _s64(v)
        elif f == 11:
            d["display_name"] = _str(v)
    return d


def parse_event_metadata(b):
    d = {"id": 0, "name": "", "display_name": None, "metadata": b"", "stats": [],
         "child_id": []}
    for f, _, v in fields(b):
        if f == 1:
            d["id"] = _s64(v)
        elif f == 2:
            d["name"] = _str(v)
        elif f == 3:
            d["metadata"] = bytes(v)
        elif f == 4:
            d["display_name"] = _str(v)
        elif f == 5:
            d["stats"].append(parse_stat(v))
        elif f == 6:
            d["child_id"].append(v)
    return d


def parse_stat_metadata(b):
    d = {"id": 0, "name": "", "description": ""}
    for f, _, v in fields(b):
        if f == 1:
            d["id"] = _s64(v)
        elif f == 2:
            d["name"] = _str(v)
        elif f == 3:
            d["description"] = _str(v)
    return d


def _map_entry(b, parse_value):
    key = val = None
    for f, _, v in fields(b):
        if f == 1:
            key = _s64(v)
        elif f == 2:
            val = parse_value(v)
    return key, val


def parse_plane(b):
    d = {"id": 0, "name": "", "lines": [], "em": {}, "sm": {}, "stats": []}
    for f, _, v in fields(b):
        if f == 1:
            d["id"] = _s64(v)
        elif f == 2:
            d["name"] = _str(v)
        elif f == 3:
            d["lines"].append(parse_line(v))
        elif f == 4:
            k, m = _map_entry(v, parse_event_metadata)
            d["em"][k] = m
        elif f == 5:
            k, m = _map_entry(v, parse_stat_metadata)
            d["sm"][k] = m
        elif f == 6:
            d["stats"].append(parse_stat(v))
    return d


def read_space(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    d = {"planes": [], "errors": [], "warnings": [], "hostnames": [], "size": len(data)}
    for f, _, v in fields(memoryview(data)):
        if f == 1:
            d["planes"].append(parse_plane(v))
        elif f == 2:
            d["errors"].append(_str(v))
        elif f == 3:
            d["warnings"].append(_str(v))
        elif f == 4:
            d["hostnames"].append(_str(v))
    return d


def hlo_summary(hlo_proto: bytes):
    """(module name, entry computation name, {instruction name: opcode}) of an HloProto."""
    name = entry = ""
    instrs = {}
    for f, _, mod in fields(hlo_proto):
        if f != 1:
            continue
        for g, _, v in fields(mod):
            if g == 1:
                name = _str(v)
            elif g == 2:
                entry = _str(v)
            elif g == 3:
                for h, _, inst in fields(v):
                    if h == 2:
                        iname = opcode = ""
                        for k, _, w in fields(inst):
                            if k == 1:
                                iname = _str(w)
                            elif k == 2:
                                opcode = _str(w)
                        instrs[iname] = opcode
    return name, entry, instrs


# ----------------------------------------------------------------------- helpers

def stat_name(p, s):
    return p["sm"][s["mid"]]["name"] if s["mid"] in p["sm"] else f"#{s['mid']}"


def stat_value(p, s, limit=70):
    v = s["val"]
    if s["kind"] == "ref":
        v = p["sm"][v]["name"] if v in p["sm"] else f"<bad ref {v}>"
    if isinstance(v, bytes):
        return f"<{len(v)} bytes>"
    if isinstance(v, str) and len(v) > limit:
        return v[:limit] + "..."
    return v


def stats_dict(p, e):
    """Stat name -> value; a name repeated on one event keeps its first value."""
    d = {}
    for s in e["stats"]:
        d.setdefault(stat_name(p, s), stat_value(p, s, limit=10**6))
    return d


def line_kind(name):
    """Thread-pool lines are named '<pool>/<line id>'; group them by pool."""
    head, sep, tail = name.rpartition("/")
    if sep and tail.lstrip("-").isdigit():
        return head + "/*"
    return name


def is_xla_op(p, e):
    return any(stat_name(p, s) == "hlo_op" for s in e["stats"])


# -------------------------------------------------------------------------- report

def describe(path, out=print):
    sp = read_space(path)
    out(f"# {path}")
    out(f"decoded size {sp['size']} bytes; hostnames={sp['hostnames']} "
        f"errors={sp['errors']} warnings={sp['warnings']}")
    out("")
    out("planes:")
    for p in sp["planes"]:
        n_ev = sum(len(ln["events"]) for ln in p["lines"])
        out(f"  id={p['id']} name={p['name']!r} lines={len(p['lines'])} events={n_ev} "
            f"event_metadata={len(p['em'])} stat_metadata={len(p['sm'])}")
    for p in sp["planes"]:
        out("")
        out(f"## plane {p['name']!r}")
        if p["stats"]:
            out("plane stats: " + ", ".join(
                f"{stat_name(p, s)}:{s['kind']}={stat_value(p, s)!r}" for s in p["stats"]))
        used = defaultdict(Counter)  # stat name -> kinds seen (as XStat keys)
        refs = set()
        for holder in ([p["stats"]] + [m["stats"] for m in p["em"].values()]
                       + [e["stats"] for ln in p["lines"] for e in ln["events"]]):
            for s in holder:
                used[stat_name(p, s)][s["kind"]] += 1
                if s["kind"] == "ref":
                    refs.add(s["val"])
        keys = {s["mid"] for holder in ([p["stats"]] + [m["stats"] for m in p["em"].values()]
                                        + [e["stats"] for ln in p["lines"] for e in ln["events"]])
                for s in holder}
        out("stat names used as keys (kinds, count): " + ", ".join(
            f"{n}({'/'.join(f'{k}:{c}' for k, c in sorted(kinds.items()))})"
            for n, kinds in sorted(used.items())))
        only_ref = sorted(p["sm"][i]["name"] for i in refs - keys if i in p["sm"])
        if only_ref:
            out(f"stat_metadata entries that are only ref values ({len(only_ref)}): "
                + ", ".join(repr(n if len(n) < 60 else n[:60] + '...') for n in only_ref))
        unused = sorted(p["sm"][i]["name"] for i in set(p["sm"]) - keys - refs)
        if unused:
            out(f"stat_metadata entries never referenced: {unused}")
        em_flags = Counter()
        for m in p["em"].values():
            em_flags["display_name"] += m["display_name"] is not None
            em_flags["metadata"] += bool(m["metadata"])
            em_flags["stats"] += bool(m["stats"])
            em_flags["child_id"] += bool(m["child_id"])
        out(f"event_metadata: {len(p['em'])} entries; with display_name={em_flags['display_name']} "
            f"metadata={em_flags['metadata']} stats={em_flags['stats']} child_id={em_flags['child_id']}")
        if not p["lines"] and p["em"]:
            for k, m in sorted(p["em"].items()):
                out(f"  em {k}: name={m['name']!r} display_name={m['display_name']!r} stats=" + ", ".join(
                    f"{stat_name(p, s)}:{s['kind']}={stat_value(p, s)!r}" for s in m["stats"]))
                hp = [s["val"] for s in m["stats"] if stat_name(p, s) == "Hlo Proto"]
                if hp:
                    name, entry, instrs = hlo_summary(hp[0])
                    out(f"     HloProto: module={name!r} entry={entry!r} instructions={len(instrs)}")
        if p["lines"]:
            out("lines:")
            for ln in p["lines"]:
                out(f"  id={ln['id']} name={ln['name']!r} display_id={ln['display_id']} "
                    f"display_name={ln['display_name']!r} timestamp_ns={ln['ts']} "
                    f"duration_ps={ln['dur']} events={len(ln['events'])}")
            describe_events(p, out)
    return sp


def describe_events(p, out):
    def name(e):
        return p["em"][e["mid"]]["name"]

    # Event names per kind of line, with the stats they carry.
    out("")
    out("event names per line kind (python tracer '$...' events counted together):")
    by_kind = defaultdict(list)
    for ln in p["lines"]:
        by_kind[line_kind(ln["name"])].append(ln)
    for kind, lines in sorted(by_kind.items()):
        cnt = Counter()
        st = defaultdict(Counter)
        example = {}
        for ln in lines:
            for e in ln["events"]:
                n = name(e)
                if n.startswith("$"):
                    cnt["$<python>"] += 1
                    continue
                if is_xla_op(p, e):
                    n = "<XLA op: name == hlo_op>"
                elif n.startswith("end: "):
                    n = "end: <hlo_op>"
                elif n.startswith("Wait: pending_threads="):
                    n = "Wait: pending_threads=<k>/<n>"
                cnt[n] += 1
                for s in e["stats"]:
                    sn = stat_name(p, s)
                    st[n][(sn, s["kind"])] += 1
                    example.setdefault((n, sn), stat_value(p, s))
        out(f"  [{kind}] ({len(lines)} line(s), {sum(cnt.values())} events)")
        for n, c in cnt.most_common():
            desc = ", ".join(f"{sn}:{k}" + (f"={example[(n, sn)]!r}" if sn not in ("_src",) else "")
                             for (sn, k) in sorted(st[n]))
            out(f"    {c:6d}  {n[:80]!r}" + (f"  {{{desc}}}" if desc else ""))

    ops = [(ln, e) for ln in p["lines"] for e in ln["events"] if is_xla_op(p, e)]
    if not ops:
        return
    out("")
    out(f"XLA op events (events with an hlo_op stat): {len(ops)}, "
        f"sum of durations {sum(e['dur'] for _, e in ops)} ps")
    per_line = Counter(ln["name"] for ln, _ in ops)
    out("  per line:")
    for ln in p["lines"]:
        if per_line[ln["name"]]:
            dur = sum(e["dur"] for l2, e in ops if l2 is ln)
            out(f"    {ln['name']!r}: {per_line[ln['name']]} events, {dur} ps")
    groups = defaultdict(list)
    for _, e in ops:
        sd = stats_dict(p, e)
        groups[(sd.get("hlo_module"), sd.get("program_id"), sd["hlo_op"])].append(e["dur"])
    out("  per (hlo_module, program_id, hlo_op): count, sum ps, min/median/max ps:")
    for (mod, pid, op), durs in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), -sum(kv[1]))):
        out(f"    {mod} {pid} {op!r}: {len(durs)}, {sum(durs)}, "
            f"{min(durs)}/{int(statistics.median(durs))}/{max(durs)}")
    per_dev = Counter(stats_dict(p, e).get("device_ordinal") for _, e in ops)
    out("  per device_ordinal: " + ", ".join(f"{k}:{v}" for k, v in sorted(per_dev.items())))
    names_eq = sum(1 for _, e in ops if name(e) == stats_dict(p, e)["hlo_op"])
    out(f"  event name == hlo_op value: {names_eq}/{len(ops)}")

    # Module executions = op events grouped by (module, program_id, run_id, device).
    execs = defaultdict(list)
    for ln, e in ops:
        sd = stats_dict(p, e)
        execs[(sd.get("hlo_module"), sd.get("program_id"), sd.get("run_id"),
               sd.get("device_ordinal"))].append((ln, e))
    per_mod = defaultdict(list)
    for (mod, pid, run, dev), evs in execs.items():
        lines = {ln["name"] for ln, _ in evs}
        per_mod[(mod, pid)].append((run, dev, len(evs), len(lines)))
    out("  module executions (op events grouped by hlo_module, program_id, run_id, device_ordinal):")
    for (mod, pid), rows in sorted(per_mod.items(), key=lambda kv: str(kv[0])):
        runs = sorted({r for r, *_ in rows})
        out(f"    {mod} program_id={pid}: {len(rows)} executions, {len(runs)} distinct run_id, "
            f"ops per execution {sorted({n for _, _, n, _ in rows})}, "
            f"lines per execution {sorted({k for *_, k in rows})}")

    # Nesting of op events on their line.
    parents = Counter()
    partial = Counter()
    for ln in p["lines"]:
        stack = []
        for e in sorted(ln["events"], key=lambda e: (e["off"], -e["dur"])):
            s, t = e["off"], e["off"] + e["dur"]
            while stack and stack[-1][0] <= s:
                stack.pop()
            if stack and t > stack[-1][0]:
                partial[(line_kind(ln["name"]), name(stack[-1][1])[:40], name(e)[:40])] += 1
            if is_xla_op(p, e):
                par = stack[-1][1] if stack else None
                parents["<none>" if par is None else
                        ("<XLA op>" if is_xla_op(p, par) else name(par))] += 1
            stack.append((t, e))
    out("  innermost enclosing event of each XLA op event on its line: "
        + ", ".join(f"{k}: {v}" for k, v in parents.most_common()))
    if partial:
        out("  partially overlapping event pairs (line kind, outer, inner): "
            + "; ".join(f"{k}: {v}" for k, v in partial.most_common()))

    steps = [(ln, e) for ln in p["lines"] for e in ln["events"]
             if "step_num" in stats_dict(p, e)]
    if steps:
        out("")
        out("step events (events with a step_num stat):")
        for ln, e in sorted(steps, key=lambda x: x[1]["off"]):
            out(f"    line {ln['name']!r} name={name(e)!r} offset_ps={e['off']} "
                f"duration_ps={e['dur']} stats=" + ", ".join(
                    f"{stat_name(p, s)}:{s['kind']}={stat_value(p, s)!r}" for s in e["stats"]))


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    for i, path in enumerate(argv):
        if i:
            print("\n")
        describe(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
