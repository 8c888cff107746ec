"""Analysis results: the CLI's JSON (docs/json.md) plus DataFrame-friendly rows."""

from __future__ import annotations

import base64
import html
import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from ._cli_html import cli_html
from ._optional import require

__all__ = ["Result", "OpsResult", "InfoResult", "ResultJSON", "FlameResult", "SummaryResult",
           "MemoryResult", "RooflineResult"]


class Result:
    """An analysis result.

    ``data`` is exactly what ``jaxprof COMMAND --format json`` prints (parsed), ``rows`` a flat
    list of dicts (one per table row) that ``to_pandas()`` turns into a DataFrame. Printed (or
    shown at a Python prompt) the result is the table ``jaxprof COMMAND`` prints; in Jupyter it
    renders as the same text, its tables as HTML tables with the CLI's columns and units.
    """

    #: Columns shown first in tables, when present.
    _lead: Sequence[str] = ()

    def __init__(self, data: Dict[str, Any],
                 text: Union[None, str, Callable[[], str]] = None) -> None:
        self.data = data
        self.rows: List[Dict[str, Any]] = self._make_rows(data)
        self._text = text

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return iter(self.rows)

    def __getitem__(self, i: int) -> Dict[str, Any]:
        return self.rows[i]

    def columns(self) -> List[str]:
        cols: List[str] = [c for c in self._lead if any(c in r for r in self.rows[:1])]
        for r in self.rows:
            for k in r:
                if k not in cols:
                    cols.append(k)
        return cols

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame`` (needs pandas)."""
        pd = require("pandas", "to_pandas()")

        return pd.DataFrame(self.rows, columns=self.columns())

    @property
    def text(self) -> str:
        """The table the CLI prints for this result (rendered on first use)."""
        if callable(self._text):
            self._text = self._text()
        if self._text is None:
            return f"<{type(self).__name__}: {len(self.rows)} rows>"
        return self._text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text.rstrip("\n")

    def _repr_html_(self, max_rows: int = 50) -> str:
        # What the CLI prints, its tables as HTML tables: the same columns, units and cut names.
        if self._text is not None:
            return cli_html(self.text)
        cols = self.columns()
        out = ["<table>", "<thead><tr>"]
        out += [f"<th>{html.escape(c)}</th>" for c in cols]
        out.append("</tr></thead><tbody>")
        for r in self.rows[:max_rows]:
            out.append("<tr>")
            for c in cols:
                v = r.get(c, "")
                text = f"{v:.4g}" if isinstance(v, float) else str(v)
                out.append(f"<td>{html.escape(text)}</td>")
            out.append("</tr>")
        out.append("</tbody></table>")
        if len(self.rows) > max_rows:
            out.append(f"<p>{len(self.rows) - max_rows} more rows</p>")
        return "".join(out)


class OpsResult(Result):
    """``Profile.ops()``: one row per (device, group), times in ns as in the CLI's JSON."""

    _lead = ("device", "host", "name", "count", "total_ns", "self_ns", "share")

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        rows = []
        for dev in data["devices"]:
            for g in dev["groups"]:
                rows.append({"device": dev["device"], "host": dev["host"], **g})
        return rows

    @property
    def devices(self) -> List[Dict[str, Any]]:
        """Per-device totals (busy_ns, span_ns, events, selected_events) and their groups."""
        return self.data["devices"]

    @property
    def warnings(self) -> List[str]:
        return self.data["warnings"]


class InfoResult(Result):
    """``Profile.info()``: one row per plane; ``data`` holds lines, modules, hosts."""

    _lead = ("name", "kind", "host", "id", "events")

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [{k: v for k, v in p.items() if k not in ("lines", "stats")}
                for p in data["planes"]]

    @property
    def modules(self) -> List[Dict[str, Any]]:
        return self.data["modules"]


