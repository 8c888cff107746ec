#!/usr/bin/env python3
"""Give the copies of a scaled TPU profile their own device clock, for benchmarks.

../shared/tools/scale_xplane.py repeats each line's events COPIES times, shifting `offset_ps`
and keeping every stat byte for byte: copy k of a TPU op then carries the same
`device_offset_ps` as copy 0, so on the device clock all copies of an op lie on top of each
other (each nested in the one before), which no real profile does. This shifts each copy's
`device_offset_ps` by the same amount its `offset_ps` was shifted, so that the scaled profile
reads like a longer run on the device clock too.

usage: scale_device_clock.py SCALED.xplane.pb COPIES OUT.xplane.pb
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from protowire import fields, signed  # noqa: E402
from protowire import len_field as ld  # noqa: E402
from protowire import read_varint as varint  # noqa: E402
from protowire import varint as put_varint  # noqa: E402












def device_offset_id(plane):
    for fn, wt, val, _ in fields(plane):
        if fn == 5 and wt == 2:  # stat_metadata map entry: key=1, value=2 (XStatMetadata)
            key, name = None, None
            for f2, w2, v2, _ in fields(val):
                if f2 == 1 and w2 == 0:
                    key = v2
                elif f2 == 2 and w2 == 2:
                    for f3, w3, v3, _ in fields(v2):
                        if f3 == 2 and w3 == 2:
                            name = bytes(v3)
            if name == b"device_offset_ps":
                return key
    return None


def shift_event(ev, stat_id, shift):
    out = bytearray()
    for fn, wt, val, raw in fields(ev):
        if fn == 4 and wt == 2:
            parts = list(fields(val))
            if parts and parts[0][0] == 1 and parts[0][2] == stat_id:
                body = bytearray(parts[0][3])
                for f2, w2, v2, r2 in parts[1:]:
                    if f2 in (3, 4) and w2 == 0:
                        r2 = put_varint((f2 << 3) | 0) + put_varint(signed(v2) + shift)
                    body += r2
                out += ld(4, bytes(body))
                continue
        out += raw
    return bytes(out)


def offset_of(ev):
    for fn, wt, val, _ in fields(ev):
        if fn == 2 and wt == 0:
            return signed(val)
    return None


def fix_line(line, stat_id, copies):
    head, events = [], []
    for fn, wt, val, raw in fields(line):
        if fn == 4 and wt == 2:
            events.append(val)
        else:
            head.append(raw)
    if not events or len(events) % copies:
        return line
    n = len(events) // copies
    out = bytearray(b"".join(head))
    base = offset_of(events[0])
    for k in range(copies):
        first = offset_of(events[k * n])
        shift = 0 if first is None or base is None else first - base
        for ev in events[k * n:(k + 1) * n]:
            out += ld(4, shift_event(ev, stat_id, shift) if shift else ev)
    return bytes(out)


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    data, copies = open(argv[1], "rb").read(), int(argv[2])
    out = bytearray()
    for fn, wt, val, raw in fields(data):
        if fn == 1 and wt == 2:
            stat_id = device_offset_id(val)
            if stat_id is None:
                out += raw
                continue
            plane = bytearray()
            for f2, w2, v2, r2 in fields(val):
                plane += ld(3, fix_line(v2, stat_id, copies)) if f2 == 3 and w2 == 2 else r2
            out += ld(1, bytes(plane))
        else:
            out += raw
    open(argv[3], "wb").write(out)
    print(f"{argv[3]}: device clocks of {copies} copies shifted, {len(out) / 1e6:.1f} MB",
          file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
