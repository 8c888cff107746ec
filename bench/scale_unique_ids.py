#!/usr/bin/env python3
"""A large GPU profile whose copies keep kernel-launch pairing realistic.

../shared/tools/scale_xplane.py repeats each line COPIES times, so every copy of
a kernel and of its host launch carries the same correlation_id: the launch
index then holds one launch per original id. Real long captures number every
launch anew. This wrapper scales the same way and adds copy * STRIDE to each
correlation_id stat, so ids stay unique (and dense, as tracers count them up).

usage: scale_unique_ids.py IN.xplane.pb OUT.xplane.pb COPIES [STRIDE]
       (STRIDE defaults to one more than the largest correlation_id in IN)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "shared", "tools"))
import scale_xplane as sx  # noqa: E402

# XPlane.stat_metadata (map entry: key 1, XStatMetadata value 2 with name 2), XStat fields.
PLANE_LINES, PLANE_STAT_METADATA = 3, 5
STAT_METADATA_ID, STAT_UINT64, STAT_INT64 = 1, 3, 4


def correlation_stat_ids(plane):
    ids = set()
    for fn, wt, entry, _ in sx.fields(plane):
        if fn != PLANE_STAT_METADATA or wt != 2:
            continue
        for efn, _, meta, _ in sx.fields(entry):
            if efn != 2:
                continue
            sid = name = None
            for mfn, _, v, _ in sx.fields(meta):
                if mfn == 1:
                    sid = v
                elif mfn == 2:
                    name = v
            if name == b"correlation_id":
                ids.add(sid)
    return ids


def stat_ints(stat, wanted):
    """(is a correlation_id stat, its integer value or None)."""
    fl = list(sx.fields(stat))
    is_corr = any(fn == STAT_METADATA_ID and wt == 0 and v in wanted for fn, wt, v, _ in fl)
    value = next((v for fn, wt, v, _ in fl if fn in (STAT_UINT64, STAT_INT64) and wt == 0), None)
    return is_corr, value


def shift_stat(stat, wanted, delta):
    if delta == 0 or not stat_ints(stat, wanted)[0]:
        return stat
    out = bytearray()
    for fn, wt, v, raw in sx.fields(stat):
        if fn in (STAT_UINT64, STAT_INT64) and wt == 0:
            out += sx.write_varint(fn << 3) + sx.write_varint(v + delta)
        else:
            out += raw
    return bytes(out)


def scale_line(line, copies, wanted, stride):
    """scale_xplane's copies of the line, each copy's correlation ids moved on by copy * stride."""
    scaled = sx.scale_line(line, copies)
    originals = sum(1 for fn, wt, _, _ in sx.fields(line) if fn == 4 and wt == 2)
    if not wanted or originals == 0:
        return scaled
    out, j = bytearray(), 0  # the copies follow each other, `originals` events each
    for fn, wt, ev, raw in sx.fields(scaled):
        if fn != 4 or wt != 2:
            out += raw
            continue
        delta = (j // originals) * stride
        j += 1
        body = bytearray()
        for efn, ewt, val, eraw in sx.fields(ev):
            body += sx.ld(4, shift_stat(val, wanted, delta)) if efn == 4 and ewt == 2 else eraw
        out += sx.ld(4, bytes(body))
    return bytes(out)


def largest_id(space):
    top = 0
    for fn, wt, plane, _ in sx.fields(space):
        if fn != 1 or wt != 2:
            continue
        wanted = correlation_stat_ids(plane)
        for pfn, pwt, line, _ in sx.fields(plane):
            if pfn != PLANE_LINES or pwt != 2 or not wanted:
                continue
            for lfn, lwt, ev, _ in sx.fields(line):
                if lfn != 4 or lwt != 2:
                    continue
                for efn, ewt, stat, _ in sx.fields(ev):
                    if efn == 4 and ewt == 2:
                        is_corr, v = stat_ints(stat, wanted)
                        if is_corr and v is not None:
                            top = max(top, v)
    return top


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    data = open(argv[1], "rb").read()
    copies = int(argv[3])
    stride = int(argv[4]) if len(argv) == 5 else largest_id(data) + 1
    out = bytearray()
    for fn, wt, plane, raw in sx.fields(data):
        if fn != 1 or wt != 2:
            out += raw
            continue
        wanted = correlation_stat_ids(plane)
        body = bytearray()
        for pfn, pwt, val, praw in sx.fields(plane):
            if pfn == PLANE_LINES and pwt == 2:
                body += sx.ld(PLANE_LINES, scale_line(val, copies, wanted, stride))
            else:
                body += praw
        out += sx.ld(1, bytes(body))
    open(argv[2], "wb").write(out)
    print(f"{argv[2]}: {copies} copies, correlation ids every {stride}, {len(out) / 1e6:.1f} MB",
          file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
