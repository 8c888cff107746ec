"""The CLI's text output as HTML, for Jupyter: each table the CLI prints (a header line, a line of
dashes under each column, then rows) becomes an HTML table with the same columns, units and cut
names; every other line stays a line of text. So a result reads the same in a notebook as in a
terminal ("1.111 ms", "85.4%"), never as raw ``_ns`` columns in e-notation."""

from __future__ import annotations

import html
import re
from typing import List, Optional, Tuple

_RULE = re.compile(r"^ *-+( +-+)* *$")
_NUMBER = re.compile(r"^(—|[-+]?[0-9][0-9.,]*(%| ?[A-Za-z/µ]+)?)$")

_STYLE = ("<style>.jaxprof-cli table{border-collapse:collapse;font-size:12px;margin:2px 0 8px}"
          ".jaxprof-cli th,.jaxprof-cli td{padding:1px 8px;text-align:left;white-space:nowrap;"
          "font-family:ui-monospace,'DejaVu Sans Mono',monospace}"
          ".jaxprof-cli th{border-bottom:1px solid #999}.jaxprof-cli td.n,.jaxprof-cli th.n"
          "{text-align:right}.jaxprof-cli p{margin:2px 0;white-space:pre-wrap;"
          "font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12px}</style>")


def _spans(rule: str) -> List[Tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def _is_row(line: str, spans: List[Tuple[int, int]]) -> bool:
    """Whether `line` fits the columns: blank in the gaps between them."""
    if not line.strip():
        return False
    for (_, end), (start, _) in zip(spans, spans[1:]):
        if line[end:start].strip():
            return False
    return True


def _cells(line: str, spans: List[Tuple[int, int]]) -> List[str]:
    out = []
    for i, (start, end) in enumerate(spans):
        stop = spans[i + 1][0] if i + 1 < len(spans) else len(line)
        out.append(line[start:max(end, stop)].strip())
    return out


def _right_aligned(lines: List[str], spans: List[Tuple[int, int]]) -> List[bool]:
    """The CLI right-aligns numeric columns (header included): every line's cell ends at the
    column's end, and some line's starts after the column's start."""
    out = []
    for start, end in spans:
        cells = [ln[start:end] for ln in lines]
        aligned = all(len(c) == end - start and (c[-1] != " " or not c.strip()) for c in cells)
        padded = any(c.startswith(" ") and c.strip() for c in cells)
        # A column as wide as its widest value shows no padding: numbers say it instead.
        numbers = all(_NUMBER.match(c.strip()) for c in cells[1:] if c.strip()) and len(cells) > 1
        out.append(aligned and (padded or numbers))
    return out


def cli_html(text: str, extra: Optional[str] = None) -> str:
    """HTML of the CLI's text: its tables as tables, other lines as text; `extra` (charts) last."""
    lines = text.rstrip("\n").split("\n")
    out = ['<div class="jaxprof-cli">', _STYLE]
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and _RULE.match(lines[i + 1]) and lines[i].strip():
            spans = _spans(lines[i + 1])
            header = lines[i]
            i += 2
            rows = []
            while i < len(lines) and _is_row(lines[i], spans):
                rows.append(lines[i])
                i += 1
            numeric = _right_aligned([header] + rows, spans)
            out.append("<table><thead><tr>")
            for name, n in zip(_cells(header, spans), numeric):
                out.append(f'<th{" class=n" if n else ""}>{html.escape(name)}</th>')
            out.append("</tr></thead><tbody>")
            for row in rows:
                out.append("<tr>")
                for cell, n in zip(_cells(row, spans), numeric):
                    out.append(f'<td{" class=n" if n else ""}>{html.escape(cell)}</td>')
                out.append("</tr>")
            out.append("</tbody></table>")
            continue
        if lines[i].strip():
            out.append(f"<p>{html.escape(lines[i])}</p>")
        i += 1
    if extra:
        out.append(extra)
    out.append("</div>")
    return "".join(out)
