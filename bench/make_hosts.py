#!/usr/bin/env python3
"""A run directory of many hosts' XSpace profiles, made from one real capture, for the multi-host
benchmarks (bench/multihost.sh). Not committed data: it writes under the directory given.

Each host is the project's own 8-device JAX CPU capture (tests/data/jax_cpu_8dev), lengthened
with ../shared/tools/scale_xplane.py to about --host-mb, then given a speed of its own, as one
host of a synchronous SPMD job would be (--model sync):
- compute on host h runs at speed 1/f_h (f_h near 1, a few planted slow hosts well above): its
  ops, the gaps between them and its host work between collectives take f_h times as long;
- the k-th collective of every device line is one instance across all hosts, and it ends at the
  same instant on every host: when its last participant arrives (each arrives after its own
  compute since the instance before, stretched by its host's factor: the slowest host's last)
  plus the collective's own transfer time (its shortest duration among the lines of the
  capture). Faster hosts wait inside collectives, and only there; between collectives every
  op keeps its own (scaled) duration;
- lines without collectives (the Python thread with the step marks, launches) follow their
  host's devices: from the first device's arrival at an instance to the last device's end of it
  in the capture, the line runs to the instance's common end; in between, its work stretches by
  f_h. The set without a planted slow host (--not-slow) is then the same with that host at its
  normal speed, everything else alike;
- every host's clock is offset by up to --clock-us microseconds.
--model warp (the default, which `jaxprof hosts`' tests and bench/multihost.sh's figures rely on:
a slow host's steps are longer, so it is flagged slow by its step times) is the earlier model:
each line warped by its own compute, so that every collective ends (f_max - 1) x that line's
compute so far later; lines without collectives stretch by f_h (drifting from the devices over
the capture) or, with --marks-follow-devices, follow the host's first line with collectives. In
a synchronous job every host's steps last as long (the others wait for the slow one), so
`jaxprof hosts` finds the slow host by who arrived last (ranked first), not by its step times.
Hosts are host0000 ... host{N-1}; the planted slow hosts (printed, and written to
planted.txt) are spread so that the first 10 and the first 100 hosts hold some; hosts.txt holds
every host's speed factor and clock offset.

usage: make_hosts.py OUT_DIR [--hosts 1000] [--host-mb 5.5] [--slow 3] [--seed 0]
                     [--model warp|sync] [--not-slow HOST] [--marks-follow-devices]
"""
import argparse
import bisect
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The shared tools sit beside the shared fixtures (JAXPROF_SHARED_FIXTURES, as the tests name them).
_FIXTURES = os.environ.get("JAXPROF_SHARED_FIXTURES")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(_FIXTURES)), "tools") if _FIXTURES
                else os.path.join(HERE, "..", "..", "shared", "tools"))
import scale_xplane as sx  # noqa: E402

SOURCE = os.path.join(HERE, "..", "tests", "data", "jax_cpu_8dev", "plugins", "profile", "session",
                      "vm.xplane.pb")
# XSpace.planes 1; XPlane.lines 3, event_metadata 4 (map: key 1, value 2; XEventMetadata.name 2);
# XLine.timestamp_ns 3, events 4; XEvent.metadata_id 1, offset_ps 2, duration_ps 3.
SLOW_FACTORS = [1.5, 1.35, 1.25, 1.2, 1.15]
SLOW_HOSTS = [3, 42, 777, 250, 600]


def collective_names(binary, path):
    import json

    out = subprocess.run([binary, "ops", path, "--format", "json"], check=True,
                         capture_output=True).stdout
    names = set()
    for d in json.loads(out)["devices"]:
        for g in d["groups"]:
            if g.get("category") == "collective":
                names.add(g["name"].encode())
    return names


