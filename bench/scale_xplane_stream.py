#!/usr/bin/env python3
"""Write the same bytes as ../shared/tools/scale_xplane.py, without holding the output in memory.

scale_xplane.py builds the whole scaled XSpace in memory and copies it a few times on the
way out (about 3x the output at its peak: 15 GB for a 5 GB profile). This calls its own
scale_line() on each XLine, in worker processes, writes each scaled line to a scratch file
beside OUT, and then writes OUT field by field with the plane lengths computed from the
line lengths: the peak is about twice the largest scaled line per worker, and the file is
byte for byte what scale_xplane.py writes (bench/large_profiles.sh checks that on a small
size before it uses this).

usage: scale_xplane_stream.py SCALE_XPLANE_PY IN.xplane.pb OUT.xplane.pb --target-mb MB [--jobs N]
"""
import importlib.util
import os
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

scaler = None


def load_scaler(path):
    spec = importlib.util.spec_from_file_location("scale_xplane", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def init_worker(path):
    global scaler
    scaler = load_scaler(path)


def scale_one(job):
    """Scale one line into its own scratch file; returns the scaled line's length."""
    line, copies, stat_id, out = job
    data = scaler.scale_line(line, copies, stat_id)
    with open(out, "wb") as f:
        f.write(data)
    return len(data)


def copies_for(s, data, target_mb):
    """The copy count scale_xplane.py --target-mb picks (the same arithmetic)."""
    one = len(s.scale_space(data, 1))
    two = len(s.scale_space(data, 2))
    per_copy = max(two - one, 1)
    return max(1, round((float(target_mb) * 1e6 - (one - per_copy)) / per_copy))


def main(argv):
    args = argv[1:]
    jobs = os.cpu_count() or 1
    if "--jobs" in args:
        i = args.index("--jobs")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 5 or args[3] != "--target-mb":
        sys.exit(__doc__)
    s = load_scaler(args[0])
    data = open(args[1], "rb").read()
    out_path = args[2]
    copies = copies_for(s, data, args[4])

    # Every field of the space; planes as their fields, lines to be scaled by the workers.
    layout, work = [], []
    scratch = tempfile.mkdtemp(prefix="scale_stream_", dir=os.path.dirname(os.path.abspath(out_path)))
    try:
        for fn, wt, val, raw in s.fields(data):
            if not (fn == 1 and wt == 2):
                layout.append(("raw", raw))
                continue
            stat_id = s.device_offset_id(val)
            parts = []
            for f2, w2, v2, r2 in s.fields(val):
                if f2 == 3 and w2 == 2:
                    path = os.path.join(scratch, f"line{len(work)}")
                    work.append((bytes(v2), copies, stat_id, path))
                    parts.append(("line", len(work) - 1))
                else:
                    parts.append(("raw", r2))
            layout.append(("plane", parts))
        order = sorted(range(len(work)), key=lambda i: -len(work[i][0]))  # largest first
        lengths = [0] * len(work)
        with ProcessPoolExecutor(max_workers=jobs, initializer=init_worker,
                                 initargs=(args[0],)) as pool:
            for i, n in zip(order, pool.map(scale_one, [work[i] for i in order])):
                lengths[i] = n

        def head(fn, n):
            return s.write_varint((fn << 3) | 2) + s.write_varint(n)

        total = 0
        with open(out_path, "wb") as out:
            for kind, item in layout:
                if kind == "raw":
                    out.write(item)
                    total += len(item)
                    continue
                body = sum(len(p) if k == "raw" else len(head(3, lengths[p])) + lengths[p]
                           for k, p in item)
                h = head(1, body)
                out.write(h)
                total += len(h) + body
                for k, p in item:
                    if k == "raw":
                        out.write(p)
                        continue
                    out.write(head(3, lengths[p]))
                    with open(work[p][3], "rb") as f:
                        shutil.copyfileobj(f, out, 16 << 20)
                    os.remove(work[p][3])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{out_path}: {copies} copies, {total / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
