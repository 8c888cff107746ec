"""Analysis results: the CLI's JSON (docs/json.md) plus DataFrame-friendly rows."""

from __future__ import annotations

import base64
import html
import re
from typing import Any, Dict, Iterator, List, Optional, Sequence

__all__ = ["Result", "OpsResult", "InfoResult", "ResultJSON", "FlameResult", "SummaryResult",
           "RooflineResult"]


class Result:
    """An analysis result.

    ``data`` is exactly what ``jaxprof COMMAND --format json`` prints (parsed), ``rows`` a flat
    list of dicts (one per table row) that ``to_pandas()`` turns into a DataFrame. In Jupyter
    the result renders as an HTML table.
    """

    #: Columns shown first in tables, when present.
    _lead: Sequence[str] = ()

    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data
        self.rows: List[Dict[str, Any]] = self._make_rows(data)

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
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns())

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self.rows)} rows>"

    def _repr_html_(self, max_rows: int = 50) -> str:
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

    def __init__(self, data: Dict[str, Any], key: str) -> None:
        self._key = key
        super().__init__(data)

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
        super().__init__(data)

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
    ``ops``, ``collectives``, ``compile`` and ``device`` hold the sections; ``text`` is what
    ``jaxprof summary`` prints. In Jupyter it renders as the sections' HTML tables."""

    _lead = ("rule", "text", "time_ns", "share")

    def __init__(self, data: Dict[str, Any], text: str) -> None:
        self.text = text
        super().__init__(data)

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [dict(o) for o in data.get("observations", [])]

    def __str__(self) -> str:
        return self.text

    @property
    def observations(self) -> List[Dict[str, Any]]:
        return self.data.get("observations", [])

    def _repr_html_(self, max_rows: int = 50) -> str:
        d = self.data
        out = ["<div>"]
        dev = d.get("device") or {}
        if dev:
            out.append("<p><b>Devices</b>: " + html.escape(
                f"{dev.get('devices', 0)} on {len(d.get('hosts', []))} host(s); "
                f"idle {100.0 * float(dev.get('idle_share', 0.0)):.1f}%") + "</p>")
        if self.observations:
            out.append("<p><b>Observations</b></p><ol>")
            out += [f"<li>{html.escape(o['text'])}</li>" for o in self.observations]
            out.append("</ol>")
        for key in ("modules", "ops", "collectives"):
            items = d.get(key) or []
            if items:
                out.append(f"<p><b>{key.capitalize()}</b></p>")
                out.append(_html_table(items, max_rows))
        comp = d.get("compile")
        if isinstance(comp, dict) and comp:
            flat = {k: v for k, v in comp.items() if not isinstance(v, (list, dict))}
            out.append("<p><b>Compile</b></p>" + _html_table([flat], max_rows))
        out.append("</div>")
        return "".join(out)


class RooflineResult(Result):
    """``Profile.roofline()``: one row per (device, op) with its FLOPs, bytes, rates, bound and
    efficiency, as in ``jaxprof roofline --format json`` (``data``); ``programs`` gives one row
    per (device, program). In Jupyter: each device's roofline chart above the table."""

    _lead = ("device", "name", "module", "category", "count", "total_ns", "flops",
             "bytes_accessed", "flop_rate", "bandwidth", "intensity", "bound", "efficiency",
             "predicted_ns", "source")

    def __init__(self, data: Dict[str, Any], svgs: Sequence[str]) -> None:
        super().__init__(data)
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
        return charts + super()._repr_html_(max_rows)


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
