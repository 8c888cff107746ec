"""Reference implementation of `jaxprof ops`, used by the tests as an oracle.

It reads XSpace profiles with the `protobuf` package (message classes are built
at run time from a descriptor constructed here, so no generated code and no
protoc are needed) and computes the `ops` result from the written definitions,
with exact integer picoseconds throughout. It shares nothing with the C++ wire
decoder on purpose.

Usage as a script (prints the oracle's JSON, times in ns):

    python tests/python/xplane_oracle.py FILE_OR_DIR [--group-by G] [--prefix P]
        [--match RE] [--min-duration NS] [--device D] [--top N]
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

NEST_TOLERANCE_PS = 1000
GROUP_BYS = ("kernel", "hlo-op", "module", "name", "opcode")
UNKNOWN_OPCODE = "(unknown)"


# ---------------------------------------------------------------------------
# XSpace message classes, built from a descriptor made here.
# Field numbers follow the public xplane.proto (package tensorflow.profiler).
# ---------------------------------------------------------------------------

_F = descriptor_pb2.FieldDescriptorProto
_PKG = "jaxprof_oracle.xplane"


def _add_field(msg, name, number, ftype, label=_F.LABEL_OPTIONAL, type_name=None,
               oneof_index=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = ftype
    f.label = label
    if type_name is not None:
        f.type_name = f".{_PKG}.{type_name}"
    if oneof_index is not None:
        f.oneof_index = oneof_index
    return f


def _add_map(msg, name, number, value_type):
    entry_name = "".join(p.capitalize() for p in name.split("_")) + "Entry"
    entry = msg.nested_type.add()
    entry.name = entry_name
    entry.options.map_entry = True
    _add_field(entry, "key", 1, _F.TYPE_INT64)
    _add_field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _add_field(msg, name, number, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
               type_name=f"{msg.name}.{entry_name}")


def _build_file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "jaxprof_oracle_xplane.proto"
    fd.package = _PKG
    fd.syntax = "proto3"
    rep = _F.LABEL_REPEATED

    m = fd.message_type.add()
    m.name = "XSpace"
    _add_field(m, "planes", 1, _F.TYPE_MESSAGE, rep, "XPlane")
    _add_field(m, "errors", 2, _F.TYPE_STRING, rep)
    _add_field(m, "warnings", 3, _F.TYPE_STRING, rep)
    _add_field(m, "hostnames", 4, _F.TYPE_STRING, rep)

    m = fd.message_type.add()
    m.name = "XPlane"
    _add_field(m, "id", 1, _F.TYPE_INT64)
    _add_field(m, "name", 2, _F.TYPE_STRING)
    _add_field(m, "lines", 3, _F.TYPE_MESSAGE, rep, "XLine")
    _add_map(m, "event_metadata", 4, "XEventMetadata")
    _add_map(m, "stat_metadata", 5, "XStatMetadata")
    _add_field(m, "stats", 6, _F.TYPE_MESSAGE, rep, "XStat")

    m = fd.message_type.add()
    m.name = "XLine"
    _add_field(m, "id", 1, _F.TYPE_INT64)
    _add_field(m, "display_id", 10, _F.TYPE_INT64)
    _add_field(m, "name", 2, _F.TYPE_STRING)
    _add_field(m, "display_name", 11, _F.TYPE_STRING)
    _add_field(m, "timestamp_ns", 3, _F.TYPE_INT64)
    _add_field(m, "duration_ps", 9, _F.TYPE_INT64)
    _add_field(m, "events", 4, _F.TYPE_MESSAGE, rep, "XEvent")

    m = fd.message_type.add()
    m.name = "XEvent"
    m.oneof_decl.add().name = "data"
    _add_field(m, "metadata_id", 1, _F.TYPE_INT64)
    _add_field(m, "offset_ps", 2, _F.TYPE_INT64, oneof_index=0)
    _add_field(m, "num_occurrences", 5, _F.TYPE_INT64, oneof_index=0)
    _add_field(m, "duration_ps", 3, _F.TYPE_INT64)
    _add_field(m, "stats", 4, _F.TYPE_MESSAGE, rep, "XStat")

    m = fd.message_type.add()
    m.name = "XStat"
    m.oneof_decl.add().name = "value"
    _add_field(m, "metadata_id", 1, _F.TYPE_INT64)
    _add_field(m, "double_value", 2, _F.TYPE_DOUBLE, oneof_index=0)
    _add_field(m, "uint64_value", 3, _F.TYPE_UINT64, oneof_index=0)
    _add_field(m, "int64_value", 4, _F.TYPE_INT64, oneof_index=0)
    _add_field(m, "str_value", 5, _F.TYPE_STRING, oneof_index=0)
    _add_field(m, "bytes_value", 6, _F.TYPE_BYTES, oneof_index=0)
    _add_field(m, "ref_value", 7, _F.TYPE_UINT64, oneof_index=0)

    m = fd.message_type.add()
    m.name = "XEventMetadata"
    _add_field(m, "id", 1, _F.TYPE_INT64)
    _add_field(m, "name", 2, _F.TYPE_STRING)
    _add_field(m, "display_name", 4, _F.TYPE_STRING)
    _add_field(m, "metadata", 3, _F.TYPE_BYTES)
    _add_field(m, "stats", 5, _F.TYPE_MESSAGE, rep, "XStat")
    _add_field(m, "child_id", 6, _F.TYPE_INT64, rep)

    m = fd.message_type.add()
    m.name = "XStatMetadata"
    _add_field(m, "id", 1, _F.TYPE_INT64)
    _add_field(m, "name", 2, _F.TYPE_STRING)
    _add_field(m, "description", 3, _F.TYPE_STRING)

    # The few fields of XLA's hlo.proto the opcode grouping needs (unknown fields are skipped).
    m = fd.message_type.add()
    m.name = "HloProto"
    _add_field(m, "hlo_module", 1, _F.TYPE_MESSAGE, type_name="HloModuleProto")
    m = fd.message_type.add()
    m.name = "HloModuleProto"
    _add_field(m, "name", 1, _F.TYPE_STRING)
    _add_field(m, "computations", 3, _F.TYPE_MESSAGE, rep, "HloComputationProto")
    m = fd.message_type.add()
    m.name = "HloComputationProto"
    _add_field(m, "name", 1, _F.TYPE_STRING)
    _add_field(m, "instructions", 2, _F.TYPE_MESSAGE, rep, "HloInstructionProto")
    m = fd.message_type.add()
    m.name = "HloInstructionProto"
    _add_field(m, "name", 1, _F.TYPE_STRING)
    _add_field(m, "opcode", 2, _F.TYPE_STRING)
    return fd


def _build_classes():
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_build_file_descriptor())
    names = ("XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata", "XStatMetadata",
             "HloProto")
    out = {}
    for n in names:
        desc = pool.FindMessageTypeByName(f"{_PKG}.{n}")
        if hasattr(message_factory, "GetMessageClass"):
            out[n] = message_factory.GetMessageClass(desc)
        else:  # protobuf < 4.21
            out[n] = message_factory.MessageFactory(pool).GetPrototype(desc)
    return out


_CLASSES = _build_classes()
XSpace = _CLASSES["XSpace"]
HloProto = _CLASSES["HloProto"]


class OracleError(Exception):
    """The input cannot be read as an XSpace profile."""


def read_xspace_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise OracleError(f"{path}: bad gzip data: {e}") from e
    return data


def load_xspace(path: str):
    """Parse one `*.xplane.pb` (plain or gzip) into an XSpace message."""
    data = read_xspace_bytes(path)
    space = XSpace()
    try:
        space.ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError and friends
        raise OracleError(f"{path}: not a valid XSpace: {e}") from e
    return space


# ---------------------------------------------------------------------------
# Finding the files of a profile
# ---------------------------------------------------------------------------

_XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")


def host_of_file(path: str) -> str:
    base = os.path.basename(path)
    return base.split(".", 1)[0]


def profile_files(path: str) -> List[str]:
    """The xplane files of a profile: the file itself, or for a directory the
    `*.xplane.pb[.gz]` files directly in it, else those of the newest run under
    `plugins/profile/<run>/` (runs sorted by name; JAX names them by time)."""
    if not os.path.isdir(path):
        return [path]

    def direct(d):
        return sorted(os.path.join(d, n) for n in os.listdir(d)
                      if n.endswith(_XPLANE_SUFFIXES) and os.path.isfile(os.path.join(d, n)))

    found = direct(path)
    if found:
        return found
    runs_dir = os.path.join(path, "plugins", "profile")
    if os.path.isdir(runs_dir):
        runs = sorted(r for r in os.listdir(runs_dir) if os.path.isdir(os.path.join(runs_dir, r)))
        for run in reversed(runs):
            found = direct(os.path.join(runs_dir, run))
            if found:
                return found
    raise OracleError(f"{path}: no *.xplane.pb files found")


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------

@dataclass
class Event:
    start_ps: int            # relative to the profile's base
    dur_ps: int
    order: int               # position in the merged line, file order
    kernel: str              # event metadata name
    display: str             # display_name if non-empty, else name
    hlo_op: Optional[str]
    hlo_module: Optional[str]
    program_id: Optional[int]
    device_ordinal: Optional[int] = None
    self_ps: int = 0
    opcode: Optional[str] = None  # from the profile's HloProtos; None when unknown
    # The device's own clock (device_offset_ps / device_duration_ps, the event's own stats), when
    # the event carries both; op durations and self times use it, placement does not.
    device_start_ps: Optional[int] = None
    device_dur_ps: Optional[int] = None
    # "memcpy" or "memset" when the event's stats (its own or its metadata's) carry
    # memcpy_details or memset_details; the name of the line it is on.
    memory_stat: Optional[str] = None
    line_name: str = ""

    @property
    def end_ps(self) -> int:
        return self.start_ps + self.dur_ps

    @property
    def op_dur_ps(self) -> int:
        return self.dur_ps if self.device_dur_ps is None else self.device_dur_ps

    @property
    def op_start_ps(self) -> int:
        return self.start_ps if self.device_start_ps is None else self.device_start_ps


@dataclass
class DeviceResult:
    device: str
    host: str
    busy_ps: int
    span_ps: int
    events: List[Event]      # counted events of the device, self time filled in


def _stat_value(stat, stat_md) -> Any:
    kind = stat.WhichOneof("value")
    if kind is None:
        return None
    if kind == "ref_value":
        md = stat_md.get(stat.ref_value)
        return md.name if md is not None else ""
    return getattr(stat, kind)


class _PlaneStats:
    """Stat lookups for one plane: event stats first, then metadata stats."""

    def __init__(self, plane):
        self.plane_name = plane.name
        self.stat_md = dict(plane.stat_metadata)
        self.name_of = {k: v.name for k, v in self.stat_md.items()}
        self._md_cache: Dict[int, Dict[str, Any]] = {}
        self.event_md = plane.event_metadata

    def _first_by_name(self, stats) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for s in stats:
            n = self.name_of.get(s.metadata_id)
            if n is None or n in out:
                continue
            out[n] = _stat_value(s, self.stat_md)
        return out

    def metadata_stats(self, md_id: int) -> Dict[str, Any]:
        d = self._md_cache.get(md_id)
        if d is None:
            md = self.event_md.get(md_id)
            d = self._first_by_name(md.stats) if md is not None else {}
            self._md_cache[md_id] = d
        return d

    def event_stats(self, ev) -> Dict[str, Any]:
        own = self._first_by_name(ev.stats) if len(ev.stats) else {}
        md = self.metadata_stats(ev.metadata_id)
        if not own:
            return md
        merged = dict(md)
        merged.update(own)
        return merged


def _as_text(v: Any) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _as_int(v: Any) -> Optional[int]:
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    try:
        return int(_as_text(v).strip())
    except ValueError:
        return None


def _is_device_plane(name: str) -> bool:
    return name.startswith("/device:")


def _is_counted_line(name: str) -> bool:
    return name.startswith("Stream #") or name == "XLA Ops"


def _merged_lines(plane) -> List[Tuple[int, List[Any]]]:
    """Lines of a plane merged by id, in order of first appearance.
    Returns (line id, [(XLine, XEvent) ...]) with events in file order."""
    by_id: Dict[int, List[Any]] = {}
    order: List[int] = []
    for line in plane.lines:
        if line.id not in by_id:
            by_id[line.id] = []
            order.append(line.id)
        by_id[line.id].append(line)
    return [(lid, by_id[lid]) for lid in order]


def _line_is_counted(xlines) -> bool:
    # A merged timeline counts when any of its XLines carries a counted name.
    return any(_is_counted_line(l.name) for l in xlines)


def _make_event(xline, ev, order, base_ns, stats: _PlaneStats, need_stats=True) -> Event:
    md = stats.event_md.get(ev.metadata_id)
    kernel = md.name if md is not None else ""
    disp = md.display_name if md is not None and md.display_name else kernel
    st = stats.event_stats(ev) if need_stats else {}
    hlo_op = st.get("hlo_op")
    hlo_module = st.get("hlo_module")
    own = stats._first_by_name(ev.stats) if need_stats and len(ev.stats) else {}
    dev_off, dev_dur = _as_int(own.get("device_offset_ps")), _as_int(own.get("device_duration_ps"))
    device_clock = (_is_device_plane(stats.plane_name) and dev_off is not None and
                    dev_dur is not None and dev_off >= 0 and dev_dur >= 0)
    return Event(
        start_ps=(xline.timestamp_ns - base_ns) * 1000 + ev.offset_ps,
        dur_ps=ev.duration_ps,
        order=order,
        kernel=kernel,
        display=disp,
        hlo_op=None if hlo_op is None else _as_text(hlo_op),
        hlo_module=None if hlo_module is None else _as_text(hlo_module),
        program_id=_as_int(st.get("program_id")),
        device_ordinal=_as_int(st.get("device_ordinal")),
        device_start_ps=dev_off if device_clock else None,
        device_dur_ps=dev_dur if device_clock else None,
        memory_stat=("memcpy" if "memcpy_details" in st else
                     "memset" if "memset_details" in st else None),
        line_name=xline.name,
    )


def compute_self_times(events: List[Event]) -> None:
    """Fill `self_ps` of the events of one merged line (all of them are both
    parents and potential children), on the clock op durations come from: the
    device's own where an event carries it, else the timeline's.

    Order: (start asc, duration desc, file order asc). The events nested in a
    parent are the later events in that order whose interval lies within the
    parent's, with NEST_TOLERANCE_PS on both ends; their intervals are clipped to
    the parent's and the length of their union is subtracted from its duration."""
    evs = sorted(events, key=lambda e: (e.op_start_ps, -e.op_dur_ps, e.order))
    n = len(evs)
    for i, e in enumerate(evs):
        p_start, p_end = e.op_start_ps, e.op_start_ps + e.op_dur_ps
        lo, hi = p_start - NEST_TOLERANCE_PS, p_end + NEST_TOLERANCE_PS
        covered = 0
        cur_s = cur_e = None
        j = i + 1
        # A later event starts at or after e; to end by `hi` it must start by `hi`.
        while j < n and evs[j].op_start_ps <= hi:
            c = evs[j]
            j += 1
            c_start, c_end = c.op_start_ps, c.op_start_ps + c.op_dur_ps
            if c_start < lo or c_end > hi:
                continue
            s, t = max(c_start, p_start), min(c_end, p_end)
            if t <= s:
                continue
            # candidates come sorted by start, so a running union works
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    covered += cur_e - cur_s
                cur_s, cur_e = s, t
            elif t > cur_e:
                cur_e = t
        if cur_e is not None:
            covered += cur_e - cur_s
        e.self_ps = max(0, e.op_dur_ps - covered)


