"""`jaxprof diff --format html`: one self-contained page per comparison. Its tables hold the rows
of `diff --format json`, nothing points outside the file, names that are markup stay text, and,
where Debian's chromium is installed, the page loads headless with no console messages and no
network requests, and its #selftest hook sorts every table."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from test_report import EVIL, Page, _chromium, check_self_contained, load_headless, page_data
from xspace_builder import Ref, SpaceBuilder

ROOT = Path(__file__).resolve().parents[3]
SECTIONS = ["summary", "top-changes", "modules", "ops", "added-removed", "categories"]
T_NS = 1_700_000_000_000_000_000


def cpu_profile(path: Path, dot_ps: int, extra: bool) -> None:
    """A CPU-backend profile of 12 runs of a module whose names are markup: a matmul-like op of
    `dot_ps` per run, an elementwise op, and (when `extra`) one more op."""
    space = SpaceBuilder()
    cpu = space.plane("/host:CPU")
    module = f"jit_{EVIL}"
    names = [(f"dot.{EVIL}", dot_ps), ("fusion & co", 20_000)]
    if extra:
        names.append((f"added.{EVIL}\u2028</script><!--", 50_000))
    mds = {n: cpu.event_md(n, stats={"hlo_module": Ref(module), "program_id": 3})
           for n, _ in names}
    line = cpu.line(10, "tf_pool/10", T_NS)
    t = 0
    for run in range(12):
        for n, d in names:
            cpu.event(line, mds[n], t, d + (run % 5) * 100, {"hlo_op": Ref(n), "run_id": run})
            t += d + 1_000
        t += 10_000
    space.write(path)


def diff(jaxprof_bin, base, new, *args):
    return subprocess.run([str(jaxprof_bin), "diff", str(base), str(new), *map(str, args)],
                          capture_output=True, text=True)


@pytest.fixture()
def pair(tmp_path):
    base, new = tmp_path / "base.xplane.pb", tmp_path / "new.xplane.pb"
    cpu_profile(base, 100_000, extra=False)
    cpu_profile(new, 150_000, extra=True)
    return base, new


def render(jaxprof_bin, base, new, out: Path, *args) -> Page:
    r = diff(jaxprof_bin, base, new, "-o", out, *args)
    assert r.returncode == 0, r.stderr
    # The file written is announced on stderr; stdout keeps only results (none here).
    assert r.stdout == "" and f"jaxprof: wrote {out} (" in r.stderr
    page = Page()
    page.feed(out.read_text(encoding="utf-8"))
    page.close()
    return page


def test_html_diff_tables_hold_the_json_rows(jaxprof_bin, pair, tmp_path):
    base, new = pair
    # The .html suffix picks the format.
    page = render(jaxprof_bin, base, new, tmp_path / "d.html")
    check_self_contained(page)
    assert list(page.sections) == SECTIONS
    data = page_data(page)
    assert data["sections"] == SECTIONS
    for table_id, n in data["rows"].items():
        assert len(page.rows(table_id)) == n
    d = json.loads(diff(jaxprof_bin, base, new, "--format", "json").stdout)
    assert [r[0] for r in page.rows("modules-table")] == [m["name"] for m in d["modules"]]
    assert [r[0] for r in page.rows("ops-table")] == [o["name"] for o in d["ops"]]
    assert [r[0] for r in page.rows("categories-table")] == [c["name"] for c in d["categories"]]
    changed = [o for o in d["ops"] if o["change"] in ("added", "removed")]
    assert [(r[0], r[1]) for r in page.rows("added-removed-table")] == \
        [(o["change"], o["name"]) for o in changed]
    assert len(changed) == 1
    # Sort keys are the JSON's numbers: contribution in ps, ratio as a ratio.
    module_row = page.tables["modules-table"]
    (m,) = d["modules"]
    assert m["change"] == "slower"
    assert f"{(m['ratio'] - 1) * 100:+.1f}%" in page.rows("modules-table")[0]
    # The chart draws one bar per op that changed, the largest first, and the summary gives the
    # share of the change the top ops explain.
    summary = page.sections["summary"]
    assert f"{d['explained']['share'] * 100:.1f}%" in summary
    assert "Mann-Whitney" in summary
    assert page.sections["top-changes"].count(EVIL) >= 2
    assert module_row


def test_format_flag_and_stdout(jaxprof_bin, pair, tmp_path):
    base, new = pair
    r = diff(jaxprof_bin, base, new, "--format", "html")
    assert r.returncode == 0 and r.stdout.startswith("<!DOCTYPE html>")
    # An explicit --format wins over the suffix.
    r = diff(jaxprof_bin, base, new, "--format", "json", "-o", tmp_path / "x.html")
    assert r.returncode == 0
    json.loads((tmp_path / "x.html").read_text())


def test_untrusted_names_render_as_text(jaxprof_bin, pair, tmp_path):
    base, new = pair
    out = tmp_path / "evil.html"
    page = render(jaxprof_bin, base, new, out)
    raw = out.read_text(encoding="utf-8")
    assert EVIL not in raw and "</script><!--" not in raw.replace("</script>\n", "")
    # Ours only: the data block and the page script.
    assert [s["type"] for s in page.scripts] == ["application/json", ""]
    assert "page" not in page.tags and "x" not in page.tags
    assert page.rows("modules-table")[0][0] == f"jit_{EVIL}"
    assert any(r[0] == f"dot.{EVIL}" for r in page.rows("ops-table"))
    assert any(r[1].startswith(f"added.{EVIL}\u2028</script><!--")
               for r in page.rows("added-removed-table"))


def test_html_diff_in_headless_chromium(jaxprof_bin, pair, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    base, new = pair
    pages = {"evil": (base, new)}
    matmul = ROOT / "tests/data/jax_cpu_8dev"
    if matmul.exists():
        pages["8dev"] = (matmul, matmul)
    for name, (a, b) in pages.items():
        html = tmp_path / f"{name}.html"
        render(jaxprof_bin, a, b, html)
        dom, log, urls = load_headless(browser, html, tmp_path)
        assert urls == [], f"{name}: network requests {urls}"
        assert "CONSOLE" not in log, f"{name}: console output\n{log[-3000:]}"
        page = Page()
        page.feed(dom)
        assert page.body_attrs.get("data-ready") == "1", name
        verdict = page.body_attrs.get("data-selftest", "")
        # Every table with two rows or more was sorted both ways by the page itself.
        tables = sum(1 for t in page.tables.values() if len([r for r in t if r]) >= 2)
        assert verdict == f"pass tables={tables} flames=0", f"{name}: {verdict}"
        assert tables >= 2
        if name == "evil":
            assert any(EVIL in t for t in page.texts)
