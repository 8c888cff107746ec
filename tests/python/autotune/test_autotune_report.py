"""`jaxprof autotune-report` on a real JAX CPU capture: three jitted candidates named
autotune_fn_<id> of clearly different cost run interleaved in shuffled order; the smallest must
win, significantly, and the largest must rank last."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jax", reason="jax is needed to capture profiles (pip install jax)")

CAPTURE = textwrap.dedent("""
    import random, sys
    import jax, jax.numpy as jnp

    def candidate(i, n):
        def f(x):
            y = x
            for _ in range(4):
                y = jnp.tanh(y @ y)
            return y
        f.__name__ = f.__qualname__ = f"autotune_fn_{i}"  # module jit_autotune_fn_<i>
        return jax.jit(f), jnp.ones((n, n), jnp.float32)

    cands = [candidate(0, 32), candidate(1, 192), candidate(2, 512)]
    for f, x in cands:
        f(x).block_until_ready()  # compile outside the trace
    rng = random.Random(0)
    jax.profiler.start_trace(sys.argv[1])
    for _ in range(7):
        order = list(range(len(cands)))
        rng.shuffle(order)
        for i in order:
            f, x = cands[i]
            f(x).block_until_ready()
    jax.profiler.stop_trace()
""")


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("autotune")
    script = out / "capture.py"
    script.write_text(CAPTURE)
    proc = subprocess.run([sys.executable, str(script), str(out / "log")], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / "log"


def run(jaxprof_bin, *args, check=True):
    proc = subprocess.run([str(jaxprof_bin), "autotune-report", *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_autotune_report_ranks_real_candidates(jaxprof_bin, capture):
    r = json.loads(run(jaxprof_bin, capture, "--format", "json").stdout)
    assert r["source"] == "module executions"
    ids = [c["id"] for c in r["candidates"]]
    assert sorted(ids) == ["0", "1", "2"]  # no candidate dropped
    assert r["winner"] == "0" and ids[-1] == "2"
    assert r["runner_up"] == "1" and r["significant"] and r["ci_disjoint"]
    assert r["speedup"] > 1
    for c in r["candidates"]:
        # Every run is kept: 7 traced runs, all samples (compiled before the trace: no warm-up).
        assert not c["warmup_samples_ns"]
        assert c["runs"] == len(c["samples_ns"]) == 7
        assert c["names"] == [f"jit_autotune_fn_{c['id']}"]
        s = sorted(c["samples_ns"])
        assert s[0] <= c["ci95_ns"][0] <= c["median_ns"] <= c["ci95_ns"][1] <= s[-1]
        assert c["median_ns"] == pytest.approx((s[3]))
        assert c["mad_ns"] >= 0
        # Busy time (union of the run's ops) never exceeds the run's span.
        assert all(b <= sp for b, sp in zip(c["samples_ns"], c["span_samples_ns"]))
    medians = [c["median_ns"] for c in r["candidates"]]
    assert medians == sorted(medians)


def test_autotune_report_is_reproducible_and_offers_every_format(jaxprof_bin, capture):
    a = run(jaxprof_bin, capture, "--format", "json").stdout
    assert a == run(jaxprof_bin, capture, "--format", "json").stdout  # fixed bootstrap seed
    rows = list(csv.DictReader(io.StringIO(run(jaxprof_bin, capture, "--format", "csv").stdout)))
    assert [row["id"] for row in rows] == [c["id"] for c in json.loads(a)["candidates"]]
    assert len(rows[0]["samples_ns"].split(";")) == 7
    table = run(jaxprof_bin, capture).stdout
    assert "winner: 0" in table and "significant" in table
    warm = json.loads(run(jaxprof_bin, capture, "--include-warmup", "--format", "json").stdout)
    assert all(c["runs"] == 7 and not c["warmup_samples_ns"] for c in warm["candidates"])


def test_autotune_report_pattern_options(jaxprof_bin, capture):
    # Without a group the whole match names the candidate.
    r = json.loads(run(jaxprof_bin, capture, "--pattern", "autotune_fn_[01]$",
                       "--format", "json").stdout)
    assert [c["id"] for c in r["candidates"]] == ["autotune_fn_0", "autotune_fn_1"]
    none = run(jaxprof_bin, capture, "--pattern", "no_such_fn_(\\d+)")
    assert "no candidate matches" in none.stdout
    bad = run(jaxprof_bin, capture, "--pattern", "(", check=False)
    assert bad.returncode == 2 and "pattern" in bad.stderr


def test_python_autotune_report_equals_the_cli(jaxprof_bin, capture):
    import jaxprof

    prof = jaxprof.load(capture)
    cli = json.loads(run(jaxprof_bin, capture, "--format", "json").stdout)
    assert cli.pop("input")["hosts"]  # what the CLI read: Profile.input in Python
    r = prof.autotune_report()
    assert r.data == cli
    assert [row["id"] for row in r.rows] == ["0", "1", "2"]
    warm = prof.autotune_report(include_warmup=True, resamples=100)
    warm_cli = json.loads(run(jaxprof_bin, capture, "--include-warmup", "--resamples", "100",
                              "--format", "json").stdout)
    warm_cli.pop("input")
    assert warm_cli == warm.data
    with pytest.raises(jaxprof.ProfileError, match="pattern"):
        prof.autotune_report("(")
