"""XAX-compatible profiling: code written for XAX's profiling runs with its imports changed.

- ``xax.utils.profiling``: ``annotate``, ``trace_function``, ``open_latest_profile``
- ``xax.task.mixins.profiler``: ``ProfilerConfig``, ``ProfilerMixin``

all import from ``jaxprof.compat.xax``; ``python -m xax.examples.profiling.view_profile`` is
``python -m jaxprof.compat.xax.view_profile``. Captures are written in the TensorBoard/XProf
layout that :func:`jaxprof.load`, ``jaxprof`` and TensorBoard read. The differences from XAX are
listed in docs/migrating.md ("XAX").
"""

from __future__ import annotations

from typing import Any

__all__ = ["annotate", "trace_function", "open_latest_profile", "ProfilerConfig",
           "ProfilerMixin", "list_sessions", "ProfileSession"]

# Imported on first use: ``python -m jaxprof.compat.xax.view_profile`` must not pay for jax.
_LAZY = {
    "annotate": "profiling", "trace_function": "profiling", "open_latest_profile": "profiling",
    "ProfilerConfig": "mixin", "ProfilerMixin": "mixin",
    "list_sessions": "sessions", "ProfileSession": "sessions",
}


def __getattr__(name: str) -> Any:
    import importlib

    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> "list[str]":
    return sorted(set(__all__) | {"view_profile"})