def parse(space, collectives):
    """planes: [(head_fields_raw, [lines]) ...]; line: (head_raw, timestamp, [(rest, off, dur)],
    collective intervals)."""
    planes = []
    for fn, wt, plane, raw in sx.fields(space):
        if fn == 4:
            continue  # XSpace.hostnames: each host gets its own (host_bytes)
        if fn != 1 or wt != 2:
            planes.append(raw)
            continue
        coll_ids = set()
        for pfn, pwt, entry, _ in sx.fields(plane):
            if pfn == 4 and pwt == 2:
                mid = name = None
                for efn, _, v, _ in sx.fields(entry):
                    if efn == 1:
                        mid = v
                    elif efn == 2:
                        for mfn, _, mv, _ in sx.fields(v):
                            if mfn == 2:
                                name = bytes(mv)
                if name in collectives:
                    coll_ids.add(mid)
        head, lines = [], []
        for pfn, pwt, val, praw in sx.fields(plane):
            if pfn != 3 or pwt != 2:
                head.append(praw)
                continue
            lhead, ts, events, colls = [], 0, [], []
            for lfn, lwt, lval, lraw in sx.fields(val):
                if lfn == 3 and lwt == 0:
                    ts = sx.signed(lval)
                elif lfn == 4 and lwt == 2:
                    off, dur, mid, rest = 0, 0, None, []
                    for efn, ewt, ev, eraw in sx.fields(lval):
                        if efn == 2 and ewt == 0:
                            off = sx.signed(ev)
                        elif efn == 3 and ewt == 0:
                            dur = sx.signed(ev)
                        else:
                            if efn == 1:
                                mid = ev
                            rest.append(eraw)
                    events.append((b"".join(rest), off, dur))
                    if mid in coll_ids:
                        colls.append((off, off + dur))
                else:
                    lhead.append(lraw)
            colls.sort()
            merged = []
            for a, b in colls:
                if merged and a <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], b)
                else:
                    merged.append([a, b])
            lines.append((b"".join(lhead), ts, events, merged))
        planes.append((b"".join(head), lines))
    return planes


def warp_fn(colls, f, f_max):
    """--model warp: time on a host of speed 1/f, compute stretched by f, collectives ending where
    the slowest host's (f_max) would, line by line (offsets on the line's own clock)."""
    if not colls:
        return lambda t: round(t * f)
    points = []  # (t, W(t)) at every collective start and end
    w_prev_end, prev_end, compute = 0.0, 0, 0
    for a, b in colls:
        compute += a - prev_end
        w_a = w_prev_end + f * (a - prev_end)
        w_b = b + (f_max - 1) * compute
        points.append((a, w_a, b, w_b))
        w_prev_end, prev_end = w_b, b
    return piecewise(points, lambda t: f * t, f)


def piecewise(points, before, f):
    """The map through POINTS (a, W(a), b, W(b)) per collective: linear within a collective, slope
    f from a collective's end to the next one's start, BEFORE(t) before the first."""
    starts = [p[0] for p in points]

    def w(t):
        i = bisect.bisect_right(starts, t) - 1
        if i < 0:
            return round(before(t))
        a, w_a, b, w_b = points[i]
        if t <= b:
            return round(w_a + (w_b - w_a) * (t - a) / max(b - a, 1))
        return round(w_b + f * (t - b))

    return w


def host_warp(planes, f, f_max):
    """--model warp --marks-follow-devices: the host's own clock warp for lines without
    collectives (the Python thread with its step marks, launches): that of its first line with
    collectives, on the absolute clock. The host waits for its devices, so its marks stay with
    them rather than drifting by f over the capture."""
    for p in planes:
        if isinstance(p, (bytes, bytearray, memoryview)):
            continue
        for _, ts, _, colls in p[1]:
            if colls:
                return ts, warp_fn(colls, f, f_max)
    return 0, warp_fn([], f, f_max)


def line_warp(colls, ts, f, f_max, host):
    if colls or host is None:
        return warp_fn(colls, f, f_max)
    ref_ts, ref = host
    shift = (ts - ref_ts) * 1000  # this line's offsets on the reference line's
    return lambda t: ref(t + shift) - shift


def device_lines(planes):
    """Every line with collectives: (timestamp in ps, [(start, end)] of its collectives on the
    absolute clock in ps), in the profile's order."""
    out = []
    for p in planes:
        if isinstance(p, (bytes, bytearray, memoryview)):
            continue
        for _, ts, _, colls in p[1]:
            if colls:
                out.append((ts * 1000, [(ts * 1000 + a, ts * 1000 + b) for a, b in colls]))
    return out


