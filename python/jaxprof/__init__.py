"""jaxprof: where does my JAX program's time go?

Analysis (C++ core): :func:`load` a profile, then ``Profile.ops()``, ``Profile.info()``,
``Profile.flame()``, ``Profile.summary()``, ``Profile.events()``, ...; :func:`view` writes a
Perfetto trace next to a capture (and can serve it to ui.perfetto.dev from 127.0.0.1). Capture (on top of ``jax.profiler``, imported lazily): :func:`trace`,
:func:`annotate`, :func:`trace_function`, :func:`step`, :class:`StepProfiler`, :func:`latest`.
Tables: :func:`export_parquet` writes every table of every host as Parquet, host by host.
Autotuning: :mod:`jaxprof.autotune` (``time_candidates``, ``tune``, the cache, labels and
``tune_lowered``; loaded on first use); compatibility: :class:`Profiler` (ejkernel's API).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import CorruptProfileError, InvalidOptionError, ProfileError, ProfileNotFoundError

if TYPE_CHECKING:
    from ._profile import Events, Plane, Profile, load
    from ._results import (FlameResult, InfoResult, MemoryResult, OpsResult, Result,
                           RooflineResult, SummaryResult)

__version__ = "0.1.0"

__all__ = [
    "load", "Profile", "Events", "Plane", "Result", "OpsResult", "InfoResult", "FlameResult",
    "SummaryResult", "MemoryResult", "RooflineResult", "view", "Viewer", "ExternalViewer",
    "ProfileError", "ProfileNotFoundError", "CorruptProfileError", "InvalidOptionError",
    "trace", "annotate", "trace_function", "step", "StepProfiler", "latest", "summarize",
    "wait_for_device",
    "Profiler", "ProfilingError", "autotune", "sessions", "extract_session", "export_parquet",
]

# Loaded on first use: `python -m jaxprof.sql` reaches the C++ core without the Python API's
# modules, and the capture helpers import jax.
_LAZY = {
    "load": "_profile", "Profile": "_profile", "Events": "_profile", "Plane": "_profile",
    "Result": "_results", "OpsResult": "_results", "InfoResult": "_results",
    "FlameResult": "_results", "SummaryResult": "_results", "MemoryResult": "_results",
    "RooflineResult": "_results",
    "trace": "capture", "annotate": "capture", "trace_function": "capture", "step": "capture",
    "StepProfiler": "capture", "latest": "capture", "summarize": "capture",
    "wait_for_device": "capture",
    "Profiler": "compat", "ProfilingError": "compat", "view": "view", "Viewer": "view",
    "ExternalViewer": "view",
    "sessions": "_sessions", "extract_session": "_sessions", "export_parquet": "parquet_export",
}


def __getattr__(name: str):
    import importlib

    if name == "autotune":  # a subpackage; it imports jax only when a function needs it
        value = importlib.import_module(".autotune", __name__)
        globals()[name] = value
        return value
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'jaxprof' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value
