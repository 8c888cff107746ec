"""The persistent autotuning cache (C++ ``AutotuneCache``: SQLite in WAL mode, safe for many
writer processes). Entries cross the binding as the ``jaxprof cache export`` JSON."""

from __future__ import annotations

import html
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from .. import _core

__all__ = ["Cache", "CacheEntry", "default_cache_path"]

_FORMAT = {"format": "jaxprof-autotune-cache", "version": 1}


def default_cache_path() -> str:
    """``$JAXPROF_CACHE``, else ``$XDG_CACHE_HOME/jaxprof/autotune.sqlite``, else
    ``~/.cache/jaxprof/autotune.sqlite``."""
    return _core.default_cache_path()


@dataclass
class CacheEntry:
    """One cached choice: the configuration picked for ``op`` on ``device`` for one call key,
    with the measurement that picked it (every sample, median, MAD, 95% CI of the median) and
    when (ISO 8601 UTC) and on which host it was measured (both filled in on write when
    empty)."""

    device: str
    op: str
    call_key: str
    config: Any
    samples_ns: List[float] = field(default_factory=list)
    median_ns: float = 0.0
    mad_ns: float = 0.0
    ci95_ns: Tuple[float, float] = (0.0, 0.0)
    measured_at: str = ""
    host: str = ""

    @classmethod
    def _from_json(cls, d: Dict[str, Any]) -> "CacheEntry":
        return cls(d["device"], d["op"], d["call_key"], d["config"], list(d["samples_ns"]),
                   d["median_ns"], d["mad_ns"], tuple(d["ci95_ns"]), d["measured_at"], d["host"])

    def _to_json(self) -> Dict[str, Any]:
        d = asdict(self)
        d["ci95_ns"] = list(self.ci95_ns)
        return d


class Cache:
    """The autotuning cache at ``path`` (default :func:`default_cache_path`; created with its
    directory). Every write is one transaction: concurrent writers lose nothing, the last write
    to a key wins, and a writer killed mid-write leaves the previous state."""

    def __init__(self, path: Optional[Union[str, "os.PathLike[str]"]] = None) -> None:
        self._core = _core.AutotuneCache(os.fspath(path) if path is not None else "")

    @property
    def path(self) -> str:
        return self._core.path

    def get(self, device: str, op: str, call_key: str) -> Optional[CacheEntry]:
        text = self._core.get_json(device, op, call_key)
        if text is None:
            return None
        return CacheEntry._from_json(json.loads(text)["entries"][0])

    def put(self, entries: Union[CacheEntry, Iterable[CacheEntry]]) -> int:
        """Inserts or replaces entries (all in one transaction); returns how many."""
        if isinstance(entries, CacheEntry):
            entries = [entries]
        return self._core.put_json(json.dumps({**_FORMAT,
                                               "entries": [e._to_json() for e in entries]}))

    def list(self, device: str = "", op: str = "") -> List[CacheEntry]:
        """Entries whose device and op contain these substrings ("" = any), ordered by key."""
        return [CacheEntry._from_json(d)
                for d in json.loads(self._core.list_json(device, op))["entries"]]

    def export(self, path: Optional[Union[str, "os.PathLike[str]"]] = None, device: str = "",
               op: str = "") -> str:
        """The ``jaxprof cache export`` JSON of the matching entries; also written to ``path``
        when given."""
        text = self._core.list_json(device, op)
        if path is not None:
            with open(path, "w") as f:
                f.write(text)
        return text

    def import_(self, source: Union[str, "os.PathLike[str]", Dict[str, Any]]) -> int:
        """Adds or replaces the entries of an export (a file path, JSON text, or the parsed
        dict), in one transaction; returns how many. (``import`` is a Python keyword.)"""
        if isinstance(source, dict):
            text = json.dumps(source)
        elif isinstance(source, str) and source.lstrip().startswith("{"):
            text = source
        else:
            with open(source) as f:
                text = f.read()
        return self._core.put_json(text)

    def clear(self, device: str = "", op: str = "") -> int:
        """Deletes the matching entries (all by default); returns how many went."""
        return self._core.clear(device, op)

    def __len__(self) -> int:
        return len(self.list())

    def __repr__(self) -> str:
        return f"<jaxprof.autotune.Cache {self.path}: {len(self)} entries>"

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame([_row(e) for e in self.list()])

    def _repr_html_(self, max_rows: int = 50) -> str:
        rows = [_row(e) for e in self.list()]
        cols = ["device", "op", "call_key", "config", "median_ns", "mad_ns", "runs",
                "measured_at", "host"]
        out = [f"<p>{html.escape(self.path)}: {len(rows)} entries</p><table><thead><tr>"]
        out += [f"<th>{c}</th>" for c in cols] + ["</tr></thead><tbody>"]
        for r in rows[:max_rows]:
            out.append("<tr>" + "".join(f"<td>{html.escape(_fmt(r[c]))}</td>" for c in cols) +
                       "</tr>")
        out.append("</tbody></table>")
        return "".join(out)


def _row(e: CacheEntry) -> Dict[str, Any]:
    return {"device": e.device, "op": e.op, "call_key": e.call_key,
            "config": json.dumps(e.config, sort_keys=True), "median_ns": e.median_ns,
            "mad_ns": e.mad_ns, "ci95_low_ns": e.ci95_ns[0], "ci95_high_ns": e.ci95_ns[1],
            "runs": len(e.samples_ns), "measured_at": e.measured_at, "host": e.host}


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def open_cache(cache: Any) -> Optional[Cache]:
    """``cache=`` arguments: True (the default path), False/None (no cache), a path, a Cache."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return Cache()
    if isinstance(cache, Cache):
        return cache
    return Cache(cache)


