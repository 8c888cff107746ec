"""In Jupyter a result reads as the CLI's output does: a notebook executed with nbclient (a real
kernel) renders `p.summary()`, `p.ops(top=5)` and `p.roofline()` as HTML whose tables hold, row
by row, the words of the lines `jaxprof summary|ops|roofline` print (the same columns, units,
shares and cut names; never raw `_ns` columns in e-notation), and the roofline's rate ticks fit."""
from __future__ import annotations

import os
import re
from html.parser import HTMLParser

import pytest

import ops_check as oc

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

PROFILE = oc.DATA_DIR / "jax_cpu_8dev"
CELLS = {
    "summary": "p.summary()",
    "ops": "p.ops(top=5)",
    "roofline": "p.roofline()",
}


class Tables(HTMLParser):
    """The rows (lists of cell texts) of every table, and the rest of the text."""

    def __init__(self):
        super().__init__()
        self.rows, self.text, self._row, self._cell = [], [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        (self._cell if self._cell is not None else self.text).append(data)


@pytest.fixture(scope="module")
def rendered():
    oc.require_profile(PROFILE)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import jaxprof\np = jaxprof.load({str(PROFILE)!r})")]
    nb.cells += [nbformat.v4.new_code_cell(code) for code in CELLS.values()]
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": os.getcwd()}})
    client.execute()
    out = {}
    for name, cell in zip(CELLS, nb.cells[1:]):
        html = [o["data"]["text/html"] for o in cell.outputs
                if o.get("output_type") == "execute_result" and "text/html" in o["data"]]
        assert html, f"{name}: no HTML output: {cell.outputs}"
        out[name] = html[0]
    return out


def cli_lines(jaxprof_bin, args):
    proc = oc.run_cli(jaxprof_bin, args + [str(PROFILE)])
    assert proc.returncode == 0, proc.stderr
    return [ln.split() for ln in proc.stdout.decode().splitlines() if ln.strip()]


@pytest.mark.parametrize("name,args", [("summary", ["summary"]), ("ops", ["ops", "--top", "5"]),
                                       ("roofline", ["roofline"])])
def test_tables_hold_the_cli_lines(jaxprof_bin, rendered, name, args):
    page = rendered[name]
    assert not re.search(r"\d\.\d+e[+-]\d", page), f"{name}: e-notation in the HTML"
    parsed = Tables()
    parsed.feed(page)
    assert parsed.rows, f"{name}: no table"
    lines = cli_lines(jaxprof_bin, args)
    # Each row's words are a line of the CLI's output, in order.
    at = 0
    for row in parsed.rows:
        words = " ".join(row).split()
        while at < len(lines) and lines[at] != words:
            at += 1
        assert at < len(lines), f"{name}: row {row} is no line of `jaxprof {' '.join(args)}`"
        at += 1
    # Units as the terminal shows them.
    cells = [c for row in parsed.rows for c in row]
    assert any(re.fullmatch(r"\d+\.\d%", c) for c in cells) or name == "roofline"
    assert not any(c.endswith("_ns") for c in cells)


def test_summary_bases_match_the_cli(jaxprof_bin, rendered):
    parsed = Tables()
    parsed.feed(rendered["summary"])
    text = " ".join(" ".join(parsed.text).split())
    for words in cli_lines(jaxprof_bin, ["summary"])[:3]:
        assert " ".join(words) in text


def test_ops_rows_per_device(rendered):
    parsed = Tables()
    parsed.feed(rendered["ops"])
    headers = [r for r in parsed.rows if "count" in r]
    assert len(headers) == 8  # a table per device, each of at most 5 rows
    assert len(parsed.rows) - len(headers) <= 8 * 5


def test_roofline_ticks_fit(rendered):
    ticks = re.findall(r'text-anchor="end">([^<]*FLOP/s)</text>', rendered["roofline"])
    rate_ticks = [t for t in ticks if re.fullmatch(r"[0-9.]+ [kMGTPE]?FLOP/s", t)]
    assert rate_ticks and all(len(t) <= 11 for t in rate_ticks), ticks