def union_length(intervals: Iterable[Tuple[int, int]]) -> int:
    total = 0
    cur_s = cur_e = None
    for s, t in sorted(intervals):
        if t <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, t
        elif t > cur_e:
            cur_e = t
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def _base_ns(spaces) -> int:
    base = None
    for space in spaces:
        for plane in space.planes:
            for line in plane.lines:
                if len(line.events) and (base is None or line.timestamp_ns < base):
                    base = line.timestamp_ns
    return 0 if base is None else base


def analyze_spaces(named_spaces: Sequence[Tuple[str, Any]]) -> List[DeviceResult]:
    """named_spaces: [(host, XSpace)] in file order. Returns one DeviceResult per
    device with ≥1 counted event, in file then plane order."""
    base = _base_ns([s for _, s in named_spaces])
    results: List[DeviceResult] = []
    for host, space in named_spaces:
        found = _analyze_space(host, space, base)
        _name_modules_by_program_id(space, found)
        _set_opcodes(space, found)
        results.extend(found)
    return results


def _hlo_op_name(e: Event) -> Optional[str]:
    """The HLO instruction an op event ran: its hlo_op stat, or the name in TPU op text."""
    if e.hlo_op is not None:
        return e.hlo_op
    if e.kernel.startswith("%") and " = " in e.kernel:
        return e.kernel[1:e.kernel.index(" = ")] or None
    return None


