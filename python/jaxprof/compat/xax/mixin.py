"""``ProfilerConfig`` and ``ProfilerMixin``: XAX's periodic profiling, on top of
:class:`jaxprof.StepProfiler`."""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, List, Optional, TypeVar

import jax

from ...capture import Capture, StepProfiler

__all__ = ["ProfilerConfig", "ProfilerMixin"]

log = logging.getLogger("jaxprof")
T = TypeVar("T")

# Keyword-only fields (Python >= 3.10) let a subclass add fields without defaults.
_DATACLASS_ARGS = {"kw_only": True} if sys.version_info >= (3, 10) else {}


@dataclass(**_DATACLASS_ARGS)
class ProfilerConfig:
    """What to profile. Subclass it (a dataclass) or add these fields to your own config;
    :class:`ProfilerMixin` reads them by name."""

    # Profiling is off unless asked for.
    enable_profiling: bool = False
    # Where captures go; None: ``<exp_dir>/profiles`` of the task (a temporary folder when the
    # task has no experiment directory).
    profiling_dir: Optional[str] = None
    # Capture the steps whose number is a multiple of this.
    profile_every_n_steps: int = 100
    # Accepted for XAX configs; a capture covers its ``profile_context`` block, however long.
    profile_duration_ms: int = 3000
    # At most this many captures per task.
    max_profile_count: int = 5
    # The most detailed host tracing (host_tracer_level=3: runtime and launch events); the
    # device's own kernel trace is always recorded.
    profile_gpu_trace: bool = False


ConfigT = TypeVar("ConfigT")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _step_number(state: Any) -> int:
    """The step of an XAX ``State`` (``state.num_steps``), a mapping with ``num_steps``, or an
    int. Reading a device array waits for the value."""
    if hasattr(state, "num_steps"):
        value = state.num_steps
    elif isinstance(state, Mapping) and "num_steps" in state:
        value = state["num_steps"]
    else:
        value = state
    if isinstance(value, jax.core.Tracer):
        raise TypeError("profile_context: the step number is traced (the call is inside "
                        "jax.jit, grad or vmap); call profile_context around the jitted call, "
                        "on the host, where a capture can start and stop")
    try:
        return int(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"profile_context: expected a state with an integer num_steps (or an "
                        f"int), got {type(state).__name__}: {e}") from e


