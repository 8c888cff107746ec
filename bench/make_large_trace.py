"""Writes a large Chrome trace for benchmarking the trace importer: the events of a real trace
(default: the 8-device CPU capture) repeated with shifted timestamps until the output reaches the
requested size. Output goes where you say (use /tmp, never the repository).

    python3 bench/make_large_trace.py /tmp/large.trace.json --mb 1000 [--gzip]
"""
from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT / "tests/data/jax_cpu_8dev/plugins/profile/session/vm.trace.json.gz"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--source", default=str(DEFAULT_SOURCE))
    ap.add_argument("--mb", type=float, default=1000.0, help="target uncompressed size in MB")
    ap.add_argument("--gzip", action="store_true", help="also write OUT.gz")
    args = ap.parse_args()

    events = json.load(gzip.open(args.source))["traceEvents"]
    meta = [e for e in events if e.get("ph") == "M"]
    timed = [e for e in events if e.get("ph") == "X"]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) + 1.0
    # Each event as text with a placeholder for its timestamp, written like XLA's exporter (%.17g).
    templates = []
    for e in timed:
        e = dict(e)
        ts = e.pop("ts")
        text = json.dumps(e, separators=(",", ":"))
        head, tail = text[:text.index(',"')], text[text.index(',"'):]
        templates.append((ts, head + ',"ts":%s' + tail))
    target = int(args.mb * 1e6)
    written = 0
    copies = 0
    with open(args.out, "w") as out:
        out.write('{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[')
        out.write(",".join(json.dumps(m, separators=(",", ":")) for m in meta))
        while written < target:
            shift = copies * span
            chunk = "," + ",".join(t % ("%.17g" % (ts + shift)) for ts, t in templates)
            out.write(chunk)
            written += len(chunk)
            copies += 1
        out.write(",{}]}")
    print(f"{args.out}: {copies} copies of {len(timed)} events, {written / 1e6:.0f} MB")
    if args.gzip:
        with open(args.out, "rb") as src, gzip.open(args.out + ".gz", "wb", compresslevel=1) as dst:
            while block := src.read(1 << 24):
                dst.write(block)


if __name__ == "__main__":
    main()