def _set_opcodes(space, results: List["DeviceResult"]) -> None:
    """Opcodes from the "Hlo Proto" stats of /host:metadata. A module is found by program id
    (the entry's program_id stat, else its key), else by name when exactly one module has it."""
    by_program: Dict[int, Dict[str, str]] = {}
    by_name: Dict[str, List[Dict[str, str]]] = {}
    for plane in space.planes:
        if plane.name != "/host:metadata":
            continue
        stats = _PlaneStats(plane)
        for key, md in plane.event_metadata.items():
            st = stats.metadata_stats(key)
            blob = st.get("Hlo Proto")
            if not isinstance(blob, (bytes, str)):
                continue
            proto = HloProto()
            proto.ParseFromString(blob if isinstance(blob, bytes) else blob.encode("latin-1"))
            module = proto.hlo_module
            opcodes = {i.name: i.opcode for c in module.computations for i in c.instructions}
            pid = _as_int(st.get("program_id"))
            pid = key if pid is None else pid
            pid %= 1 << 64
            if pid in by_program:
                continue  # the first one indexed wins, as in the C++ index
            by_program[pid] = opcodes
            by_name.setdefault(module.name, []).append(opcodes)
    if not by_program:
        return
    for r in results:
        for e in r.events:
            op = _hlo_op_name(e)
            if op is None:
                continue
            found = None
            if e.program_id is not None:
                found = by_program.get(e.program_id % (1 << 64))
            # By name only for events without a program id: the profile's modules all have
            # one, and another program's HLO never describes this one's ops.
            if found is None and e.program_id is None and e.hlo_module is not None:
                cands = by_name.get(e.hlo_module, [])
                found = cands[0] if len(cands) == 1 else None
            if found is not None:
                e.opcode = found.get(op) or None


