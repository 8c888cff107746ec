"""Small helper to write synthetic XSpace profiles for tests.

Uses the message classes of `xplane_oracle` (built at run time from a
descriptor), so the files it writes are ordinary protobuf encodings.

    space = SpaceBuilder()
    gpu = space.plane("/device:GPU:0")
    k = gpu.event_md("kernel_a", display_name="a", stats={"hlo_module": "jit_f"})
    line = gpu.line(7, "Stream #7(Kernel)", timestamp_ns=1000)
    gpu.event(line, k, offset_ps=0, duration_ps=5000, stats={"hlo_op": Ref("fusion.1")})
    space.write(path)
"""
from __future__ import annotations

import gzip
from dataclasses import dataclass
from typing import Any, Dict, Optional

import xplane_oracle as xo


@dataclass(frozen=True)
class Ref:
    """A stat whose value is the name of another stat metadata (ref_value)."""
    text: str


@dataclass(frozen=True)
class U64:
    value: int


class PlaneBuilder:
    def __init__(self, plane):
        # A plane read from a file keeps its metadata: new ids follow the largest in use.
        self.plane = plane
        self._stat_ids: Dict[str, int] = {md.name: sid for sid, md in plane.stat_metadata.items()}
        self._next_stat = max(plane.stat_metadata.keys(), default=0) + 1
        self._next_md = max(plane.event_metadata.keys(), default=0) + 1

    def stat_id(self, name: str) -> int:
        sid = self._stat_ids.get(name)
        if sid is None:
            sid = self._next_stat
            self._next_stat += 1
            self._stat_ids[name] = sid
            md = self.plane.stat_metadata[sid]
            md.id = sid
            md.name = name
        return sid

    def _fill_stats(self, target, stats: Optional[Dict[str, Any]]) -> None:
        for name, value in (stats or {}).items():
            s = target.add()
            s.metadata_id = self.stat_id(name)
            if isinstance(value, Ref):
                s.ref_value = self.stat_id(value.text)
            elif isinstance(value, U64):
                s.uint64_value = value.value
            elif isinstance(value, bool):
                s.int64_value = int(value)
            elif isinstance(value, int):
                s.int64_value = value
            elif isinstance(value, float):
                s.double_value = value
            elif isinstance(value, bytes):
                s.bytes_value = value
            else:
                s.str_value = str(value)

    def plane_stats(self, stats: Dict[str, Any]) -> None:
        """Stats of the plane itself (device capabilities)."""
        self._fill_stats(self.plane.stats, stats)

    def event_md(self, name: str, display_name: str = "",
                 stats: Optional[Dict[str, Any]] = None) -> int:
        mid = self._next_md
        self._next_md += 1
        md = self.plane.event_metadata[mid]
        md.id = mid
        md.name = name
        md.display_name = display_name
        self._fill_stats(md.stats, stats)
        return mid

    def line(self, line_id: int, name: str, timestamp_ns: int = 0):
        line = self.plane.lines.add()
        line.id = line_id
        line.name = name
        line.timestamp_ns = timestamp_ns
        return line

    def event(self, line, md_id: int, offset_ps: int, duration_ps: int,
              stats: Optional[Dict[str, Any]] = None):
        ev = line.events.add()
        ev.metadata_id = md_id
        ev.offset_ps = offset_ps
        ev.duration_ps = duration_ps
        self._fill_stats(ev.stats, stats)
        return ev


class SpaceBuilder:
    def __init__(self, space=None):
        """A new XSpace, or more planes and lines added to one read with xplane_oracle."""
        self.space = space if space is not None else xo.XSpace()

    def existing(self, name: str) -> PlaneBuilder:
        """The plane of that name already in the space, to add lines and metadata to."""
        for p in self.space.planes:
            if p.name == name:
                return PlaneBuilder(p)
        raise KeyError(name)

    def plane(self, name: str, plane_id: int = 0) -> PlaneBuilder:
        p = self.space.planes.add()
        p.id = plane_id
        p.name = name
        return PlaneBuilder(p)

    def serialize(self) -> bytes:
        return self.space.SerializeToString()

    def write(self, path, compress: bool = False) -> None:
        data = self.serialize()
        if compress:
            data = gzip.compress(data, mtime=0)
        with open(path, "wb") as f:
            f.write(data)
