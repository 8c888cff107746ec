"""Autotuning on top of jaxprof's C++ core: time candidate implementations from device events
(:func:`time_candidates`), pick and cache the fastest configuration per call signature
(:func:`tune`, :class:`Cache`, :func:`call_key`, :func:`device_fingerprint`), and tune the
labelled ops of a lowered computation (:func:`register`, :func:`label`,
:func:`extract_labels`, :func:`tune_lowered`). See docs/autotune.md.

JAX is imported on first use, so the cache and label functions work without it.
"""

from __future__ import annotations

from ._active import active_configs
from ._cache import Cache, CacheEntry, default_cache_path
from ._keys import call_key, call_signature, device_fingerprint
from ._labels import DEFAULT_PREFIX, Label, extract_labels, label, label_text
from ._registry import (AutotuneEntry, AutotuneResult, Registry, TunableOp, canonical_config,
                        example_args, register, registry, tune_lowered)
from ._timing import CandidateTiming, TimingResult, expand_grid, time_candidates
from ._tune import Tuned, TunedCall, tune

__all__ = [
    "time_candidates", "TimingResult", "CandidateTiming", "expand_grid",
    "tune", "Tuned", "TunedCall",
    "Cache", "CacheEntry", "default_cache_path", "device_fingerprint", "call_key",
    "call_signature",
    "label", "label_text", "extract_labels", "Label", "DEFAULT_PREFIX",
    "register", "registry", "Registry", "TunableOp", "tune_lowered", "AutotuneResult",
    "AutotuneEntry", "active_configs", "canonical_config", "example_args",
]