class ResultJSON(Result):
    """A result whose rows are the list under one key of its JSON, flattened one level: nested
    lists stay in ``data``; nested dicts become ``parent.child`` columns; with several
    devices (a ``devices`` list of objects holding the list) rows get ``device``/``host``."""

    def __init__(self, data: Dict[str, Any], key: str,
                 text: Union[None, str, Callable[[], str]] = None) -> None:
        self._key = key
        super().__init__(data, text)

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        items = data.get(self._key)
        if items is None and isinstance(data.get("devices"), list):
            items = []
            for dev in data["devices"]:
                for it in dev.get(self._key, []):
                    items.append({"device": dev.get("device"), "host": dev.get("host"), **it})
        rows = []
        for it in items or []:
            row: Dict[str, Any] = {}
            for k, v in it.items():
                if isinstance(v, dict):
                    for k2, v2 in v.items():
                        if not isinstance(v2, (list, dict)):
                            row[f"{k}.{k2}"] = v2
                elif not isinstance(v, list):
                    row[k] = v
            rows.append(row)
        return rows


class FlameResult(Result):
    """``Profile.flame()``: the flame tree (``data`` = ``jaxprof flame --format json``).

    One row per frame (depth-first, children heaviest first): ``device``, ``stack`` (frame
    names from the device down, joined with ``;``), ``frame``, ``kind``, ``depth`` (the device
    is 1), ``total_ns`` and ``self_ns``. ``svg()``, ``folded()`` and ``speedscope()`` return
    what ``jaxprof flame -o/--folded/--speedscope`` write; in Jupyter the result renders as the
    interactive SVG flamegraph.
    """

    _lead = ("device", "stack", "frame", "kind", "depth", "total_ns", "self_ns")

    def __init__(self, data: Dict[str, Any], tree: Any, title: str) -> None:
        self._tree = tree
        self._title = title
        super().__init__(data, lambda: tree.table(20))

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        rows: List[Dict[str, Any]] = []

        def walk(node: Dict[str, Any], device: str, stack: List[str], depth: int) -> None:
            stack = stack + [node["name"]]
            rows.append({"device": device, "stack": ";".join(stack), "frame": node["name"],
                         "kind": node["kind"], "depth": depth, "total_ns": node["total_ns"],
                         "self_ns": node["self_ns"]})
            for child in node.get("children", []):
                walk(child, device, stack, depth + 1)

        for dev in data["tree"].get("children", []):
            walk(dev, dev["name"], [], 1)
        return rows

    @property
    def devices(self) -> List[Dict[str, Any]]:
        """Per-device totals: busy, span, idle (during / between modules), events."""
        return self.data["devices"]

    @property
    def warnings(self) -> List[str]:
        return self.data["warnings"]

    def svg(self, title: Optional[str] = None, width: int = 1200,
            min_fraction: float = 1e-6) -> str:
        """A self-contained interactive SVG flamegraph (hover for details, click to zoom).

        Args:
            title: the heading (default ``jaxprof flame: <profile path>``, as on the CLI).
            width: pixels.
            min_fraction: frames lighter than this share of the whole are left out.
        """
        return self._tree.svg(self._title if title is None else title, int(width),
                              float(min_fraction))

    def folded(self) -> str:
        """Folded stacks (``frame;frame weight_ps`` lines) for flamegraph.pl, inferno, ..."""
        return self._tree.folded()

    def speedscope(self) -> str:
        """A speedscope JSON profile (https://www.speedscope.app), one per device."""
        return self._tree.speedscope()

    def _repr_html_(self, max_rows: int = 50) -> str:
        # The SVG's script treats the SVG as its own document: an iframe gives it one (and keeps
        # its element ids apart from other flamegraphs in the same notebook).
        svg = self.svg()
        m = re.search(r'<svg[^>]*\bheight="(\d+)"', svg)
        height = int(m.group(1)) + 20 if m else 600
        url = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
        return (f'<iframe src="{url}" style="width:100%;height:{height}px;border:0" '
                f'title="jaxprof flame"></iframe>')


