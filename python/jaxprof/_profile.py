"""Loading profiles and reading their events and analyses from Python."""

from __future__ import annotations

import json
import numbers
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _core, _tables
from ._optional import require
from ._results import (FlameResult, InfoResult, MemoryResult, OpsResult, Result, ResultJSON,
                       RooflineResult, SummaryResult)
from .errors import InvalidOptionError

if TYPE_CHECKING:  # NumPy is imported where events are read: `jaxprof sql` never needs it
    import numpy as np

__all__ = ["load", "Profile", "Events", "Plane"]

PathLike = Union[str, "os.PathLike[str]"]


def load(path: Union[PathLike, Sequence[PathLike]], session: Optional[str] = None,
         hosts: Optional[Iterable[str]] = None, *, include_autotuning: bool = False,
         include_warmup: bool = False) -> "Profile":
    """Loads a profile.

    Args:
        path: a ``*.xplane.pb[.gz]`` file, a run directory (``.../plugins/profile/<session>/``),
            a log directory (the newest session is read), or a list of paths: several
            ``*.xplane.pb`` files (one per host) and/or ``*.hlo.pb`` files, as on the CLI.
        session: for a log directory, the session to read instead of the newest.
        hosts: read only these hosts of the session.
        include_autotuning, include_warmup: count XLA's autotuner executions, and each program's
            first execution after its compile in the capture with the time spent compiling, in
            the analyses' figures (by default they are set apart from the steady state:
            docs/steady-state.md; ``set_apart()`` says how much).

    A directory whose files are not the hosts of one capture is refused, as on the CLI;
    ``Profile.input`` says which session and files were read.

    Raises:
        ProfileNotFoundError: nothing to read at ``path``.
        CorruptProfileError: the file is not a readable profile.
    """
    if isinstance(path, (str, os.PathLike)):
        paths = [os.fspath(path)]
    else:
        paths = [os.fspath(p) for p in path]
    core = _core.load(paths, session or "", list(hosts or []))
    core.set_steady_state(bool(include_autotuning), bool(include_warmup))
    return Profile(core)


@dataclass(frozen=True)
class Plane:
    """One XPlane: ``index`` is its position in the profile (file order for one host)."""

    index: int
    name: str
    id: int
    kind: str
    host: str
    lines: int
    events: int


