"""`jaxprof cache`: 8 processes writing at once lose no entry, a writer killed with SIGKILL
mid-loop leaves a consistent, readable database, and export/import round-trips."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

WRITERS = 8
PER_WRITER = 12


def entry(device, op, key, config, median=100.0):
    return {"device": device, "op": op, "call_key": key, "config": config,
            "samples_ns": [median - 1, median, median + 1], "median_ns": median, "mad_ns": 1,
            "ci95_ns": [median - 1, median + 1], "measured_at": "", "host": ""}


def write_export(path: Path, entries):
    path.write_text(json.dumps({"format": "jaxprof-autotune-cache", "version": 1,
                                "entries": entries}))


def cache(jaxprof_bin, db, *args, check=True):
    proc = subprocess.run([str(jaxprof_bin), "cache", *map(str, args), "--db", str(db)],
                          capture_output=True, text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def listed(jaxprof_bin, db):
    return json.loads(cache(jaxprof_bin, db, "list", "--format", "json").stdout)["entries"]


def test_cache_concurrent_writers_lose_nothing(jaxprof_bin, tmp_path):
    db = tmp_path / "tune.sqlite"
    scripts = []
    for w in range(WRITERS):
        files = []
        for i in range(PER_WRITER):
            f = tmp_path / f"w{w}_{i}.json"
            # Distinct keys per writer, plus one key every writer updates (last writer wins).
            write_export(f, [entry("cpu", "matmul@v1", f"w{w}-{i}", {"writer": w, "i": i}),
                             entry("cpu", "shared@v1", "k", {"writer": w, "i": i})])
            files.append(str(f))
        scripts.append(" && ".join(f"'{jaxprof_bin}' cache import '{f}' --db '{db}'"
                                   for f in files))
    procs = [subprocess.Popen(["sh", "-c", s], stderr=subprocess.PIPE, text=True)
             for s in scripts]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    got = listed(jaxprof_bin, db)
    keys = {(e["op"], e["call_key"]) for e in got}
    assert keys == {("matmul@v1", f"w{w}-{i}") for w in range(WRITERS)
                    for i in range(PER_WRITER)} | {("shared@v1", "k")}
    for e in got:
        if e["op"] == "matmul@v1":
            w, i = map(int, e["call_key"][1:].split("-"))
            assert e["config"] == {"writer": w, "i": i}
            assert e["samples_ns"] == [99, 100, 101] and e["host"] and e["measured_at"]
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_cache_survives_sigkill_mid_write(jaxprof_bin, tmp_path):
    db = tmp_path / "killed.sqlite"
    batch = 400
    files = []
    for b in range(30):
        f = tmp_path / f"batch{b}.json"
        write_export(f, [entry("gpu", f"op{b}@v1", str(i), {"b": b, "i": i}) for i in range(batch)])
        files.append(str(f))
    loop = "; ".join(f"'{jaxprof_bin}' cache import '{f}' --db '{db}'" for f in files)
    p = subprocess.Popen(["sh", "-c", loop], stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not (db.exists() and db.stat().st_size > 0):
        time.sleep(0.01)
    time.sleep(0.3)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    got = listed(jaxprof_bin, db)
    # One transaction per import: whole batches only, never part of one.
    assert len(got) % batch == 0
    # Still writable after the kill.
    write_export(tmp_path / "after.json", [entry("gpu", "after@v1", "x", {"ok": True})])
    cache(jaxprof_bin, db, "import", tmp_path / "after.json")
    assert len(listed(jaxprof_bin, db)) == len(got) + 1


def test_cache_cli_round_trip(jaxprof_bin, tmp_path):
    db, db2 = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    write_export(tmp_path / "in.json", [entry("cpu", "attn@v3", "f32[8,128]", {"block_q": 64}),
                                        entry("tpu", "attn@v3", "bf16[8,128]", {"block_q": 128})])
    cache(jaxprof_bin, db, "import", tmp_path / "in.json")
    cache(jaxprof_bin, db, "export", "-o", tmp_path / "out.json")
    cache(jaxprof_bin, db2, "import", tmp_path / "out.json")
    assert listed(jaxprof_bin, db2) == listed(jaxprof_bin, db)
    shown = json.loads(cache(jaxprof_bin, db2, "show", "tpu", "attn@v3", "bf16[8,128]").stdout)
    assert shown["entries"][0]["config"] == {"block_q": 128}
    assert "attn@v3" in cache(jaxprof_bin, db2, "list").stdout
    missing = cache(jaxprof_bin, db2, "show", "tpu", "attn@v3", "nope", check=False)
    assert missing.returncode == 2
    cache(jaxprof_bin, db2, "clear", "--device", "tpu")
    assert [e["device"] for e in listed(jaxprof_bin, db2)] == ["cpu"]
    env = dict(os.environ, JAXPROF_CACHE=str(tmp_path / "env.sqlite"))
    subprocess.run([str(jaxprof_bin), "cache", "import", str(tmp_path / "in.json")], env=env,
                   check=True, capture_output=True)
    assert (tmp_path / "env.sqlite").exists()
