"""jaxprof report in a real headless Chromium, driven as a reader would (real mouse clicks and
typing over the DevTools protocol): the page runs without a console message, an exception or a
request leaving the file; charts and flamegraphs span the page; names stay on one line; tables
sort, filter and drill from a module to its ops to their source lines; flamegraphs zoom and
highlight. Full-page screenshots are written to $JAXPROF_SCREENSHOTS (else the test's temporary
directory). Skipped where Chromium is not installed (apt-get install -y chromium)."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from cdp_browser import Browser, chromium
from test_report import EVIL, ROOT, hostile_profile

# Visible body rows of a table, as [data-* attributes] (detail rows left out).
VISIBLE = """(function (id) {
  var t = document.getElementById(id);
  if (!t) return null;
  return Array.prototype.filter.call(t.tBodies[0].rows, function (r) {
    return !r.hidden && !r.classList.contains('detail');
  }).map(function (r) {
    return {module: r.dataset.module, source: r.dataset.source, op: r.dataset.op,
            text: r.textContent, extra: r.hasAttribute('data-extra')};
  });
})"""


def visible(b: Browser, table: str):
    return b.eval(f"{VISIBLE}('{table}')")


def pages(tmp_path: Path):
    prof = tmp_path / "evil.xplane.pb"
    hostile_profile(prof)
    shared = Path(os.environ.get("JAXPROF_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures"))
    found = {"evil": prof, "jax_cpu_8dev": ROOT / "tests/data/jax_cpu_8dev",
             "mi300x_jax_gemm": shared / "xplane/mi300x_jax_gemm.xplane.pb",
             "tpu_4chip_inference": shared / "xplane/tpu_4chip_inference.xplane.pb",
             "nsys_jax_proc0": shared / "nsys-jax/pax_fsdp4_4proc_proc0.zip"}
    return {k: v for k, v in found.items() if v.exists()}


def check_layout(b: Browser, name: str) -> None:
    # The step chart spans the section (it took a third of the width).
    ratio = b.eval("""(function () {
      var svg = document.querySelector('#steps svg.chart');
      if (!svg) return null;
      return svg.getBoundingClientRect().width / document.getElementById('steps').clientWidth;
    })()""")
    if ratio is not None:
        assert ratio > 0.9, f"{name}: step chart takes {ratio:.0%} of the width"
    # Flamegraphs fill their box: no blank strip at the right.
    for w, box in b.eval("""Array.prototype.map.call(document.querySelectorAll('.flame > svg'),
        function (s) { return [s.getBoundingClientRect().width, s.parentNode.clientWidth]; })"""):
        assert abs(w - box) <= 2, f"{name}: flamegraph {w} px wide in a {box} px box"
    # Names never wrap: every row of the ops table is one line high.
    heights = b.eval("""Array.prototype.map.call(
        document.querySelectorAll('#ops-table tbody tr:not([hidden])'),
        function (r) { return r.getBoundingClientRect().height; })""") or []
    if heights:
        assert max(heights) < 1.4 * min(heights), f"{name}: ops rows {min(heights)}-{max(heights)}"


def check_sorting(b: Browser, name: str) -> None:
    b.click("document.querySelector('#ops-table th:nth-child(6)')")  # self
    values = b.eval("""Array.prototype.map.call(
        document.querySelectorAll('#ops-table tbody tr:not([hidden]) td:nth-child(6)'),
        function (td) { return Number(td.getAttribute('data-v')); })""")
    assert values == sorted(values, reverse=True), name
    b.click("document.querySelector('#ops-table th:nth-child(6)')")
    values = b.eval("""Array.prototype.map.call(
        document.querySelectorAll('#ops-table tbody tr:not([hidden]) td:nth-child(6)'),
        function (td) { return Number(td.getAttribute('data-v')); })""")
    assert values == sorted(values), name


def check_filter(b: Browser, name: str) -> None:
    rows = visible(b, "ops-table")
    word = rows[-1]["op"]
    box = "document.querySelector('#ops .tools input')"
    b.type_into(box, word)
    found = visible(b, "ops-table")
    assert found and all(word.lower() in r["text"].lower() or word.lower() in str(r).lower()
                         for r in found), name
    assert any(r["op"] == word for r in found)
    assert b.eval("document.querySelector('#ops .tools .muted').textContent").startswith(
        f"{len(found)} of ")
    b.type_into(box, "")
    assert len(visible(b, "ops-table")) == len(rows), name


def check_drill_down(b: Browser, name: str) -> None:
    """modules -> ops of the module -> an op's whole text -> its source line -> the line's ops."""
    module = b.eval("document.querySelector('#modules-table button.drill').textContent")
    b.click("document.querySelector('#modules-table button.drill')")
    ops = visible(b, "ops-table")
    assert ops and all(r["module"] == module for r in ops), f"{name}: {module}"
    lines = visible(b, "sources-table")
    assert lines and all(r["module"] == module for r in lines), f"{name}: {module}"
    assert module in b.eval("document.querySelector('#ops .tools .chip').textContent")
    assert abs(b.eval("document.getElementById('ops').getBoundingClientRect().top")) < 60
    # The op's detail row: its whole JAX op path and source line.
    b.click("document.querySelector('#ops-table tbody tr:not([hidden]) button.drill[data-detail]')")
    detail = b.eval("""(function () {
      var r = document.querySelector('#ops-table tbody tr:not([hidden])');
      var d = r.nextElementSibling;
      if (!d || !d.classList.contains('detail')) return null;
      var want = Array.prototype.map.call(r.cells, function (c) {
        return c.getAttribute('title') || ''; }).filter(Boolean);
      return {text: d.textContent, want: want};
    })()""")
    assert detail is not None, name
    for whole in detail["want"]:
        assert whole in detail["text"], f"{name}: {whole} not in the detail row"
    # An op's source line narrows the source-lines table to it.
    with_source = [r for r in ops if r["source"]]
    if with_source:
        src = with_source[0]["source"]
        b.click("""Array.prototype.filter.call(document.querySelectorAll(
            '#ops-table tbody tr:not([hidden]):not(.detail)'), function (r) {
              return r.dataset.source; })[0].querySelector('td:last-child button.drill')""")
        lines = visible(b, "sources-table")
        assert lines and all(r["source"] == src and r["module"] == module for r in lines), name
        assert abs(b.eval("document.getElementById('sources').getBoundingClientRect().top")) < 60
    # A source line narrows the ops table to the ops on it.
    b.click("document.querySelector('#sources-table tbody tr:not([hidden]) button.drill')")
    line = visible(b, "sources-table")[0]
    ops = visible(b, "ops-table")
    assert ops and all(r["source"] == line["source"] and r["module"] == line["module"]
                       for r in ops), name
    # Clearing the scope brings back the top rows.
    while b.eval("document.querySelector('#ops .tools .chip button') !== null"):
        b.click("document.querySelector('#ops .tools .chip button')")
    assert not any(r["extra"] for r in visible(b, "ops-table")), name


def check_kernel_link(b: Browser, name: str) -> None:
    link = "document.querySelector('#kernels-table button.drill[data-targets]')"
    if not b.eval(f"{link} !== null"):
        return
    op = b.eval(f"{link}.textContent")
    b.click(link)
    ops = visible(b, "ops-table")
    assert ops and all(r["op"] == op for r in ops), f"{name}: kernel's op {op}"


def check_memory(b: Browser, name: str) -> None:
    """Memory: a chart per allocator with events; a program's module narrows the buffers table
    to the buffers of its peak heap."""
    if name == "mi300x_jax_gemm":
        assert b.eval("document.querySelectorAll('#memory svg.chart.memory').length") >= 1, name
        assert visible(b, "memory-live-table"), name
    link = "document.querySelector('#memory-programs-table button.drill')"
    if not b.eval(f"{link} !== null"):
        return
    module = b.eval(f"{link}.textContent")
    b.click(link)
    rows = visible(b, "memory-buffers-table")
    assert rows and all(r["module"] == module for r in rows), f"{name}: {module}"


def check_flames(b: Browser, name: str) -> None:
    for sid in ("flame-source", "flame-op-name"):
        svg = f"document.querySelector('#{sid} .flame > svg')"
        # The narrowest frame wide enough to click (20 px) zooms to the full width.
        frame = (f"Array.prototype.filter.call({svg}.querySelectorAll('g.f'), function (g) {{"
                 "return g.getAttribute('data-d') !== '0' && "
                 "Number(g.querySelector('rect').getAttribute('width')) >= 20; })"
                 ".sort(function (a, b) {"
                 "return Number(a.getAttribute('data-w')) - Number(b.getAttribute('data-w'));"
                 "})[0]")
        b.click(f"document.querySelector('#{sid} .flame-reset')")
        b.eval(f"window.jpFrame = {frame}")
        frame = "window.jpFrame"
        b.click(frame)
        width = b.eval(f"Number({frame}.querySelector('rect').getAttribute('width'))")
        full = b.eval(f"Number({svg}.getAttribute('data-width')) - "
                      f"2 * Number({svg}.getAttribute('data-pad'))")
        assert abs(width + 0.5 - full) <= 1, f"{name} {sid}: {width} of {full}"
        b.click(f"document.querySelector('#{sid} .flame-reset')")
        # Labels where they fit: the root's label is its whole name.
        root = b.eval(f"{svg}.querySelector('g.f[data-d=\"0\"] text').textContent")
        assert root.startswith(("all ", "/device:", "/host:")), f"{name}: root label {root!r}"
        word = b.eval(f"{frame}.querySelector('title').textContent.split('\\n')[0]")
        b.type_into(f"document.querySelector('#{sid} .flame-search')",
                    "^" + "".join("\\" + c if not c.isalnum() else c for c in word) + "$")
        assert b.eval(f"{svg}.querySelectorAll('g.f.hl').length") >= 1, f"{name} {sid}"
        assert "%" in b.eval(f"document.querySelector('#{sid} .flame-match').textContent")


# Every text of every visible chart, with its box on the page against its chart's (rotated
# titles included).
CHART_TEXTS = """Array.prototype.concat.apply([], Array.prototype.map.call(
  document.querySelectorAll('svg.chart'), function (svg) {
    var s = svg.getBoundingClientRect();
    if (!s.width) return [];  // a hidden device's chart
    return Array.prototype.map.call(svg.querySelectorAll('text'), function (t) {
      var b = t.getBoundingClientRect();
      return {cls: svg.getAttribute('class'), text: t.textContent, x0: b.left - s.left,
              x1: b.right - s.left, y: (b.top + b.bottom) / 2,
              anchor: t.getAttribute('text-anchor'), w: s.width};
    });
  }))"""

PREFIX = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def check_chart_labels(b: Browser, name: str) -> None:
    """No label of a chart runs off its left or right edge; the roofline's rate ticks read back
    as successive powers of ten, from the bottom up."""
    texts = b.eval(CHART_TEXTS)
    for t in texts:
        assert t["x0"] >= -0.5 and t["x1"] <= t["w"] + 0.5, f"{name}: label cut: {t}"
    ticks = [t for t in texts if "roofline" in t["cls"] and t["anchor"] == "end"
             and re.fullmatch(r"[0-9.]+ [kMGTPE]?FLOP/s", t["text"])]
    if not ticks:
        return
    values = []
    for t in sorted(ticks, key=lambda t: -t["y"]):
        number, unit = t["text"].split(" ")
        values.append(float(number) * PREFIX[unit[: -len("FLOP/s")]])
    for lo, hi in zip(values, values[1:]):
        assert hi == pytest.approx(lo * 10), f"{name}: rate ticks {[t['text'] for t in ticks]}"


def check_device_picker(b: Browser, name: str) -> None:
    """Several devices: one roofline chart shows, and picking a device shows its chart and folds
    the table to its rows."""
    devices = b.eval("""Array.prototype.map.call(
        document.querySelectorAll('select.device-picker option'), function (o) { return o.value; })""")
    if len(devices) < 2:
        return
    def shown():
        return b.eval("""Array.prototype.filter.call(document.querySelectorAll('.roofline-chart'),
            function (c) { return !c.hidden; }).map(function (c) { return c.dataset.device; })""")
    def table_devices():
        return set(b.eval("""Array.prototype.filter.call(
            document.getElementById('roofline-table').tBodies[0].rows,
            function (r) { return !r.hidden && !r.classList.contains('detail'); })
            .map(function (r) { return r.dataset.device; })"""))
    assert shown() == [devices[0]] and table_devices() == {devices[0]}, name
    pick = devices[-1]
    b.eval(f"""(function () {{ var s = document.querySelector('select.device-picker');
        s.value = {pick!r}; s.dispatchEvent(new Event('change')); }})()""")
    assert shown() == [pick] and table_devices() == {pick}, name
    check_chart_labels(b, name)  # the newly shown chart too


def check_critical_path(b: Browser, jaxprof_bin, name: str, src: Path) -> None:
    """The critical-path section is drawn, and its ops table (median steady step) holds the
    numbers of `jaxprof critical-path --format json` for that step."""
    assert b.eval("document.getElementById('critical-path') !== null"), name
    if name != "jax_cpu_8dev":
        return
    assert b.eval("document.querySelectorAll('#critical-path svg.chart').length") == 1
    data = json.loads(subprocess.run([str(jaxprof_bin), "critical-path", str(src), "--format",
                                      "json", "--no-rank"], check=True, capture_output=True,
                                     text=True).stdout)
    steady = sorted((s for s in data["steps"] if not s["warmup"]), key=lambda s: s["marked_ns"])
    step = steady[(len(steady) - 1) // 2]
    rows = b.eval("""Array.prototype.map.call(
        document.querySelectorAll('#critical-path-ops-table tbody tr'), function (r) {
          return [r.dataset.op].concat(Array.prototype.map.call(r.querySelectorAll('td[data-v]'),
              function (c) { return Number(c.dataset.v); }));
        })""")
    assert len(rows) == min(50, len(step["ops"])), name
    for (op, count, total, on_path, share, slack), want in zip(rows, step["ops"]):
        assert op == want["name"] and count == want["count"], (op, want)
        assert abs(total - want["total_ns"] * 1000) < 1 and abs(slack - want["slack_ns"] * 1000) < 1
        assert abs(on_path - want["on_path_ns"] * 1000) < 1, (op, on_path, want)
        assert abs(share - want["on_path_ns"] / step["step_ns"]) < 1e-9


@pytest.fixture(scope="module")
def browser():
    exe = chromium()
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    with Browser(exe, width=1400, height=900) as b:
        yield b


def test_report_reads_and_drills_in_chromium(jaxprof_bin, browser, tmp_path):
    shots = Path(os.environ.get("JAXPROF_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    for name, src in pages(tmp_path).items():
        html = tmp_path / f"{name}.html"
        subprocess.run([str(jaxprof_bin), "report", str(src), "-o", str(html)], check=True,
                       capture_output=True)
        b = browser
        b.load(html)
        assert b.eval("document.body.getAttribute('data-ready')") == "1", name
        assert b.problems() == [], name
        check_layout(b, name)
        png = b.screenshot(shots / f"report_{name}.png")
        assert png.stat().st_size > 20000
        check_sorting(b, name)
        check_filter(b, name)
        check_drill_down(b, name)
        check_kernel_link(b, name)
        check_memory(b, name)
        check_flames(b, name)
        check_chart_labels(b, name)
        check_device_picker(b, name)
        check_critical_path(b, jaxprof_bin, name, src)
        if name == "evil":
            assert EVIL in b.eval("document.getElementById('kernels-table').textContent")
            assert b.eval("document.querySelectorAll('script').length") == 4
        assert b.problems() == [], name
        b.load(html, "#selftest")
        verdict = b.eval("document.body.getAttribute('data-selftest')")
        assert verdict.startswith("pass") and "flames=2" in verdict, f"{name}: {verdict}"
        assert b.problems() == [], name


def test_browser_driver_sees_errors_and_requests(browser, tmp_path):
    """The checks above are not blind: a script error, a console message and a request leaving
    the file are all reported."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><img src="http://example.invalid/x.png">'
                   "<script>console.log('hello'); undefinedFunction();</script>")
    browser.load(bad)
    problems = browser.problems()
    assert any(p.startswith("request: http://example.invalid/x.png") for p in problems), problems
    assert any("undefinedFunction" in p for p in problems), problems
    assert any(p == "console.log: hello" for p in problems), problems