def common_ends(lines, f_max):
    """--model sync: when each collective instance ends, the same instant on every host. The k-th
    collective of every device line is one instance; each participant (a device of any host)
    arrives after its own compute since the instance before, stretched by its host's factor, so
    the slowest host (f_max) arrives last; the instance ends the collective's transfer time (its
    shortest duration among the lines: that of the last to arrive in the capture) after that."""
    origin = min(ts for ts, _ in lines)
    ends = []
    for k in range(max(len(c) for _, c in lines)):
        arrive, transfer = None, None
        for _, colls in lines:
            if k >= len(colls):
                continue
            a, b = colls[k]
            prev_b, prev_e = colls[k - 1][1] if k else origin, ends[k - 1] if k else origin
            t = prev_e + f_max * (a - prev_b)
            arrive = t if arrive is None else max(arrive, t)
            transfer = b - a if transfer is None else min(transfer, b - a)
        ends.append(arrive + transfer)
    return origin, ends


def sync_warp(colls, origin, ends, f):
    """--model sync: a device line's map on the absolute clock for a host of factor f: the compute
    since the previous instance's common end stretched by f, each collective from that arrival
    to the instance's common end (a faster host waits inside it)."""
    points, prev_b, prev_e = [], origin, origin
    for (a, b), e in zip(colls, ends):
        points.append((a, prev_e + f * (a - prev_b), b, e))
        prev_b, prev_e = b, e
    return piecewise(points, lambda t: origin + f * (t - origin), f)


def host_line_warp(lines, origin, ends, f):
    """--model sync: the map of a line without collectives (the Python thread with the step
    marks, launches) for a host of factor f: from the first device's arrival at an instance to the
    last device's end of it (in the capture), time runs to the instance's common end (the host
    waits for its devices); in between, its own work stretches by f."""
    points = []
    for k, e in enumerate(ends):
        spans = [c[k] for _, c in lines if k < len(c)]
        points.append([min(a for a, _ in spans), 0, max(b for _, b in spans), e])
    points.sort()
    prev_b, prev_e = origin, origin
    for p in points:
        p[1] = prev_e + f * (p[0] - prev_b)
        prev_b, prev_e = p[2], p[3]
    return piecewise([tuple(p) for p in points], lambda t: origin + f * (t - origin), f)


def sync_warps(planes, f, sync):
    """Per line (in order), its map of offsets for a host of factor f (--model sync): device lines
    their own (sync_warp), the others host_line_warp."""
    origin, ends = sync
    lines = device_lines(planes)
    if not lines:
        return lambda ts, colls: (lambda t: round(f * t))
    host = host_line_warp(lines, origin, ends, f)

    def warp(ts, colls):
        base = ts * 1000
        full = host
        if colls:
            full = sync_warp([(base + a, base + b) for a, b in colls], origin, ends, f)
        return lambda t: full(base + t) - base

    return warp


def variant(planes, f, f_max, marks_follow_devices=False, sync=None):
    """The planes of a host of speed 1/f, each line as (head, timestamp, events bytes). With SYNC
    (origin, common ends of the instances) the synchronous model, else the line-by-line warp."""
    out = []
    host = host_warp(planes, f, f_max) if marks_follow_devices and sync is None else None
    warp = sync_warps(planes, f, sync) if sync is not None else None
    for p in planes:
        if isinstance(p, (bytes, bytearray, memoryview)):
            out.append(bytes(p))
            continue
        head, lines = p
        new_lines = []
        for lhead, ts, events, colls in lines:
            w = warp(ts, colls) if warp else line_warp(colls, ts, f, f_max, host)
            body = bytearray()
            for rest, off, dur in events:
                start = w(off)
                end = max(start, w(off + dur))
                ev = (sx.write_varint(2 << 3) + sx.write_varint(start) + sx.write_varint(3 << 3) +
                      sx.write_varint(end - start) + rest)
                body += sx.ld(4, ev)
            new_lines.append((lhead, ts, bytes(body)))
        out.append((head, new_lines))
    return out