class SummaryResult(Result):
    """``Profile.summary()``: the one-screen answer (``data`` = ``jaxprof summary --format
    json``). One row per observation (``rule``, ``text``, ``time_ns``, ``share``); ``modules``,
    ``ops``, ``collectives``, ``compile``, ``critical_path`` and ``device`` hold the sections;
    ``text`` is what ``jaxprof summary`` prints. In Jupyter it renders as that text, its tables
    as HTML tables."""

    _lead = ("rule", "text", "time_ns", "share")

    def __init__(self, data: Dict[str, Any], text: str) -> None:
        super().__init__(data, text)

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [dict(o) for o in data.get("observations", [])]

    @property
    def observations(self) -> List[Dict[str, Any]]:
        return self.data.get("observations", [])

    def _repr_html_(self, max_rows: int = 50) -> str:
        # `jaxprof summary` as it prints: the same figures, bases and units.
        return cli_html(self.text)


class MemoryResult(Result):
    """``Profile.memory()``: ``data`` = ``jaxprof memory --format json``.

    One row per allocator (``host``, ``device``, ``allocator``, ``peak_bytes_in_use``,
    ``peak_time_ns``, ``lifetime_peak_bytes_in_use``, ``peak_in_capture``, ...);
    ``programs()`` gives one row per (program, memory space) of static memory, ``live()`` the
    groups of allocations live at each allocator's peak, ``buffers()`` the largest buffers at
    each program's peak heap, ``timeline(allocator)`` the in-use points. ``svgs`` holds one
    chart per allocator (bytes in use over time, peak marked); Jupyter shows them.
    """

    _lead = ("host", "device", "allocator", "peak_bytes_in_use", "peak_time_ns",
             "lifetime_peak_bytes_in_use", "peak_in_capture")

    def __init__(self, data: Dict[str, Any], svgs: List[str]) -> None:
        self.svgs = list(svgs)
        super().__init__(data)

    def _allocators(self) -> Iterator[tuple]:
        for dev in self.data.get("devices", []):
            for a in dev["allocators"]:
                yield dev, a

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        rows = []
        for dev, a in self._allocators():
            row = {"host": dev["host"], "device": dev["device"],
                   "memory_space": dev["memory_space"]}
            row.update({k: v for k, v in a.items() if not isinstance(v, (list, dict))})
            live = a["live_at_peak"]
            row["live_at_peak_bytes"] = live["bytes"]
            row["allocated_before_capture_bytes"] = live["allocated_before_capture_bytes"]
            row["notes"] = "; ".join(a["notes"])
            rows.append(row)
        return rows

    @property
    def message(self) -> Optional[str]:
        """Why there is no allocator timeline (no allocator events), else None."""
        return self.data.get("message")

    def programs(self) -> List[Dict[str, Any]]:
        """One row per (program, memory space): peak heap, arguments, outputs, temporaries..."""
        rows = []
        for p in self.data.get("programs", []):
            for s in p["memory_spaces"]:
                row = {"module": p["module"], "program_id": p["program_id"]}
                row.update({k: v for k, v in s.items() if not isinstance(v, (list, dict))})
                row["notes"] = "; ".join(p["notes"])
                rows.append(row)
        return rows

    def live(self) -> List[Dict[str, Any]]:
        """The groups of allocations live at each allocator's peak, largest first."""
        return [{"device": dev["device"], "allocator": a["allocator"], **g}
                for dev, a in self._allocators() for g in a["live_at_peak"]["largest"]]

    def buffers(self) -> List[Dict[str, Any]]:
        """The largest buffers at each program's peak heap, with instruction, op and source."""
        return [{"module": p["module"], "program_id": p["program_id"],
                 "memory_space": s["memory_space"], **b}
                for p in self.data.get("programs", []) for s in p["memory_spaces"]
                for b in s["largest_at_peak"]]

    def timeline(self, allocator: str) -> List[Dict[str, Any]]:
        """The (sampled) timeline of the allocator named ``allocator``: ``time_ns``,
        ``bytes_in_use``, ``bytes_reserved`` per point."""
        for _dev, a in self._allocators():
            if a["allocator"] == allocator:
                return [{"time_ns": t, "bytes_in_use": b, "bytes_reserved": r}
                        for t, b, r in a["timeline"]["points"]]
        raise KeyError(allocator)

    def _repr_html_(self, max_rows: int = 50) -> str:
        out = ["<div>"]
        if self.message:
            out.append(f"<p>{html.escape(self.message)}</p>")
        out += self.svgs
        if self.rows:
            out.append(super()._repr_html_(max_rows))
        progs = self.programs()
        if progs:
            out.append("<p><b>Programs</b> (static memory from the buffer assignment)</p>")
            out.append(_html_table(progs, max_rows))
        elif self.data.get("programs_message"):
            out.append(f"<p>{html.escape(self.data['programs_message'])}</p>")
        out.append("</div>")
        return "".join(out)