class Events:
    """Event columns of a profile or a device.

    Columns (``columns`` dict, also attributes): ``start_ps`` and ``duration_ps`` (int64,
    picoseconds relative to the profile's ``base_ns``: placement on the timeline, host-aligned),
    ``op_duration_ps`` (int64: the op's own duration, on the device's clock where the event
    carries one, as TPU ops do; else ``duration_ps``; see docs/clocks.md), ``metadata`` (uint32: index into
    ``names``), ``hlo_op`` (uint32: index into ``strings``, 0 = none), ``module`` (uint32: index
    into ``modules``, 0 = none) and ``line`` (uint32: index into ``Profile.lines()``).

    Arrays are read-only. Where the events are one contiguous range of the profile's columns
    (all events, or a device whose ops sit on one line) they are NumPy views of the C++ columns,
    with no copy; they keep the profile's memory alive on their own. Otherwise they are gathered
    copies.
    """

    def __init__(self, columns: Dict[str, np.ndarray], names: List[str], strings: List[str],
                 modules: List[str]) -> None:
        self.columns = columns
        self.names = names
        self.strings = strings
        self.modules = modules

    def __len__(self) -> int:
        return len(self.columns["start_ps"])

    def __getattr__(self, name: str) -> np.ndarray:
        cols = self.__dict__.get("columns", {})
        if name in cols:
            return cols[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"<Events: {len(self)} events>"

    @property
    def name(self) -> np.ndarray:
        """Event names as an object array (materialised: prefer ``metadata`` + ``names``)."""
        import numpy as np

        return np.asarray(self.names, dtype=object)[self.columns["metadata"]]

    def _categorical(self, codes: np.ndarray, categories: List[str]) -> Any:
        import numpy as np

        pd = require("pandas", "to_pandas()")
        try:
            return pd.Categorical.from_codes(codes.astype(np.int64, copy=False), categories)
        except ValueError:  # duplicate categories after lenient UTF-8 decoding
            return np.asarray(categories, dtype=object)[codes]

    def to_pandas(self) -> Any:
        """A DataFrame; numeric columns wrap the arrays (no copy), names are categoricals."""
        pd = require("pandas", "to_pandas()")

        c = self.columns
        data = {
            "start_ps": c["start_ps"],
            "duration_ps": c["duration_ps"],
            "op_duration_ps": c["op_duration_ps"],
            "name": self._categorical(c["metadata"], self.names),
            "hlo_op": self._categorical(c["hlo_op"], self.strings),
            "module": self._categorical(c["module"], self.modules),
            "line": c["line"],
        }
        return pd.DataFrame(data, copy=False)

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table``; numeric columns wrap the arrays (no copy), names are dictionaries.

        pyarrow wraps the NumPy buffers without copying; the table exports through the Arrow C
        data interface (``__arrow_c_stream__``) to polars, DuckDB and others.
        """
        import numpy as np

        pa = require("pyarrow", "to_arrow()")

        c = self.columns

        def dictionary(codes: np.ndarray, categories: List[str]) -> Any:
            # uint32 codes are below 2**31 (they index Python lists): an int32 view, no copy.
            return pa.DictionaryArray.from_arrays(pa.array(codes.view(np.int32)),
                                                  pa.array(categories, pa.string()))

        return pa.table({
            "start_ps": pa.array(c["start_ps"]),
            "duration_ps": pa.array(c["duration_ps"]),
            "op_duration_ps": pa.array(c["op_duration_ps"]),
            "name": dictionary(c["metadata"], self.names),
            "hlo_op": dictionary(c["hlo_op"], self.strings),
            "module": dictionary(c["module"], self.modules),
            "line": pa.array(c["line"]),
        })


_COLUMNS = ("start_ps", "duration_ps", "op_duration_ps", "metadata", "hlo_op", "module")


class Profile:
    """A loaded profile: hosts, planes, devices, event columns, and the analyses.

    Lines are decoded on first use, as in the CLI: ``ops()`` on a GPU profile never decodes the
    host threads.
    """

    def __init__(self, core: Any) -> None:
        # Made by load() (and the other readers) around the C++ profile; a path here is the
        # common slip, and would otherwise fail later with a C++ cast error.
        if isinstance(core, (str, bytes, os.PathLike, list, tuple)):
            raise TypeError("jaxprof.Profile is made by jaxprof.load(path); "
                            f"call jaxprof.load({core!r}) to read a profile")
        self._core = core

    # ---- structure -------------------------------------------------------------------------
    @property
    def hosts(self) -> List[str]:
        return [h for h, _ in self._core.hosts]

    @property
    def files(self) -> List[str]:
        return [f for _, f in self._core.hosts]

    @property
    def input(self) -> Dict[str, Any]:
        """What was read: ``path``, ``layout`` (``file``, ``run-dir``, ``log-dir``), ``session``,
        ``sessions`` found, ``newest_by_default``, ``hosts`` (``host``, ``path``) and
        ``hlo_files`` (the CLI's ``input`` JSON member)."""
        return json.loads(self._core.input_json())

    def set_apart(self) -> Dict[str, Any]:
        """What the figures leave out as not steady state: autotuning and warm-up executions,
        compile time (the CLI's ``set_apart`` JSON member; docs/steady-state.md)."""
        return json.loads(self._core.set_apart_json())

    @property
    def base_ns(self) -> int:
        """Absolute time (ns since the epoch, as the profile states it) of ``start_ps == 0``."""
        return int(self._core.base_ns)

    @property
    def num_events(self) -> int:
        return int(self._core.num_events)

    @property
    def planes(self) -> List[Plane]:
        return [Plane(**p) for p in self._core.planes()]

    def lines(self) -> List[tuple]:
        """``(plane, name, id, first_event, event_count)`` per line."""
        return self._core.lines()

    @property
    def devices(self) -> List[str]:
        """Devices with op events (``/device:GPU:0``, ``/device:CPU:3``, ...), in plane order."""
        return [d["name"] for d in self._core.devices()]

    def device_info(self) -> List[Dict[str, Any]]:
        """``{name, host, plane, lines}`` per device."""
        return self._core.devices()

    @property
    def warnings(self) -> List[str]:
        return list(self._core.warnings)

    # ---- events ----------------------------------------------------------------------------
    def events(self, device: Optional[str] = None, host: Optional[str] = None) -> Events:
        """Event columns: all events of the profile, or the op events of one device.

        Args:
            device: a name from ``devices`` (e.g. ``/device:CPU:0``); ``None`` = every event.
            host: with several hosts, the host the device belongs to (default: the first).
        """
        core = self._core
        lines = core.lines()
        if device is None:
            core.require_all()
            cols = {name: getattr(core, name)() for name in _COLUMNS}
            cols["line"] = _line_column(lines, core.num_events)
        else:
            match = [d for d in core.devices()
                     if d["name"] == device and (host is None or d["host"] == host)]
            if not match:
                raise KeyError(f"no device {device!r}; devices: {self.devices}")
            idx = core.device_events(match[0]["plane"], device)
            full = {name: getattr(core, name)() for name in _COLUMNS}
            full["line"] = _line_column(lines, core.num_events)
            if len(idx) == 0 or int(idx[-1]) - int(idx[0]) + 1 == len(idx):
                # Contiguous: slices are views of the columns.
                sl = slice(int(idx[0]), int(idx[-1]) + 1) if len(idx) else slice(0, 0)
                cols = {k: v[sl] for k, v in full.items()}
            else:
                cols = {k: v[idx] for k, v in full.items()}
                for v in cols.values():
                    v.flags.writeable = False
        return Events(cols, core.metadata_names(), core.strings(), core.module_labels())

    # ---- analyses --------------------------------------------------------------------------
    def ops(self, group_by: str = "hlo-op", *, device: Optional[str] = None,
            prefix: Optional[str] = None, match: Optional[str] = None,
            min_duration_ns: float = 0.0, max_events: int = 0,
            top: Optional[int] = None, by_program: bool = False) -> OpsResult:
        """Device time per HLO op, kernel, module, name, category or opcode (``jaxprof ops``).

        Arguments mirror the CLI's options (``group_by`` is one of ``GROUP_BY``; underscores
        may replace dashes); ``data`` equals ``jaxprof ops --format json``. ``top=None`` keeps
        every group in ``data`` and prints the largest 20 per device, as the CLI does on a
        terminal; ``top=N`` keeps N (0 = all). ``by_program`` is ``--by-program``.
        """
        group = _choice("group_by", group_by, GROUP_BY)
        ns = _min_duration_ps(min_duration_ns)
        keep, shown = _top("top", top), _shown(top)
        events = _count("max_events", max_events)
        args = (group, device or "", prefix or "", match or "", ns, events)
        split = bool(by_program)
        data = json.loads(self._core.ops_json(*args, keep, by_program=split))
        return OpsResult(data, lambda: self._core.ops_json(*args, shown, format="table",
                                                           by_program=split))

    def info(self) -> InfoResult:
        """Hosts, planes, lines, modules (``jaxprof info --all-lines``)."""
        return InfoResult(json.loads(self._core.info_json()),
                          lambda: self._core.info_json(format="table"))

    def timeline(self) -> Result:
        """Compute, exposed communication, exposed memcpy and idle per device
        (``jaxprof timeline``); ``data`` equals its JSON, one row per device."""
        return ResultJSON(json.loads(self._core.timeline_json()), "devices",
                          lambda: self._core.timeline_json(format="table"))

    def modules(self, top_ops: int = 5) -> Result:
        """XLA program executions, warm-up apart (``jaxprof modules``); one row per module."""
        n = _count("top_ops", top_ops)
        return ResultJSON(json.loads(self._core.modules_json(n)), "modules",
                          lambda: self._core.modules_json(n, format="table"))

    def kernels(self, *, device: Optional[str] = None, prefix: Optional[str] = None,
                match: Optional[str] = None, min_duration_ns: float = 0.0,
                top: Optional[int] = None) -> Result:
        """GPU kernels with launch configurations (``jaxprof kernels``); ``top`` as for
        :meth:`ops`."""
        args = (device or "", prefix or "", match or "", _min_duration_ps(min_duration_ns))
        keep, shown = _top("top", top), _shown(top)
        data = json.loads(self._core.kernels_json(*args, keep))
        return ResultJSON(data, "kernels",
                          lambda: self._core.kernels_json(*args, shown, format="table"))

    def roofline(self, *, device: Optional[str] = None, prefix: Optional[str] = None,
                 match: Optional[str] = None, min_duration_ns: float = 0.0,
                 top: Optional[int] = None,
                 peak_tflops: Union[None, float, str, Sequence[str]] = None,
                 peak_gbps: float = 0.0, device_model: Optional[str] = None,
                 latency_floor_us: float = 2.0) -> RooflineResult:
        """FLOPs, bytes, achieved rates, bound and efficiency per HLO op and program
        (``jaxprof roofline``); one row per (device, op).

        Args:
            peak_tflops: peak TFLOP/s overriding the device's stats and the table: a number for
                every compute type, ``"bf16=989"``, or a list of such strings.
            peak_gbps: peak memory bandwidth in GB/s (10^9 bytes/s).
            device_model: take the peaks of a known accelerator (``"h100-sxm"``, ``"mi300x"``,
                ``"tpu-v5e"``, ...).
            latency_floor_us: roofline time per execution under which a slow op is
                latency-bound.

        ``top``: each device's N longest ops (None or 0: all; printed, the table shows
        PRINTED_TOP of them unless ``top`` is given). ``data`` equals ``jaxprof roofline --format
        json``; ``programs`` has the per-program rows; ``svg(device)`` the roofline chart, which
        Jupyter shows with the table.
        """
        if peak_tflops is None:
            peaks: List[str] = []
        elif isinstance(peak_tflops, (int, float)):
            peaks = [repr(float(peak_tflops))]
        elif isinstance(peak_tflops, str):
            peaks = [peak_tflops]
        else:
            peaks = [str(p) for p in peak_tflops]
        keep = _top("top", top)
        text, table, svgs = self._core.roofline(
            device or "", prefix or "", match or "", _min_duration_ps(min_duration_ns), keep,
            peaks, float(peak_gbps), device_model or "", int(latency_floor_us * 1e6 + 0.5),
            0 if keep else _shown(top))
        return RooflineResult(json.loads(text), list(svgs), table)

    def flame(self, by: str = "source", *, device: Optional[str] = None,
              idle: bool = False) -> FlameResult:
        """Device time as a flame tree by Python source stack, JAX op path or module
        (``jaxprof flame``).

        Args:
            by: ``"source"``, ``"op-name"`` (or ``"op_name"``) or ``"module"``.
            device: only devices whose name contains this (or matches ``re:REGEX``).
            idle: add the idle frames (a device then weighs its span, not its busy time), as
                ``--idle`` does; by default they are left out.

        ``data`` equals ``jaxprof flame --format json``; ``svg()``, ``folded()`` and
        ``speedscope()`` give the files ``-o``, ``--folded`` and ``--speedscope`` write.
        """
        tree = self._core.flame(_choice("by", by, FLAME_BY), device or "", bool(idle))
        files = self.files
        title = "jaxprof flame: " + (files[0] if files else "profile")
        return FlameResult(json.loads(tree.json()), tree, title)

    def collectives(self, *, device: Optional[str] = None, top: Optional[int] = None,
                    instances: bool = False) -> Result:
        """Collectives: group size, message size, bus bandwidth, hidden and exposed time,
        stragglers (``jaxprof collectives``); one row per collective op; ``top`` as for
        :meth:`ops`.

        ``instances=True`` also lists every instance in ``data`` (``--instances``).
        """
        keep, shown = _top("top", top), _shown(top)
        data = json.loads(self._core.collectives_json(device or "", keep, bool(instances)))
        return ResultJSON(data, "ops", lambda: self._core.collectives_json(
            device or "", shown, False, format="table"))

    def critical_path(self, *, what_if: Union[None, str, Sequence[str]] = None,
                      top: Optional[int] = None, rank: bool = True) -> Result:
        """What sets each step's time (``jaxprof critical-path``): per step the chain of ops,
        collectives, host work and named gaps that ends last (``path``, adding up to
        ``step_ns``), time on it by category (``critical_ns``) and per op ``on_path_ns`` and
        ``slack_ns``; one row per step.

        Args:
            what_if: a change to replay, or a list of them (``--what-if``): ``"op=PATTERN:F"``,
                ``"category=NAME:F"``, ``"host=NAME:median"``, ``"collectives=overlapped"``,
                ``"launches=free"``. Each step then has ``predicted_step_ns`` (all at once) and
                ``what_if`` (each alone); ``data["what_if"]`` has the means over steady steps.
            top: ops kept per step (None or 0: all).
            rank: rank candidate changes by what they would gain (``data["ranked"]``).

        See docs/critical-path.md.
        """
        specs = [what_if] if isinstance(what_if, str) else list(what_if or [])
        text, table = self._core.critical_path(
            [str(s) for s in specs], _top("top", top), bool(rank), _shown(top))
        return ResultJSON(json.loads(text), "steps", table)

    def memory(self, *, only: Optional[str] = None, allocator: Optional[str] = None,
               module: Optional[str] = None, top: int = 10, points: int = 1000) -> MemoryResult:
        """Memory (``jaxprof memory``): bytes in use over time per allocator, the peak and what
        was live at it, and each compiled program's static memory from XLA's buffer assignment.

        Args:
            only: ``"allocators"`` or ``"programs"`` for one part (``--only``).
            allocator: only allocators whose name or device contains this (``--allocator``).
            module: only programs whose module name contains this (``--module``).
            top: groups of live allocations and buffers listed at each peak (0 = all).
            points: timeline points kept per allocator (0 = every event).

        ``data`` equals ``jaxprof memory --format json``; one row per allocator, ``programs()``
        one per (program, memory space); in Jupyter it renders the in-use charts with the peaks
        marked (``svgs``).
        """
        text, svgs = self._core.memory(only or "", allocator or "", module or "", int(top),
                                       int(points))
        return MemoryResult(json.loads(text), svgs)

    def compile(self, *, top_steps: int = 0) -> Result:
        """Compile time per compile, module and phase (``jaxprof compile``); one row per compile
        (``data["events"]``), with ``data["modules"]`` and ``data["phases"]`` as totals.
        Printed, it details the 5 longest compiles, as the CLI does on a terminal."""
        n = _count("top_steps", top_steps)
        return ResultJSON(json.loads(self._core.compile_json(n)), "events",
                          lambda: self._core.compile_json(n, format="table", top=5))

    def autotune_report(self, pattern: str = r"autotune_fn_(\d+)", *,
                        include_warmup: bool = False, resamples: int = 2000) -> Result:
        """``jaxprof autotune-report --format json``: per-candidate samples and statistics of
        the modules (or events) matching ``pattern``, winner and significance; one row per
        candidate, fastest first (docs/autotune.md)."""
        text = self._core.autotune_report_json(pattern, bool(include_warmup), int(resamples),
                                               _core.AUTOTUNE_BOOTSTRAP_SEED)
        return ResultJSON(json.loads(text), "candidates")

    def summary(self, *, top: int = 5, observations: int = 3) -> SummaryResult:
        """The one-screen summary (``jaxprof summary``): device time and idle share, top
        modules, ops, collectives, compile time, and the observations most worth acting on.
        Printed, it is the CLI's text; in Jupyter it renders as HTML tables."""
        n, obs = _count("top", top), _count("observations", observations)
        data = json.loads(self._core.summary(n, obs, False))
        return SummaryResult(data, self._core.summary(n, obs, True))

    def tables(self) -> List[str]:
        """The names of the profile's tables (docs/tables.md): ``device_ops``,
        ``module_executions``, ``steps``, ``host_ranges``, ``collectives``, ``compiles``,
        ``compile_passes``, ``kernels``, ``memory``."""
        return _tables.table_names()

    def table(self, name: str, *, device: Optional[str] = None,
              steps: Optional[Union[int, Iterable[int]]] = None,
              include_warmup: bool = False) -> Any:
        """One table of the profile as a ``pyarrow.Table`` (``.to_pandas()``; polars and DuckDB
        read it through Arrow), built in C++ and wrapped without a copy; strings are dictionary
        columns. ``device`` keeps the devices whose name contains it (``re:`` for a regex),
        ``steps`` the rows of those step numbers; rows set apart as warm-up or autotuning (the
        ``warmup``/``autotuning`` columns, ``role``) are left out unless ``include_warmup``, as in
        every analysis. Needs pyarrow (``pip install 'jaxprof[sql]'``)."""
        return _tables.build_table(self._core, name, device, steps, include_warmup)

    def sql(self, query: str) -> Any:
        """Runs ``query`` with DuckDB over the profile's tables, whole (warm-up rows included,
        with their flags), each built only when the query names it; returns a
        ``pyarrow.Table``. Needs duckdb and pyarrow (``pip install 'jaxprof[sql]'``)."""
        return _tables.sql(lambda name: _tables.arrow_table(self._core, name), query)

    def export_perfetto(self, path: PathLike, *, align: bool = True,
                        critical_path: bool = False) -> Dict[str, Any]:
        """Writes the whole capture as a Perfetto trace (``jaxprof export --perfetto``: Perfetto's
        protobuf, or Chrome trace JSON for ``*.json``; gzip-compressed when ``path`` ends in
        ``.gz``). Several hosts are put on one clock by the offsets ``jaxprof hosts`` estimates
        unless ``align=False`` (``--no-align``). ``critical_path=True`` adds each step's critical
        path as tracks with arrows (``--critical-path``).

        Returns what was written: ``devices``, ``op_events``, ``segments``, ``executions``,
        ``collective_events``, ``arrival_flows``, ``path_segments`` and ``notes`` (what the
        export left out, and the clock offsets).
        """
        return self._core.export_perfetto(os.fspath(path), align, critical_path)

    def __repr__(self) -> str:
        return (f"<jaxprof.Profile hosts={self.hosts} planes={len(self._core.planes())} "
                f"events={self.num_events}>")


#: What ``Profile.ops(group_by=...)`` accepts (``jaxprof ops --group-by``).
GROUP_BY = ("hlo-op", "kernel", "module", "name", "category", "opcode")
#: What ``Profile.flame(by=...)`` accepts (``jaxprof flame --by``).
FLAME_BY = ("source", "op-name", "module")
#: Rows a printed result shows when ``top`` is not given (the CLI's default on a terminal).
PRINTED_TOP = 20


def _choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` (underscores read as dashes) when it is one of ``choices``; else an error that
    names the argument as the caller wrote it and lists what it accepts."""
    text = value.replace("_", "-") if isinstance(value, str) else None
    if text not in choices:
        raise InvalidOptionError(
            f"{name}={value!r}: expected one of " + ", ".join(repr(c) for c in choices),
            None, f"{name}: expected one of " + ", ".join(choices))
    return text


def _count(name: str, value: Any) -> int:
    """A whole number >= 0, or an error naming the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InvalidOptionError(f"{name}={value!r}: expected a whole number >= 0", None,
                                 f"{name}: expected a whole number >= 0")
    return int(value)


def _top(name: str, value: Optional[int]) -> int:
    """``top``: None and 0 keep every row."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InvalidOptionError(f"{name}={value!r}: expected None or a whole number >= 0 "
                                 "(0 = all)", None, f"{name}: expected a whole number >= 0")
    return int(value)


def _shown(top: Optional[int]) -> int:
    """Rows the printed table shows: ``top`` when given, else PRINTED_TOP."""
    return PRINTED_TOP if top is None else int(top)


def _min_duration_ps(ns: Any) -> int:
    if isinstance(ns, bool) or not isinstance(ns, numbers.Real) \
            or not ns >= 0 or ns == float("inf"):
        raise InvalidOptionError(f"min_duration_ns={ns!r}: expected a number of nanoseconds >= 0",
                                 None, "min_duration_ns: expected a number >= 0")
    return int(ns * 1000.0 + 0.5)


def _line_column(lines: List[tuple], n: int) -> np.ndarray:
    """Per-event line index (lines own contiguous ranges)."""
    import numpy as np

    out = np.zeros(n, dtype=np.uint32)
    for i, (_plane, _name, _id, first, count) in enumerate(lines):
        out[first:first + count] = i
    out.flags.writeable = False
    return out