class ProfilerMixin(Generic[ConfigT]):
    """Periodic profiling for a task whose ``config`` has :class:`ProfilerConfig`'s fields.

    ``with self.profile_context(state, name="train_step"): ...`` captures the block when
    profiling is enabled, ``state.num_steps`` is a multiple of ``profile_every_n_steps`` and
    fewer than ``max_profile_count`` captures were attempted; otherwise it does nothing. Call it
    on the host, around the jitted step, not inside it.

    Each capture is a session ``<profiling dir>/plugins/profile/<time>_<name>_step_<N>/``
    (what :func:`jaxprof.load`, ``jaxprof`` and TensorBoard read) holding that block's work and
    nothing else: before it starts, the device work already dispatched is waited for, and
    before it stops, the block's device work (every live array). The block is a step mark
    named ``name`` in the capture. A capture that fails (unwritable directory, full disk) is
    logged on the ``jaxprof`` logger and the task goes on.
    """

    def __init__(self, config: ConfigT, *args: Any, **kwargs: Any) -> None:
        # Cooperative: pass the config on unless only object.__init__ is left.
        mro = type(self).__mro__
        rest = mro[mro.index(ProfilerMixin) + 1:]
        nxt = next((c for c in rest if "__init__" in c.__dict__), object)
        if nxt is object:
            super().__init__()
        else:
            super().__init__(config, *args, **kwargs)  # type: ignore[call-arg]
        if getattr(self, "config", None) is None:
            try:
                self.config = config
            except AttributeError:  # a read-only ``config`` property: the task provides it
                pass

    # ---- configuration -----------------------------------------------------------------------
    def _profiler_option(self, name: str, default: T) -> T:
        return getattr(getattr(self, "config", None), name, default)

    @property
    def should_profile(self) -> bool:
        """Whether profiling is enabled (``config.enable_profiling``)."""
        return bool(self._profiler_option("enable_profiling", False))

    def get_profiling_dir(self) -> Path:
        """Where captures go (created): ``config.profiling_dir``, else ``<exp_dir>/profiles``
        (``exp_dir``, else ``run_dir``, of the task), else a new temporary folder."""
        cached: Optional[Path] = self.__dict__.get("_jaxprof_profiling_dir")
        if cached is not None:
            return cached
        configured = self._profiler_option("profiling_dir", None)
        if configured:
            d = Path(configured).expanduser().resolve()
        else:
            base = None
            for attr in ("exp_dir", "run_dir"):
                try:
                    base = getattr(self, attr, None)
                except Exception:  # noqa: BLE001 - e.g. an experiment directory not set up yet
                    base = None
                if base is not None:
                    break
            if base is not None:
                d = Path(base) / "profiles"
            else:
                d = Path(tempfile.mkdtemp(prefix="jaxprof_xax_")) / "profiles"
                log.warning("jaxprof: no profiling_dir and no exp_dir: captures go to %s", d)
        d.mkdir(parents=True, exist_ok=True)
        self.__dict__["_jaxprof_profiling_dir"] = d
        log.info("jaxprof: profiling directory %s", d)
        return d

    def _step_profiler(self) -> StepProfiler:
        every = int(self._profiler_option("profile_every_n_steps", 100))
        most = int(self._profiler_option("max_profile_count", 5))
        if every < 1:
            raise ValueError(f"profile_every_n_steps must be >= 1, got {every}")
        if most < 0:
            raise ValueError(f"max_profile_count must be >= 0, got {most}")
        level = 3 if self._profiler_option("profile_gpu_trace", False) else None
        prof: Optional[StepProfiler] = self.__dict__.get("_jaxprof_step_profiler")
        if prof is None:
            prof = StepProfiler(self.get_profiling_dir(), every_n_steps=every, max_profiles=most,
                                steps_per_profile=1, first_step=0, host_tracer_level=level)
            self.__dict__["_jaxprof_step_profiler"] = prof
        else:  # the config may have been changed since
            prof.every_n_steps, prof.max_profiles, prof.host_tracer_level = every, most, level
        return prof

    # ---- what was captured ---------------------------------------------------------------------
    @property
    def step_profiler(self) -> Optional[StepProfiler]:
        """The :class:`jaxprof.StepProfiler` behind the captures (None before the first
        profiling decision)."""
        return self.__dict__.get("_jaxprof_step_profiler")

    @property
    def profile_captures(self) -> List[Capture]:
        """Every capture attempted, failed ones included (``.path``, ``.ok``, ``.first_step``)."""
        prof = self.step_profiler
        return list(prof.captures) if prof is not None else []

    @property
    def profile_count(self) -> int:
        """How many captures were written."""
        return sum(1 for c in self.profile_captures if c.ok)

    # ---- profiling -------------------------------------------------------------------------------
    def should_run_profiler(self, state: Any) -> bool:
        """Whether ``profile_context(state)`` would capture now."""
        if not self.should_profile:
            return False
        prof = self._step_profiler()
        # Once every capture was taken the state is not read (reading may wait for the device).
        if len(prof.captures) >= prof.max_profiles:
            return False
        return prof.should_start(_step_number(state))

    @contextlib.contextmanager
    def profile_context(self, state: Any, name: str = "profile") -> Iterator[None]:
        """Captures the block on scheduled steps (see the class docstring); else does nothing."""
        if not self.should_run_profiler(state):
            yield None
            return
        step = _step_number(state)
        prof = self._step_profiler()
        label = f"{_UNSAFE.sub('_', name) or 'profile'}_step_{step}"
        log.info("jaxprof: profiling %r at step %d", name, step)
        try:
            with prof.step(step, name=name, session_label=label):
                yield None
        finally:
            # A block that raised leaves its capture running: stop it, keeping what it holds.
            prof.close()
        cap = prof.captures[-1]
        if cap.ok:
            log.info("jaxprof: saved the capture of %r at step %d to %s", name, step, cap.path)

    def profile_fn(self, fn: Callable[[], T], state: Any, name: str = "profile") -> T:
        """Calls ``fn()`` inside :meth:`profile_context` and returns its result."""
        with self.profile_context(state, name):
            return fn()

