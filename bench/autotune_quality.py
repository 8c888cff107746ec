"""How good is device-event timing for autotuning, next to wall-clock timing?

On the same JAX candidates (chains of k dependent matmul+tanh steps: cost grows with k, so the
fastest is known), runs `jaxprof.autotune.time_candidates` TRIALS times with each timing method
(`timing="device"`: per-run device busy time from profiler events; `timing="wall"`: call +
block_until_ready) and reports per method:

  - relative spread of the samples: MAD / median and CV (std / mean), the median over trials and
    candidates;
  - how often the winner is the truly fastest candidate (smallest k), over TRIALS trials;
  - the seconds one time_candidates call takes.

Usage: PYTHONPATH=<staged jaxprof> python3 bench/autotune_quality.py [--trials 20] [--runs 10]
       [--results bench/RESULTS.md]
With --results, the section between the autotune-quality markers of that file is replaced (or
appended) with the table.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import sys

import numpy as np

START = "<!-- autotune-quality:start -->"
END = "<!-- autotune-quality:end -->"


def chain(k):
    import jax.numpy as jnp

    def f(x):
        for _ in range(k):
            x = jnp.tanh(x @ x)
        return x
    return f


def scenarios():
    import jax.numpy as jnp

    # (name, matrix size, chain lengths): the first chain length is the fastest.
    return [
        ("n=64, k=2/3/4 (dispatch-bound)", jnp.ones((64, 64), jnp.float32) / 64, [2, 3, 4]),
        ("n=128, k=4/5/6 (20-25% apart)", jnp.ones((128, 128), jnp.float32) / 128, [4, 5, 6]),
        ("n=256, k=8/9 (12% apart)", jnp.ones((256, 256), jnp.float32) / 256, [8, 9]),
    ]


def measure(trials, runs):
    from jaxprof import autotune as at

    rows = []
    for name, x, ks in scenarios():
        for timing in ("device", "wall"):
            right, mad_rel, cv, secs, sig = 0, [], [], [], 0
            for t in range(trials):
                r = at.time_candidates(chain, ks, (x,), repeats=runs, timing=timing, seed=t)
                assert r.timing == timing
                secs.append(r.elapsed_s)
                right += r.winner is not None and r.winner.config == ks[0]
                sig += r.significant
                for c in r.candidates:
                    s = np.asarray(c.samples_ns)
                    mad_rel.append(c.mad_ns / c.median_ns)
                    cv.append(float(s.std() / s.mean()))
            rows.append(dict(scenario=name, timing=timing, right=right, trials=trials,
                             significant=sig, mad_rel=statistics.median(mad_rel),
                             cv=statistics.median(cv), secs=statistics.median(secs)))
            print(f"{name:34s} {timing:6s} winner right {right}/{trials} "
                  f"(significant {sig}), MAD/median {100 * rows[-1]['mad_rel']:.1f}%, "
                  f"CV {100 * rows[-1]['cv']:.1f}%, {rows[-1]['secs']:.2f} s per call",
                  flush=True)
    return rows


def adaptive(x, ks):
    from jaxprof import autotune as at

    r = at.time_candidates(chain, ks, (x,), rel_precision=0.02, max_time_s=20)
    return r


def section(rows, trials, runs, ad):
    import jax

    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    out = [START, "## Autotuning: device-event vs wall-clock timing", "",
           f"Made by `bench/autotune_quality.py --trials {trials} --runs {runs}` "
           f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, JAX "
           f"{jax.__version__} on {jax.devices()[0].platform.upper()}, {os.cpu_count()} cores, "
           f"load average {load} at the end). Each trial is one `time_candidates` call, "
           f"{runs} runs per candidate, interleaved in shuffled order; candidates are chains of "
           "k matmul+tanh steps, so the smallest k is the true winner. Spread: median over "
           "trials and candidates of MAD/median and CV of one candidate's samples.", "",
           "| candidates | timing | winner right | significant | MAD / median | CV | "
           "s per call |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r['scenario']} | {r['timing']} | {r['right']}/{r['trials']} | "
                   f"{r['significant']}/{r['trials']} | {100 * r['mad_rel']:.1f}% | "
                   f"{100 * r['cv']:.1f}% | {r['secs']:.2f} |")
    out += ["", f"Adaptive repeats (`rel_precision=0.02`, `max_time_s=20`) on the second row's "
            f"candidates: {ad.rounds} rounds, runs per candidate "
            f"{[c.runs for c in ad.candidates]}, {ad.elapsed_s:.1f} s, precision "
            f"{'reached' if ad.precision_reached else 'not reached'} (achieved "
            + ", ".join(f"{100 * c.rel_precision:.1f}%" for c in ad.candidates) + ").", END]
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--results", help="write the section into this markdown file")
    a = ap.parse_args(argv)
    rows = measure(a.trials, a.runs)
    x, ks = scenarios()[1][1:]
    ad = adaptive(x, ks)
    print(ad)
    text = section(rows, a.trials, a.runs, ad)
    print(text)
    if a.results:
        old = open(a.results).read() if os.path.exists(a.results) else ""
        pat = re.compile(re.escape(START) + ".*?" + re.escape(END) + "\n?", re.S)
        new = pat.sub(lambda m: text, old) if pat.search(old) else old.rstrip("\n") + "\n\n" + text
        with open(a.results, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main(sys.argv[1:])