def _name_modules_by_program_id(space, results: List["DeviceResult"]) -> None:
    """Events with a program_id but no hlo_module stat (TPU ops) take the module name from the
    /host:metadata entry whose id is that program id (as uint64); the entry is named
    "<module>(<program id>)"."""
    names: Dict[int, str] = {}
    for plane in space.planes:
        if plane.name != "/host:metadata":
            continue
        for key, md in plane.event_metadata.items():
            name = md.name
            if name.endswith(")") and "(" in name:
                name = name[:name.rindex("(")]
            names.setdefault(key % (1 << 64), name)
    for r in results:
        for e in r.events:
            if e.hlo_module is None and e.program_id is not None:
                found = names.get(e.program_id % (1 << 64))
                if found:
                    e.hlo_module = found


def _analyze_space(host: str, space, base: int) -> List[DeviceResult]:
    device_planes = []
    for plane in space.planes:
        if not _is_device_plane(plane.name):
            continue
        lines = [(lid, xl) for lid, xl in _merged_lines(plane) if _line_is_counted(xl)]
        if any(len(l.events) for _, xl in lines for l in xl):
            device_planes.append((plane, lines))

    out: List[DeviceResult] = []
    if device_planes:
        for plane, lines in device_planes:
            stats = _PlaneStats(plane)
            dev_events: List[Event] = []
            for _, xlines in lines:
                line_events = []
                k = 0
                for xl in xlines:
                    for ev in xl.events:
                        line_events.append(_make_event(xl, ev, k, base, stats))
                        k += 1
                compute_self_times(line_events)
                dev_events.extend(line_events)
            out.append(_device_result(plane.name, host, dev_events))
        return out

    # CPU backend: /host:CPU serves every CPU device; its counted events carry hlo_op, and
    # their device_ordinal stat says which device ran them ("/device:CPU:N"; without the stat
    # the plane itself is the device). Self time is taken among one device's events per line.
    for plane in space.planes:
        if plane.name != "/host:CPU":
            continue
        stats = _PlaneStats(plane)
        by_device: Dict[Optional[int], List[Event]] = {}
        for _, xlines in _merged_lines(plane):
            per_device: Dict[Optional[int], List[Event]] = {}
            k = 0
            for xl in xlines:
                for ev in xl.events:
                    e = _make_event(xl, ev, k, base, stats)
                    k += 1
                    if e.hlo_op is not None:
                        per_device.setdefault(e.device_ordinal, []).append(e)
            for ordinal, line_events in per_device.items():
                compute_self_times(line_events)
                by_device.setdefault(ordinal, []).extend(line_events)
        for ordinal in sorted(by_device, key=lambda o: -1 if o is None else o):
            name = plane.name if ordinal is None else f"/device:CPU:{ordinal}"
            out.append(_device_result(name, host, by_device[ordinal]))
    return out