def host_bytes(var, offset_ns, hostname):
    # The machine the capture says it ran on: one per host, as in a real multi-host capture (files
    # of one machine in one run directory are refused as not one capture).
    out = bytearray()
    for p in var:
        if isinstance(p, bytes):
            out += p
            continue
        head, lines = p
        plane = bytearray(head)
        for lhead, ts, body in lines:
            line = lhead + sx.write_varint(3 << 3) + sx.write_varint(ts + offset_ns) + body
            plane += sx.ld(3, line)
        out += sx.ld(1, bytes(plane))
    out += sx.ld(4, hostname.encode())  # after the planes: readers sniff the first field
    return bytes(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--host-mb", type=float, default=5.5)
    ap.add_argument("--slow", type=int, default=3)
    ap.add_argument("--variants", type=int, default=12, help="distinct normal host speeds")
    ap.add_argument("--clock-us", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", choices=["sync", "warp"], default="warp",
                    help="sync: a synchronous job, each collective instance ending at one instant "
                    "on every host, waiting only inside collectives; warp (default): each line "
                    "warped by its own compute")
    ap.add_argument("--marks-follow-devices", action="store_true",
                    help="--model warp: lines without collectives follow the host's devices "
                    "(no drift); --model sync always does")
    ap.add_argument("--not-slow", action="append", default=[], metavar="HOST",
                    help="a planted host (e.g. host0003) left at its normal speed, everything "
                    "else the same: the set a what-if on that host predicts")
    ap.add_argument("--jaxprof", default=os.path.join(HERE, "..", "build", "jaxprof"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    data = open(SOURCE, "rb").read()
    one, two = len(sx.scale_space(data, 1)), len(sx.scale_space(data, 2))
    copies = max(1, round((args.host_mb * 1e6 - (one - (two - one))) / (two - one)))
    base = sx.scale_space(data, copies)
    planes = parse(base, collective_names(args.jaxprof, SOURCE))
    slow = {h: f for h, f in zip(SLOW_HOSTS, SLOW_FACTORS[: args.slow])
            if h < args.hosts and f"host{h:04d}" not in args.not_slow}
    normal = [1.0 + 0.02 * (2 * k / max(args.variants - 1, 1) - 1) for k in range(args.variants)]
    speeds, offsets = [], []
    for h in range(args.hosts):
        speeds.append(slow.get(h, normal[rng.randrange(len(normal))]))
        offsets.append(round(rng.uniform(-args.clock_us, args.clock_us) * 1000))
    if args.model == "sync":  # the slowest host present decides when each instance ends
        f_max = max(speeds, default=1.0)
        sync = common_ends(device_lines(planes), f_max) if device_lines(planes) else None
    else:
        f_max, sync = max([1.02] + list(slow.values())), None
    variants = {}
    run = os.path.join(args.out, "plugins", "profile", "bench")
    os.makedirs(run, exist_ok=True)
    total = 0
    truth = []
    for h, (f, offset) in enumerate(zip(speeds, offsets)):
        if f not in variants:
            variants[f] = variant(planes, f, f_max, args.marks_follow_devices, sync)
        blob = host_bytes(variants[f], offset, f"host{h:04d}")
        with open(os.path.join(run, f"host{h:04d}.xplane.pb"), "wb") as fh:
            fh.write(blob)
        total += len(blob)
        truth.append(f"host{h:04d} {f} {offset}\n")
    with open(os.path.join(args.out, "hosts.txt"), "w") as fh:
        fh.write("# host speed_factor clock_offset_ns\n" + "".join(truth))
    with open(os.path.join(args.out, "planted.txt"), "w") as fh:
        for h, f in sorted(slow.items(), key=lambda kv: -kv[1]):
            fh.write(f"host{h:04d} {f}\n")
    print(f"{args.hosts} hosts, {total / 1e9:.2f} GB in {run}; planted slow hosts: " +
          ", ".join(f"host{h:04d} (x{f})" for h, f in sorted(slow.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
