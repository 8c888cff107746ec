"""docs/compatibility.md against what it is made from, and the installed JAX through the same
checks as every version of the matrix (bench/jax_versions.py, tests/python/compat_checks.py).

(a) The page is what scripts/gen_compatibility.py makes from bench/compat/*.json: it cannot drift.
(b) Every stored version and fixture passed its checks, or the page lists the failure with a
    known difference that explains it.
(c) A fresh capture of tests/data/capture_train_step.py with the JAX of this interpreter passes
    the same checks, with the statuses the matrix stored for that version (when it has it)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import compat_checks as cc
import ops_check as oc

MATRIX = oc.ROOT / "bench" / "compat" / "jax_versions.json"
PAGE = oc.ROOT / "docs" / "compatibility.md"
GENERATOR = oc.ROOT / "scripts" / "gen_compatibility.py"


def matrix():
    return json.loads(MATRIX.read_text())


def test_page_is_what_the_generator_makes():
    proc = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_matrix_covers_the_range_it_claims():
    m = matrix()
    captured = [v for v, r in m["versions"].items() if r.get("captured")]
    assert "0.4.30" in captured
    assert m["index_versions"][-1] in captured  # the newest release at the time of the run
    for v in captured:
        assert set(m["versions"][v]["checks"]) == set(cc.CHECKS), v


def test_every_failure_is_on_the_page():
    m, page = matrix(), PAGE.read_text()
    for section in ("versions", "fixtures"):
        for name, r in m.get(section, {}).items():
            if not r.get("captured", True):
                assert f"- {name}: {r['failed_stage']} failed" in page
                continue
            for check, c in r["checks"].items():
                assert c["status"] in ("pass", "fail", "absent", "n/a"), (name, check)
                assert c["passed"] == (c["status"] != "fail")
                if c["status"] == "fail":
                    assert f"- {name}, {check} (" in page, (name, check)
    # Every failure has its cause written down (bench/compat/known_differences.json).
    assert "**unexplained**" not in page


@pytest.fixture(scope="module")
def installed_capture(tmp_path_factory):
    jax = pytest.importorskip("jax", reason="jax is needed to capture a profile")
    out = tmp_path_factory.mktemp("compat")
    script = oc.ROOT / "tests" / "data" / "capture_train_step.py"
    proc = subprocess.run([sys.executable, str(script), str(out / "log"), "--info",
                           str(out / "info.json")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return jax.__version__, out / "log"


def test_installed_jax_passes_the_matrix_checks(jaxprof_bin, installed_capture):
    version, log = installed_capture
    got = cc.check_capture(jaxprof_bin, log)
    failed = {c: r["error"] for c, r in got["checks"].items() if r["status"] == "fail"}
    assert not failed, failed
    stored = matrix()["versions"].get(version)
    if stored and stored.get("captured"):
        # XProf is optional here (n/a without it); every other status is the matrix's.
        statuses = {c: r["status"] for c, r in got["checks"].items() if c != "xprof"}
        assert statuses == {c: r["status"] for c, r in stored["checks"].items() if c != "xprof"}