def _device_result(name: str, host: str, events: List[Event]) -> DeviceResult:
    busy = union_length((e.start_ps, e.end_ps) for e in events)
    span = max(e.end_ps for e in events) - min(e.start_ps for e in events)
    return DeviceResult(device=name, host=host, busy_ps=busy, span_ps=span, events=events)


def analyze_path(path: str) -> List[DeviceResult]:
    files = profile_files(path)
    return analyze_spaces([(host_of_file(f), load_xspace(f)) for f in files])


# ---------------------------------------------------------------------------
# Grouping, filtering, output
# ---------------------------------------------------------------------------

@dataclass
class Group:
    key: Tuple
    name: str
    count: int = 0
    total_ps: int = 0
    self_ps: int = 0
    sum_sq: int = 0
    min_ps: Optional[int] = None
    max_ps: Optional[int] = None
    module: Optional[str] = None            # hlo-op grouping
    program_id: Optional[int] = None        # module grouping
    has_module: bool = False
    has_program_id: bool = False

    def add(self, e: Event) -> None:
        d = e.op_dur_ps
        self.count += 1
        self.total_ps += d
        self.self_ps += e.self_ps
        self.sum_sq += d * d
        self.min_ps = d if self.min_ps is None else min(self.min_ps, d)
        self.max_ps = d if self.max_ps is None else max(self.max_ps, d)

    def variance_ps2(self) -> Fraction:
        n = self.count
        return Fraction(n * self.sum_sq - self.total_ps * self.total_ps, n * n)


