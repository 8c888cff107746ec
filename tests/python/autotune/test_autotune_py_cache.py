"""jaxprof.autotune.Cache (the C++ AutotuneCache through the binding): put/get/list/export/
import/clear agree with the CLI, 8 writer processes using the Python API lose nothing, and a
writer killed with SIGKILL in the middle of its writes leaves a readable cache holding only whole
transactions. No JAX needed."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

import jaxprof
from jaxprof import autotune as at

WRITER = textwrap.dedent("""
    import sys
    from jaxprof.autotune import Cache, CacheEntry
    db, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    c = Cache(db)
    for i in range(n):
        c.put([CacheEntry("cpu", "matmul@v1", f"w{w}-{i}", {"writer": w, "i": i},
                          [1.0, 2.0, 3.0], 2.0, 1.0, (1.0, 3.0)),
               CacheEntry("cpu", "shared@v1", "k", {"writer": w, "i": i})])
""")

KILLED = textwrap.dedent("""
    import sys
    from jaxprof.autotune import Cache, CacheEntry
    c = Cache(sys.argv[1])
    b = 0
    while True:  # batches of 300 entries, each one put (one transaction)
        c.put([CacheEntry("gpu", f"op{b}@v1", str(i), {"b": b, "i": i}, [float(i)] * 20)
               for i in range(300)])
        b += 1
""")


def test_python_cache_round_trip_matches_cli(jaxprof_bin, tmp_path):
    db = tmp_path / "a.sqlite"
    c = at.Cache(db)
    assert c.path == str(db) and len(c) == 0 and c.get("cpu", "x@v1", "k") is None
    e = at.CacheEntry("platform=cpu;kind=cpu", "attn@v3", "abc123",
                      {"block_q": 64, "order": ["a", "b"]}, [10.5, 11.0, 12.25], 11.0, 0.5,
                      (10.5, 12.25))
    assert c.put(e) == 1
    got = c.get("platform=cpu;kind=cpu", "attn@v3", "abc123")
    assert got.config == {"block_q": 64, "order": ["a", "b"]}
    assert got.samples_ns == [10.5, 11.0, 12.25] and got.ci95_ns == (10.5, 12.25)
    assert got.measured_at.endswith("Z") and got.host  # filled in on write
    c.put(at.CacheEntry("tpu", "attn@v3", "abc123", 7))
    assert [x.device for x in c.list()] == ["platform=cpu;kind=cpu", "tpu"]
    assert [x.device for x in c.list(device="tpu")] == ["tpu"]
    # The CLI reads what Python wrote, and Python reads what the CLI exports.
    cli = subprocess.run([str(jaxprof_bin), "cache", "list", "--db", str(db), "--format", "json"],
                         capture_output=True, text=True, check=True)
    assert json.loads(cli.stdout) == json.loads(c.export())
    out = tmp_path / "out.json"
    c.export(out, device="tpu")
    c2 = at.Cache(tmp_path / "b.sqlite")
    assert c2.import_(out) == 1 and c2.list()[0].config == 7
    assert c2.import_(json.loads(c.export())) == 2
    assert c2.import_(c.export()) == 2 and len(c2) == 2
    assert c.clear(device="tpu") == 1 and len(c) == 1
    assert c.clear() == 1 and len(c) == 0
    assert "<table>" in c2._repr_html_() and "2 entries" in repr(c2)
    with pytest.raises(jaxprof.ProfileError, match="entries"):
        c2.import_('{"format": "jaxprof-autotune-cache"}')


def test_default_cache_path_honours_env_and_needs_no_jax(tmp_path):
    env = dict(os.environ, JAXPROF_CACHE=str(tmp_path / "env.sqlite"))
    code = ("import sys, jaxprof; at = jaxprof.autotune; print(at.default_cache_path()); "
            "at.Cache(); at.extract_labels('jaxprof_ops#a.v1:k'); print('jax' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    # The cache and labels need no JAX: analysis-only installs keep working.
    assert p.stdout.split() == [str(tmp_path / "env.sqlite"), "False"]
    assert (tmp_path / "env.sqlite").exists()


def test_eight_python_writers_lose_nothing(tmp_path):
    db = tmp_path / "w.sqlite"
    at.Cache(db)  # create it first so that the writers race only on writes
    n = 15
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(w), str(n)],
                              stderr=subprocess.PIPE, text=True) for w in range(8)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    got = at.Cache(db).list()
    keys = {(e.op, e.call_key) for e in got}
    assert keys == {("matmul@v1", f"w{w}-{i}") for w in range(8) for i in range(n)} | {
        ("shared@v1", "k")}
    for e in got:
        if e.op == "matmul@v1":
            w, i = map(int, e.call_key[1:].split("-"))
            assert e.config == {"writer": w, "i": i} and e.median_ns == 2.0
        else:  # last writer wins: some writer's final write
            assert e.config["i"] == n - 1


def test_python_writer_killed_mid_write_leaves_whole_transactions(tmp_path):
    db = tmp_path / "k.sqlite"
    p = subprocess.Popen([sys.executable, "-c", KILLED, str(db)], stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline:
        if db.exists() and len(at.Cache(db).list(op="op2@")) > 0:
            break
        time.sleep(0.02)
    time.sleep(0.1)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    got = at.Cache(db).list()
    assert len(got) >= 900 and len(got) % 300 == 0
    batches = {}
    for e in got:
        batches.setdefault(e.op, set()).add(int(e.call_key))
    assert all(v == set(range(300)) for v in batches.values())
    at.Cache(db).put(at.CacheEntry("gpu", "after@v1", "x", True))
    assert len(at.Cache(db).list()) == len(got) + 1
