"""ejkernel's kernel, autotuning and profiling API on top of jaxprof.

Code written for ``ejkernel.ops`` runs with its imports changed to this module::

    from jaxprof.compat.ejkernel import (ConfigCache, ConfigSelectorChain, Executor, Kernel,
                                         autotune_lowered)

Timing comes from device events in a ``jax.profiler`` capture (:mod:`jaxprof.autotune`), labels
survive lowering and compilation, recorded calls hold abstract arguments rather than tracers,
and ``with result:`` retraces what it applies to. Every name, what it maps to and where the
behaviour differs from ejkernel: docs/migrating.md.
"""

from __future__ import annotations

from .. import Profiler, ProfilingError
from ._executor import (ConfigChooser, Executor, clear_invocations, get_invocations,
                        record_invocation)
from ._kernel import Cfg, Invocation, Kernel, Out, get_device_platform
from ._offline import AutotuningResult, Entry, autotune_lowered
from ._select import (AutotunePolicy, ConfigCache, ConfigSelectorChain, PersistentCache, Tuner,
                      device_fingerprint, overlay_cache, policy_override)

__all__ = [
    "Kernel", "Invocation", "Cfg", "Out",
    "Executor", "ConfigChooser",
    "ConfigSelectorChain", "ConfigCache", "PersistentCache", "AutotunePolicy", "Tuner",
    "policy_override", "overlay_cache",
    "autotune_lowered", "AutotuningResult", "Entry",
    "get_invocations", "record_invocation", "clear_invocations",
    "device_fingerprint", "get_device_platform",
    "Profiler", "ProfilingError",
    "EJKERNEL_OPS_RECORD", "EJKERNEL_OPS_STAMP",
]

#: Environment variable: ``1`` makes :class:`Executor` record calls (default ``0``: no records).
EJKERNEL_OPS_RECORD = "EJKERNEL_OPS_RECORD"
#: Environment variable: ``hash``, ``json`` or ``none`` (default): the labels Executor stamps.
EJKERNEL_OPS_STAMP = "EJKERNEL_OPS_STAMP"