def group_key(e: Event, group_by: str) -> Tuple[Tuple, str, Dict[str, Any]]:
    if group_by == "kernel":
        return (e.kernel,), e.kernel, {}
    if group_by == "name":
        return (e.display,), e.display, {}
    if group_by == "hlo-op":
        # TPU op events name the instruction in HLO text: "%fusion.3 = f32[8] fusion(...)".
        from_text = None
        if e.kernel.startswith("%") and " = " in e.kernel:
            from_text = e.kernel[1:e.kernel.index(" = ")]
        name = e.hlo_op if e.hlo_op is not None else from_text if from_text else e.display
        module = e.hlo_module if e.hlo_module is not None else ""
        return (module, name), name, {"module": module}
    if group_by == "module":
        name = e.hlo_module if e.hlo_module is not None else "(no module)"
        return (name, e.program_id), name, {"program_id": e.program_id}
    if group_by == "opcode":
        name = e.opcode if e.opcode else UNKNOWN_OPCODE
        return (name,), name, {}
    raise ValueError(f"unknown group-by {group_by!r}")


def min_duration_ps(ns: Any) -> Fraction:
    return Fraction(Decimal(str(ns))) * 1000


def device_selected(device: str, spec: Optional[str]) -> bool:
    if spec is None:
        return True
    if spec.startswith("re:"):
        return re.search(spec[3:], device) is not None
    return spec in device


