"""Analysis results: the CLI's JSON (docs/json.md) plus DataFrame-friendly rows."""

from __future__ import annotations

import html
from typing import Any, Dict, Iterator, List, Sequence

__all__ = ["Result", "OpsResult", "InfoResult", "ResultJSON"]


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
