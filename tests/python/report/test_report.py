"""jaxprof report: one self-contained HTML file per profile. Every fixture (GPU, TPU, CPU,
nsys-jax) renders with every section, tables hold the rows the CLI's JSON says they should, nothing
points outside the file, and untrusted names stay text. Where Debian's chromium is installed the
page is loaded headless: no console messages, no network requests, and its #selftest hook sorts
every table and zooms every flamegraph."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from xspace_builder import Ref, SpaceBuilder

ROOT = Path(__file__).resolve().parents[3]
SECTIONS = ["summary", "device-time", "steps", "critical-path", "modules", "ops", "sources",
            "flame-source", "flame-op-name", "roofline", "collectives", "kernels", "compile",
            "memory"]
EVIL = "<script>alert(1)</script>"


class Page(HTMLParser):
    """Tags, links, section texts and table cells of a report."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: List[str] = []
        self.tags: List[str] = []
        self.sections: Dict[str, str] = {}
        self.tables: Dict[str, List[List[str]]] = {}
        self.row_attrs: Dict[str, List[Dict[str, str]]] = {}  # per table, per <tr>
        self.scripts: List[Dict[str, str]] = []
        self.texts: List[str] = []
        self._section: Optional[str] = None
        self._table: Optional[str] = None
        self._cell: Optional[List[str]] = None
        self._script: Optional[Dict[str, str]] = None
        self.body_attrs: Dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        for k, v in attrs:
            if k in ("src", "href", "xlink:href", "data", "action", "srcset", "poster") and v:
                self.links.append(v)
        if tag == "section":
            self._section = a.get("id")
            self.sections[self._section] = ""
        elif tag == "table":
            self._table = a.get("id")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
            self.row_attrs.setdefault(self._table, []).append(a)
        elif tag == "td":
            self._cell = []
        elif tag == "script":
            self._script = {"type": a.get("type", ""), "id": a.get("id", ""), "text": ""}
        elif tag == "body":
            self.body_attrs = a

    def handle_endtag(self, tag):
        if tag == "section":
            self._section = None
        elif tag == "table":
            self._table = None
        elif tag == "td" and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "script" and self._script is not None:
            self.scripts.append(self._script)
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script["text"] += data
            return
        self.texts.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._section is not None:
            self.sections[self._section] += data

    def rows(self, table_id: str) -> List[List[str]]:
        return [r for r in self.tables.get(table_id, []) if r]  # the header row has no <td>

    def rows_with_attrs(self, table_id: str):
        """(cells, data attributes of the <tr>) per body row."""
        return [(r, a) for r, a in zip(self.tables.get(table_id, []),
                                       self.row_attrs.get(table_id, [])) if r]


def inputs() -> List[Path]:
    shared = Path(os.environ.get("JAXPROF_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures"))
    found = sorted((shared / "xplane").glob("*.xplane.pb"))
    found += [ROOT / "tests/data/jax_cpu_8dev", ROOT / "tests/data/jax_cpu_matmul.xplane.pb.gz"]
    nsys = shared / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip"
    if nsys.is_file():
        found.append(nsys)
    return [p for p in found if p.exists()]


