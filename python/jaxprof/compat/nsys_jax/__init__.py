"""nsys-jax-compatible analysis: the notebook of nsys-jax's ``jax_nsys`` package runs with its
imports changed to ``from jaxprof.compat.nsys_jax import ...``.

The frames are made from jaxprof's tables (docs/tables.md) of an nsys-jax archive (``.zip`` or
unpacked) or of a JAX log directory / ``*.xplane.pb``, so their sums are jaxprof's figures. The
differences from nsys-jax are listed in docs/migrating.md ("nsys-jax").
"""

from __future__ import annotations

from ._collectives import calculate_collective_metrics
from ._compile_stats import generate_compilation_statistics, remove_child_ranges
from ._flamegraph import display_flamegraph
from ._frames import load_profiler_data
from ._hlo import compile_protos, xla_module_metadata

__all__ = ["load_profiler_data", "remove_child_ranges", "generate_compilation_statistics",
           "calculate_collective_metrics", "xla_module_metadata", "compile_protos",
           "display_flamegraph"]
