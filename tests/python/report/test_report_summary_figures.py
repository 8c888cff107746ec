"""The report's summary figures are `jaxprof summary`'s: compute, exposed communication, exposed
memcpy and idle, each a share of the steady device time (span less what is set apart), the same
text as the summary table prints and the same figure as its JSON gives."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "tests/data/jax_cpu_8dev"


def run(jaxprof_bin, *args):
    return subprocess.run([str(jaxprof_bin), *map(str, args)], check=True, capture_output=True,
                          text=True).stdout


def test_report_summary_uses_the_summary_figures(jaxprof_bin, tmp_path):
    html = tmp_path / "report.html"
    run(jaxprof_bin, "report", BUNDLED, "-o", html)
    page = html.read_text()

    def dd(term):
        m = re.search(rf"<dt>{term}</dt><dd>[^<(]*\(([0-9.]+%|0)", page)
        assert m, term
        return m.group(1)
    shown = {k: dd(k) for k in ("compute", "exposed communication", "exposed memcpy", "idle")}

    table = run(jaxprof_bin, "summary", BUNDLED)
    assert f"compute {shown['compute']} " in table
    assert f"exposed communication {shown['exposed communication']} " in table
    assert f"exposed memcpy {shown['exposed memcpy']}" in table
    assert f"idle {shown['idle']} " in table

    d = json.loads(run(jaxprof_bin, "summary", BUNDLED, "--format", "json"))["device"]
    steady = d["span_ns"] - d["set_apart_ns"]
    assert d["set_apart_ns"] > 0  # the bases differ on this capture: the test tells them apart
    for key, ns in (("compute", "compute_ns"), ("exposed communication", "comm_exposed_ns"),
                    ("idle", "idle_ns")):
        assert abs(float(shown[key].rstrip("%")) - 100 * d[ns] / steady) <= 0.05, key