def event_selected(e: Event, prefix=None, match=None, min_dur_ps=None) -> bool:
    if prefix is not None and not e.display.startswith(prefix):
        return False
    if match is not None and match.search(e.display) is None:
        return False
    if min_dur_ps is not None and e.op_dur_ps < min_dur_ps:
        return False
    return True


def _sort_key(g: Group):
    # total desc, name asc; the rest only makes the oracle deterministic
    return (-g.total_ps, g.name, g.key)


def _sortable(key: Tuple) -> Tuple:
    return tuple((0, 0) if k is None else (1, k) for k in key)


def ops(devices: List[DeviceResult], group_by: str = "hlo-op", prefix: Optional[str] = None,
        match: Optional[str] = None, min_duration_ns: Any = None, device: Optional[str] = None,
        top: Optional[int] = None) -> List[Dict[str, Any]]:
    """The ops result in exact units: per device a dict with busy_ps, span_ps
    and `groups` (a list of Group, sorted)."""
    rx = re.compile(match) if match is not None else None
    min_ps = min_duration_ps(min_duration_ns) if min_duration_ns is not None else None
    out = []
    for d in devices:
        if not device_selected(d.device, device):
            continue
        groups: Dict[Tuple, Group] = {}
        for e in d.events:
            if not event_selected(e, prefix, rx, min_ps):
                continue
            key, name, extra = group_key(e, group_by)
            g = groups.get(key)
            if g is None:
                g = Group(key=key, name=name)
                if "module" in extra:
                    g.module, g.has_module = extra["module"], True
                if "program_id" in extra:
                    g.program_id, g.has_program_id = extra["program_id"], True
                groups[key] = g
            g.add(e)
        ordered = sorted(groups.values(), key=lambda g: (-g.total_ps, g.name, _sortable(g.key)))
        if top is not None:
            ordered = ordered[:top]
        out.append({"device": d.device, "host": d.host, "busy_ps": d.busy_ps,
                    "span_ps": d.span_ps, "groups": ordered})
    return out


def ps_to_ns(ps: int) -> float:
    return ps / 1000


def to_json(result: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The oracle result in the CLI's JSON shape (floats; for display)."""
    devs = []
    for d in result:
        gs = []
        for g in d["groups"]:
            j = {"name": g.name, "count": g.count, "total_ns": ps_to_ns(g.total_ps),
                 "self_ns": ps_to_ns(g.self_ps), "mean_ns": g.total_ps / g.count / 1000,
                 "min_ns": ps_to_ns(g.min_ps), "max_ns": ps_to_ns(g.max_ps),
                 "std_ns": math.sqrt(g.variance_ps2()) / 1000,
                 "share": min(g.self_ps / d["busy_ps"], 1.0) if d["busy_ps"] else 0.0}
            if g.has_module:
                j["module"] = g.module
            if g.has_program_id:
                j["program_id"] = g.program_id
            gs.append(j)
        devs.append({"device": d["device"], "host": d["host"], "busy_ns": ps_to_ns(d["busy_ps"]),
                     "span_ns": ps_to_ns(d["span_ps"]), "groups": gs})
    return {"devices": devs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--group-by", default="hlo-op", choices=GROUP_BYS)
    ap.add_argument("--prefix")
    ap.add_argument("--match")
    ap.add_argument("--min-duration")
    ap.add_argument("--device")
    ap.add_argument("--top", type=int)
    a = ap.parse_args(argv)
    try:
        devices = analyze_path(a.path)
    except (OracleError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res = ops(devices, a.group_by, a.prefix, a.match, a.min_duration, a.device, a.top)
    json.dump(to_json(res), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
