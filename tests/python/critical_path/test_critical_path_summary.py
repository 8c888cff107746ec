"""The critical path in `summary` and in the report, on the bundled 8-device CPU capture: the
summary's section is the median steady step of `jaxprof critical-path` (its critical time by
category, its ops with most time on the path, their slack), in text, JSON and the Python API; the
report's section holds the same numbers. Where summary cannot follow the path (partial files, a
profile that marks no steps) it says so instead of a figure."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import ops_check as oc

BUNDLED = oc.DATA_DIR / "jax_cpu_8dev"


def run(jaxprof_bin, *args) -> str:
    return subprocess.run([str(jaxprof_bin), *map(str, args)], check=True, capture_output=True,
                          text=True, timeout=120).stdout


def median_steady_step(data):
    """The steady steps' median by marked duration (the lower of an even count)."""
    steps = [s for s in data["steps"] if not s["warmup"]] or data["steps"]
    marked = sorted(steps, key=lambda s: s["marked_ns"])
    return marked[(len(marked) - 1) // 2]


@pytest.fixture(scope="module")
def path_json(jaxprof_bin):
    return json.loads(run(jaxprof_bin, "critical-path", BUNDLED, "--format", "json", "--no-rank"))


def test_summary_shows_the_median_steady_step(jaxprof_bin, path_json) -> None:
    cp = json.loads(run(jaxprof_bin, "summary", BUNDLED, "--format", "json"))["critical_path"]
    assert cp["unavailable"] is None
    want = median_steady_step(path_json)
    assert cp["step"] == want["number"] and not cp["warmup"]
    assert cp["steady_steps"] == sum(not s["warmup"] for s in path_json["steps"])
    assert cp["steps"] == len(path_json["steps"])
    assert cp["step_ns"] == want["step_ns"]
    assert cp["critical_ns"] == want["critical_ns"]
    assert sum(cp["critical_ns"].values()) == pytest.approx(cp["step_ns"], rel=1e-12)
    assert len(cp["ops"]) == 5 and cp["ops_total"] == want["ops_total"]
    for got, op in zip(cp["ops"], want["ops"]):
        assert (got["name"], got["category"], got["on_path_ns"], got["slack_ns"]) == \
            (op["name"], op["category"], op["on_path_ns"], op["slack_ns"])
        assert got["on_path_share"] == pytest.approx(op["on_path_ns"] / want["step_ns"])
    text = run(jaxprof_bin, "summary", BUNDLED)
    assert f"Critical path, median steady step {want['number']} (of {cp['steady_steps']} " \
        "steady;" in text
    assert cp["ops"][0]["name"] in text.split("Critical path,")[1]


def test_python_summary_equals_the_command(jaxprof_bin) -> None:
    jaxprof = pytest.importorskip("jaxprof")
    s = jaxprof.load(BUNDLED).summary(top=3)
    want = json.loads(run(jaxprof_bin, "summary", BUNDLED, "--top", "3", "--format", "json"))
    assert s.data["critical_path"] == want["critical_path"]


def test_summary_says_when_it_has_no_path(jaxprof_bin, tmp_path: Path) -> None:
    part = tmp_path / "cpu.partial"
    run(jaxprof_bin, "partial", BUNDLED, "-o", part)
    cp = json.loads(run(jaxprof_bin, "summary", part, "--format", "json"))["critical_path"]
    assert list(cp) == ["unavailable"] and "partial" in cp["unavailable"]
    assert "Critical path: unavailable: partial" in run(jaxprof_bin, "summary", part)
    gemm = oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb"
    if gemm.is_file():
        cp = json.loads(run(jaxprof_bin, "summary", gemm, "--format", "json"))["critical_path"]
        assert "marks no steps" in cp["unavailable"]


def test_report_section_equals_the_command(jaxprof_bin, path_json, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    run(jaxprof_bin, "report", BUNDLED, "-o", html)
    page = html.read_text()
    section = re.search(r'<section id="critical-path">.*?</section>', page, re.S)
    assert section, "the report has a critical-path section"
    want = median_steady_step(path_json)
    assert f"Step {want['number']} (" in section.group(0)
    table = re.search(r'id="critical-path-ops-table".*?</table>', section.group(0), re.S)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0).split("<tbody>")[1], re.S)
    assert len(rows) == min(50, len(want["ops"]))
    for row, op in zip(rows, want["ops"]):
        values = [float(v) for v in re.findall(r'data-v="([^"]+)"', row)]
        # count, total, on path, share, slack: picoseconds in data-v, the JSON's nanoseconds.
        assert op["name"] in row
        assert values[0] == op["count"]
        assert values[1] == pytest.approx(op["total_ns"] * 1000, abs=0.5)
        assert values[2] == pytest.approx(op["on_path_ns"] * 1000, abs=0.5)
        assert values[4] == pytest.approx(op["slack_ns"] * 1000, abs=0.5)