class RooflineResult(Result):
    """``Profile.roofline()``: one row per (device, op) with its FLOPs, bytes, rates, bound and
    efficiency, as in ``jaxprof roofline --format json`` (``data``); ``programs`` gives one row
    per (device, program). In Jupyter: each device's roofline chart above the table."""

    _lead = ("device", "name", "module", "category", "count", "total_ns", "flops",
             "bytes_accessed", "flop_rate", "bandwidth", "intensity", "bound", "efficiency",
             "predicted_ns", "source")

    def __init__(self, data: Dict[str, Any], svgs: Sequence[str],
                 text: Optional[str] = None) -> None:
        super().__init__(data, text)
        self._svgs = list(svgs)

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [{"device": d["device"], "host": d["host"], **op}
                for d in data["devices"] for op in d["ops"]]

    @property
    def devices(self) -> List[Dict[str, Any]]:
        """Per device: peaks (with their sources), coverage, totals, programs and ops."""
        return self.data["devices"]

    @property
    def warnings(self) -> List[str]:
        return self.data["warnings"]

    @property
    def programs(self) -> List[Dict[str, Any]]:
        """One row per (device, program): time, FLOPs and bytes of its ops, bound, efficiency."""
        return [{"device": d["device"], **p} for d in self.data["devices"] for p in d["programs"]]

    def svg(self, device: Optional[str] = None) -> str:
        """The roofline chart (SVG text) of a device (default: the first)."""
        if not self._svgs:
            raise ValueError("no device op events: nothing to chart")
        if device is None:
            return self._svgs[0]
        for d, s in zip(self.data["devices"], self._svgs):
            if d["device"] == device:
                return s
        raise KeyError(f"no device {device!r}; devices: {[d['device'] for d in self.devices]}")

    def _repr_html_(self, max_rows: int = 50) -> str:
        charts = "".join(f"<div>{s}</div>" for s in self._svgs[:8])
        more = (f"<p>{len(self._svgs) - 8} more devices' charts: svg(device)</p>"
                if len(self._svgs) > 8 else "")
        return charts + more + super()._repr_html_(max_rows)


def _html_table(items: List[Dict[str, Any]], max_rows: int) -> str:
    cols: List[str] = []
    for r in items:
        for k, v in r.items():
            if k not in cols and not isinstance(v, (list, dict)):
                cols.append(k)
    out = ["<table><thead><tr>"]
    out += [f"<th>{html.escape(c)}</th>" for c in cols]
    out.append("</tr></thead><tbody>")
    for r in items[:max_rows]:
        out.append("<tr>")
        for c in cols:
            v = r.get(c, "")
            text = f"{v:.4g}" if isinstance(v, float) else str(v)
            out.append(f"<td>{html.escape(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)
