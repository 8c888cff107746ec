#!/usr/bin/env python3
"""A run directory of many hosts' XSpace profiles, made from one real capture, for the multi-host
benchmarks (bench/multihost.sh). Not committed data: it writes under the directory given.

Each host is the project's own 8-device JAX CPU capture (tests/data/jax_cpu_8dev), lengthened
with ../shared/tools/scale_xplane.py to about --host-mb, then given a speed of its own, as one
host of a synchronous job would be:
- compute on host h runs at speed 1/f_h (f_h near 1, a few planted slow hosts well above);
- collectives end at the same instant on every host (the slowest host decides when), so each
  host's collective starts when its own compute is done and lasts until the common end: fast
  hosts wait in them, the slowest does not. On a line with collectives, time is warped so that
  compute stretches by f_h and every collective ends where the slowest host's would; lines
  without collectives (the Python thread with the step marks) stretch by f_h, so that a slow
  host's steps are longer; with --marks-follow-devices they follow the host's first line with
  collectives instead (the host waits for its devices, as a synchronous job's hosts do: every
  host's steps last as long, and the slow host shows as the one the others wait for);
- every host's clock is offset by up to --clock-us microseconds.
Hosts are host0000 ... host{N-1}; the planted slow hosts (printed, and written to
planted.txt) are spread so that the first 10 and the first 100 hosts hold some; hosts.txt holds
every host's speed factor and clock offset.

usage: make_hosts.py OUT_DIR [--hosts 1000] [--host-mb 5.5] [--slow 3] [--seed 0]
                     [--marks-follow-devices]
"""
import argparse
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
    """Time on a host of speed 1/f: compute stretched by f, collectives ending where the slowest
    host's (f_max) would."""
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
    import bisect

    starts = [p[0] for p in points]

    def w(t):
        i = bisect.bisect_right(starts, t) - 1
        if i < 0:
            return round(f * t)
        a, w_a, b, w_b = points[i]
        if t <= b:
            return round(w_a + (w_b - w_a) * (t - a) / max(b - a, 1))
        return round(w_b + f * (t - b))

    return w


def host_warp(planes, f, f_max):
    """The host's own clock warp for lines without collectives (the Python thread with its step
    marks, launches): that of its first line with collectives, on the absolute clock. The host
    waits for its devices, so its marks stay with them rather than drifting by f over the
    capture (which a synchronous job's hosts do not do)."""
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


def variant(planes, f, f_max, marks_follow_devices=False):
    """The planes of a host of speed 1/f, each line as (head, timestamp, events bytes)."""
    out = []
    host = host_warp(planes, f, f_max) if marks_follow_devices else None
    for p in planes:
        if isinstance(p, (bytes, bytearray, memoryview)):
            out.append(bytes(p))
            continue
        head, lines = p
        new_lines = []
        for lhead, ts, events, colls in lines:
            w = line_warp(colls, ts, f, f_max, host)
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
    ap.add_argument("--marks-follow-devices", action="store_true",
                    help="lines without collectives follow the host's devices (no drift)")
    ap.add_argument("--jaxprof", default=os.path.join(HERE, "..", "build", "jaxprof"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    data = open(SOURCE, "rb").read()
    one, two = len(sx.scale_space(data, 1)), len(sx.scale_space(data, 2))
    copies = max(1, round((args.host_mb * 1e6 - (one - (two - one))) / (two - one)))
    base = sx.scale_space(data, copies)
    planes = parse(base, collective_names(args.jaxprof, SOURCE))
    slow = {h: f for h, f in zip(SLOW_HOSTS, SLOW_FACTORS[: args.slow]) if h < args.hosts}
    f_max = max([1.02] + list(slow.values()))
    normal = [1.0 + 0.02 * (2 * k / max(args.variants - 1, 1) - 1) for k in range(args.variants)]
    variants = {}
    run = os.path.join(args.out, "plugins", "profile", "bench")
    os.makedirs(run, exist_ok=True)
    total = 0
    truth = []
    for h in range(args.hosts):
        f = slow.get(h, normal[rng.randrange(len(normal))])
        if f not in variants:
            variants[f] = variant(planes, f, f_max, args.marks_follow_devices)
        offset = round(rng.uniform(-args.clock_us, args.clock_us) * 1000)
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