def cli_json(jaxprof_bin, command: str, path: Path, *args) -> dict:
    r = subprocess.run([str(jaxprof_bin), command, str(path), *args, "--format", "json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def report(jaxprof_bin, path: Path, out: Path) -> Page:
    r = subprocess.run([str(jaxprof_bin), "report", str(path), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # The file written is announced on stderr; stdout keeps only results (none here).
    assert r.stdout == "" and f"jaxprof: wrote {out} (" in r.stderr
    page = Page()
    page.feed(out.read_text(encoding="utf-8"))
    page.close()
    return page


def check_self_contained(page: Page) -> None:
    for link in page.links:
        assert link.startswith("#") or link.startswith("data:"), f"points outside the file: {link}"
    for tag in ("link", "img", "iframe", "object", "embed", "base"):
        assert tag not in page.tags, f"<{tag}> in the report"
    for s in page.scripts:
        assert "src" not in s


def page_data(page: Page) -> dict:
    (block,) = [s for s in page.scripts if s["type"] == "application/json"]
    for ch in "<>&\u2028\u2029":
        assert ch not in block["text"]
    return json.loads(block["text"])


@pytest.mark.parametrize("path", inputs(), ids=lambda p: p.name)
def test_report_sections_and_tables(jaxprof_bin, path, tmp_path):
    page = report(jaxprof_bin, path, tmp_path / "r.html")
    check_self_contained(page)
    assert list(page.sections) == SECTIONS
    for sid, text in page.sections.items():
        assert text.strip(), f"section {sid} is empty"
    data = page_data(page)
    modules = cli_json(jaxprof_bin, "modules", path)["modules"]
    assert data["sections"] == SECTIONS
    assert data["step"] == (modules[0]["name"] if modules else "")
    for table_id, n in data["rows"].items():
        assert len(page.rows(table_id)) == n


    assert len(page.rows("modules-table")) == min(50, len(modules))
    assert [r[0] for r in page.rows("modules-table")] == [m["name"] for m in modules[:50]]
    ops = cli_json(jaxprof_bin, "summary", path, "--top", "50")["ops"]
    # The top ops show; the rows kept for drilling into a module wait hidden (data-extra).
    op_rows = page.rows_with_attrs("ops-table")
    assert [r[0] for r, a in op_rows if "data-extra" not in a] == [o["name"] for o in ops]
    all_ops = cli_json(jaxprof_bin, "summary", path, "--top", "100000")["ops"]
    for r, a in op_rows:
        assert a["data-op"] == r[0] and a["data-module"] == (r[1] if r[1] != "\u2014" else "")
    # Every listed module has its top ops in the table, to drill into.
    for name in [m["name"] for m in modules[:50]]:
        mine = [o for o in all_ops if (o["module"] or "") == name]
        held = [r for r, a in op_rows if a["data-module"] == name]
        assert len(held) == min(50, len(mine)), name
    # Source lines: one row per (module, line), each holding ops of the ops table's kind.
    keys = [(a["data-module"], a["data-source"]) for _, a in page.rows_with_attrs("sources-table")]
    assert len(keys) == len(set(keys))
    lines = {(o["module"] or "", o.get("source") or "") for o in all_ops}
    assert set(keys) <= lines
    if ops:
        assert keys
    kernels = cli_json(jaxprof_bin, "kernels", path)["kernels"]
    assert [r[0] for r in page.rows("kernels-table")] == [k["name"] for k in kernels[:50]]
    collectives = cli_json(jaxprof_bin, "collectives", path)["ops"]
    assert len(page.rows("collectives-table")) == min(50, len(collectives))
    roofline = cli_json(jaxprof_bin, "roofline", path, "--top", "50")["devices"]
    assert [r[1] for r in page.rows("roofline-table")] == [o["name"] for d in roofline
                                                            for o in d["ops"]]
    if not kernels:
        assert "kernels-table" not in page.tables
        assert page.sections["kernels"].strip()  # says why instead of vanishing
    # Both flamegraphs are embedded when the profile has device ops.
    if ops:
        assert page.tags.count("svg") >= 3  # breakdown chart + two flamegraphs


def test_default_output_in_current_directory(jaxprof_bin, tmp_path):
    src = ROOT / "tests/data/jax_cpu_matmul.xplane.pb.gz"
    r = subprocess.run([str(jaxprof_bin), "report", str(src)], cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "jaxprof: wrote jax_cpu_matmul.report.html (" in r.stderr
    assert (tmp_path / "jax_cpu_matmul.report.html").is_file()


def hostile_profile(path: Path) -> None:
    """A GPU profile whose kernel, op and module names are markup."""
    space = SpaceBuilder()
    gpu = space.plane("/device:GPU:0")
    line = gpu.line(1, "Stream #1(Kernel)", timestamp_ns=1000)
    md = gpu.event_md(EVIL, stats={"hlo_module": f"jit_{EVIL}\u2028"})
    for i in range(3):
        gpu.event(line, md, offset_ps=i * 10000, duration_ps=5000 + i,
                  stats={"hlo_op": Ref(EVIL + "\u2028</script><!--")})
    md2 = gpu.event_md("plain & simple")
    gpu.event(line, md2, offset_ps=40000, duration_ps=1000)
    space.write(path)


def test_untrusted_names_render_as_text(jaxprof_bin, tmp_path):
    prof = tmp_path / "evil.xplane.pb"
    hostile_profile(prof)
    out = tmp_path / "evil.html"
    page = report(jaxprof_bin, prof, out)
    check_self_contained(page)
    raw = out.read_text(encoding="utf-8")
    assert EVIL not in raw
    # Ours only: the data block, the page script and one per flamegraph.
    assert [s["type"] for s in page.scripts].count("application/json") == 1
    assert len(page.scripts) == 4
    assert "page" not in page.tags and "x" not in page.tags
    assert [r[0] for r in page.rows("kernels-table")] == [EVIL, "plain & simple"]
    assert any(r[0].startswith(EVIL) for r in page.rows("ops-table"))
    assert any(EVIL in t for t in page.texts)
    assert page_data(page)["step"] == f"jit_{EVIL}\u2028"  # escaped in the block, intact parsed


def _chromium() -> Optional[str]:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def load_headless(browser: str, html: Path, tmp_path: Path):
    """Loads html#selftest; returns (dumped DOM, log, page-initiated request URLs)."""
    netlog = tmp_path / f"{html.stem}.netlog.json"
    r = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}", "--enable-logging=stderr", "--v=0",
         "--host-resolver-rules=MAP * ~NOTFOUND", f"--log-net-log={netlog}", "--dump-dom",
         html.as_uri() + "#selftest"],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, HOME=str(tmp_path)))
    assert r.returncode == 0, r.stderr[-2000:]
    log = json.loads(netlog.read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    # The browser's own background services have no file:// isolation key; the page's loads do.
    urls = [e["params"]["url"] for e in log["events"]
            if e["type"] == start_job and "file://" in e["params"].get("network_isolation_key", "")
            and not e["params"]["url"].startswith(("file:", "data:"))]
    return r.stdout, r.stderr, urls


def test_browser_checks_catch_a_bad_page(tmp_path):
    """The headless checks below are not blind: a stray image and a script error are seen."""
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><img src="http://example.invalid/x.png">'
                   "<script>undefinedFunction();</script>")
    _, log, urls = load_headless(browser, bad, tmp_path)
    assert urls == ["http://example.invalid/x.png"]
    assert "CONSOLE" in log and "Uncaught" in log


def test_report_in_headless_chromium(jaxprof_bin, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    prof = tmp_path / "evil.xplane.pb"
    hostile_profile(prof)
    pages = {"evil": prof}
    for p in inputs():
        if p.name.startswith(("tpu_", "tf_v100", "jax_cpu_8dev", "mi300x_jax_gemm")):
            pages[p.name.split(".")[0]] = p
    for name, src in pages.items():
        html = tmp_path / f"{name}.html"
        subprocess.run([str(jaxprof_bin), "report", str(src), "-o", str(html)], check=True,
                       capture_output=True)
        dom, log, urls = load_headless(browser, html, tmp_path)
        assert urls == [], f"{name}: network requests {urls}"
        assert "CONSOLE" not in log, f"{name}: console output\n{log[-3000:]}"
        page = Page()
        page.feed(dom)
        assert page.body_attrs.get("data-ready") == "1", name
        verdict = page.body_attrs.get("data-selftest", "")
        assert verdict.startswith("pass"), f"{name}: {verdict}"
        assert "flames=2" in verdict, f"{name}: {verdict}"
        if name == "evil":
            assert [r[0] for r in page.rows("kernels-table")][:2] in ([EVIL, "plain & simple"],
                                                                      ["plain & simple", EVIL])
            assert "tables=" in verdict and "tables=0" not in verdict


def _steps_table_values(html: str) -> List[List[Optional[str]]]:
    """data-v of each cell of the steps table (None for text cells), row by row."""
    import re
    table = re.search(r'<table class="sortable" id="steps-table">(.*?)</table>', html, re.S)
    assert table, "no steps table"
    rows = re.findall(r"<tr>(<td.*?)</tr>", table.group(1), re.S)
    return [[m.group(1) for m in re.finditer(r'<td(?: class="n" data-v="([^"]*)")?>', r)]
            for r in rows]


def test_step_plot_uses_step_annotations(jaxprof_bin, tmp_path):
    """The 8-device capture marks 4 steps with StepTraceAnnotation: the plot shows those, and
    the steps table holds their boundaries as steps_oracle derives them from the raw file."""
    import steps_oracle as so
    path = ROOT / "tests/data/jax_cpu_8dev"
    out = tmp_path / "steps.html"
    page = report(jaxprof_bin, path, out)
    assert page_data(page)["step_source"] == "annotation"
    text = page.sections["steps"]
    assert "StepTraceAnnotation" in text and "4 steps" in text
    want = so.steps(str(path))
    assert len(want) == 4
    t0 = want[0]["start"]
    got = _steps_table_values(out.read_text(encoding="utf-8"))
    assert len(got) == len(want)
    for row, w in zip(got, want):
        number, _, start, end, duration, executions, device, _ = row
        assert int(float(number)) == w["number"]
        assert (float(start), float(end)) == (w["start"] - t0, w["end"] - t0)
        assert float(duration) == w["end"] - w["start"]
        assert int(float(executions)) == w["executions"]
        assert float(device) == w["device"]
    assert [r[0] for r in page.rows("steps-table")][:1] == [str(want[0]["number"])]
    assert [r[7] for r in page.rows("steps-table")] == ["yes" if w["warmup"] else ""
                                                        for w in want]
    # One point per step on each of the two lines, each saying its step's number.
    assert page.tags.count("circle") >= 8


def test_step_plot_falls_back_to_module_executions(jaxprof_bin, tmp_path):
    import steps_oracle as so
    path = ROOT / "tests/data/jax_cpu_matmul.xplane.pb.gz"
    assert so.steps(str(path)) == []  # no step marks in this capture
    page = report(jaxprof_bin, path, tmp_path / "m.html")
    data = page_data(page)
    assert data["step_source"] == "module"
    assert "No step marks" in page.sections["steps"] and data["step"] in page.sections["steps"]
    assert "steps-table" not in page.tables


def _svg(html: str, cls: str, within: str) -> str:
    """The first <svg class="cls..."> of section `within`."""
    import re
    section = re.search(rf'<section id="{within}">(.*?)</section>', html, re.S).group(1)
    m = re.search(rf'<svg class="{cls}[^"]*"[^>]*>.*?</svg>', section, re.S)
    assert m, f"no {cls} chart in {within}"
    return m.group(0)


def _ticks(svg: str, cls: str) -> List[str]:
    import re
    return re.findall(rf'<text class="{cls}"[^>]*>([^<]*)</text>', svg)


def _round_ticks(labels: List[str]) -> List[float]:
    """Tick labels of a linear axis: plain round numbers, evenly spaced."""
    values = [float(t) for t in labels]
    steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
    assert len(steps) == 1, labels
    step = steps.pop()
    assert step > 0 and any(abs(step / m - round(step / m)) < 1e-9 and round(step / m) in (1, 2, 5)
                            or abs(step / m - 2.5) < 1e-9 for m in (10.0 ** k for k in range(-4, 8)))
    return values


def test_step_chart_scaled_for_the_steady_state(jaxprof_bin, tmp_path):
    """The 8-device capture's first step takes 71 ms, the others 2 ms: the warm-up step sits in a
    panel of its own, the steady steps get a scale of round milliseconds up to about 2 ms."""
    out = tmp_path / "cpu.html"
    report(jaxprof_bin, ROOT / "tests/data/jax_cpu_8dev", out)
    svg = _svg(out.read_text(encoding="utf-8"), "chart wide", "steps")
    assert 'data-y-unit="ms"' in svg
    steady = _round_ticks(_ticks(svg, "yt"))
    assert steady[0] == 0 and 2.083 <= steady[-1] <= 3  # the steady steps fill the scale
    warm = _round_ticks(_ticks(svg, "wyt"))
    assert warm[-1] >= 71.484  # the 71.5 ms warm-up step on its own scale
    assert svg.count('class="warm"') == 2  # the first step, on both lines
    assert _ticks(svg, "xt") == ["1", "2", "3"]  # the steady steps' numbers
    assert "viewBox" in svg and "width=" not in svg.split(">")[0]  # CSS sizes it to the page


def test_step_chart_of_a_module_and_a_collectives_scatter_from_the_data(jaxprof_bin,
                                                                        xplane_fixtures, tmp_path):
    """TPU: 100 executions of jit_f per chip from 551 ms to 982 ms, ticks in round ms; the one
    all-reduce size (5 GiB) gets a size axis around it, not one from 2 B to 16 GiB."""
    out = tmp_path / "tpu.html"
    report(jaxprof_bin, xplane_fixtures / "tpu_4chip_inference.xplane.pb", out)
    html = out.read_text(encoding="utf-8")
    steps = _svg(html, "chart wide", "steps")
    assert 'data-y-unit="ms"' in steps
    assert _round_ticks(_ticks(steps, "yt"))[-1] == 1000
    scatter = _svg(html, "chart scatter", "collectives")
    assert 'data-x-scale="log"' in scatter and 'data-y-scale="linear"' in scatter
    sizes = _ticks(scatter, "xt")
    assert 1 <= len(sizes) <= 3, sizes  # a little either side of the one size
    assert all(t.endswith(" B") or t.endswith("iB") for t in sizes)
    _round_ticks([t for t in _ticks(scatter, "yt")])


def test_collectives_scatter_scales_span_the_data(jaxprof_bin, tmp_path):
    """The 8-device capture's all-reduces: 4 B at 26 KB/s and 12 KiB at 20 MB/s. Both axes are
    log (the bandwidths differ 800 times) and span the points, not powers of two up to GiB."""
    out = tmp_path / "cpu.html"
    report(jaxprof_bin, ROOT / "tests/data/jax_cpu_8dev", out)
    scatter = _svg(out.read_text(encoding="utf-8"), "chart scatter", "collectives")
    assert 'data-x-scale="log"' in scatter and 'data-y-scale="log"' in scatter
    sizes = _ticks(scatter, "xt")
    assert sizes[0] == "4 B" and sizes[-1] in ("8 KiB", "16 KiB"), sizes
    rates = _ticks(scatter, "yt")
    assert rates and all(r.split()[0] in ("1", "10", "100") for r in rates), rates
