"""Capturing profiles from JAX programs, on top of ``jax.profiler``.

Everything here writes the TensorBoard/XProf layout ``<log_dir>/plugins/profile/<session>/
<host>.xplane.pb`` that :func:`jaxprof.load` (and the ``jaxprof`` command) read.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, TypeVar, Union

import jax

from ._slow_steps import SlowStep, SlowStepPredicate, SlowStepWatch
from .errors import ProfileNotFoundError

__all__ = ["trace", "annotate", "trace_function", "step", "StepProfiler", "Capture", "SlowStep",
           "latest", "summarize", "wait_for_device"]

log = logging.getLogger("jaxprof")
F = TypeVar("F", bound=Callable[..., Any])
PathLike = Union[str, "os.PathLike[str]"]


def _options(session_id: Optional[str], python_tracer: Optional[bool],
             host_tracer_level: Optional[int]) -> Optional[Any]:
    if session_id is None and python_tracer is None and host_tracer_level is None:
        return None
    opts = jax.profiler.ProfileOptions()
    if session_id is not None:
        opts.session_id = session_id
    if python_tracer is not None:
        opts.python_tracer_level = 1 if python_tracer else 0
    if host_tracer_level is not None:
        opts.host_tracer_level = host_tracer_level
    return opts


def _session_name(label: str = "") -> str:
    now = datetime.datetime.now()
    # Sortable like JAX's own names, but unique within a second (several captures per second).
    name = now.strftime("%Y_%m_%d_%H_%M_%S") + f"_{now.microsecond:06d}"
    return f"{name}_{label}" if label else name


def _run_dir(log_dir: Path, session: str) -> Path:
    return log_dir / "plugins" / "profile" / session


def _reset_jax_profiler() -> None:
    # jax.profiler.stop_trace leaves its session registered when exporting fails (e.g. the disk
    # is full), and every later start_trace then refuses to start. Clear it, best effort.
    try:
        from jax._src import profiler as _p

        with _p._profile_state.lock:
            _p._profile_state.reset()
    except Exception:  # pragma: no cover - private API moved; nothing more we can do
        pass


class Capture:
    """A finished (or failed) capture: where it went and what it covered."""

    def __init__(self, log_dir: Path, session: str, first_step: Optional[int] = None) -> None:
        self.log_dir = log_dir
        self.session = session
        self.first_step = first_step
        self.last_step: Optional[int] = first_step
        self.path: Path = _run_dir(log_dir, session)
        self.ok = False
        self.error: Optional[BaseException] = None
        self.wall_s = 0.0
        self.drain_s = 0.0  # waiting for earlier steps' device work before the trace started
        self.reason: Optional[str] = None  # a capture on anomaly: the step that fired it
        self.summary: Optional[str] = None

    def __repr__(self) -> str:
        state = "ok" if self.ok else f"failed: {self.error!r}"
        return f"<Capture {self.path} steps={self.first_step}..{self.last_step} {state}>"


@contextlib.contextmanager
def trace(log_dir: PathLike, *, session: Optional[str] = None,
          python_tracer: Optional[bool] = None, host_tracer_level: Optional[int] = None,
          create_perfetto_trace: bool = False) -> Iterator[Capture]:
    """Traces the ``with`` block into ``log_dir`` (``jax.profiler.trace`` with a named session).

    Yields a :class:`Capture`; ``capture.path`` is the run directory to :func:`jaxprof.load`.
    Device work still in flight at the end of the block is not waited for: call
    ``jax.block_until_ready`` on the block's results inside it.
    """
    log_path = Path(log_dir)
    cap = Capture(log_path, session or _session_name())
    opts = _options(cap.session, python_tracer, host_tracer_level)
    start = time.perf_counter()
    with jax.profiler.trace(str(log_path), create_perfetto_trace=create_perfetto_trace,
                            profiler_options=opts):
        yield cap
    cap.wall_s = time.perf_counter() - start
    cap.ok = True


class _Annotation:
    """A named host range, as a context manager or as a decorator (see :func:`annotate`)."""

    def __init__(self, name: str, metadata: dict) -> None:
        self.name = name
        self.metadata = metadata
        # One object may be entered from several threads (a shared data-loading helper): keep
        # each thread's open ranges apart.
        self._local = threading.local()

    def __enter__(self) -> "_Annotation":
        ann = jax.profiler.TraceAnnotation(self.name, **self.metadata)
        ann.__enter__()
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        stack.append(ann)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._local.stack.pop().__exit__(*exc)

    def __call__(self, fn: F) -> F:
        # staticmethod/classmethod objects: wrap the function inside and keep the kind.
        if isinstance(fn, (staticmethod, classmethod)):
            return type(fn)(self(fn.__func__))  # type: ignore[return-value]
        name, metadata = self.name, self.metadata

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with jax.profiler.TraceAnnotation(name, **metadata):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"<jaxprof.annotate {self.name!r}>"


def annotate(name: Union[str, Callable[..., Any]], **metadata: Any) -> Any:
    """A named range on the host timeline, as a context manager or a decorator::

        with jaxprof.annotate("data"):
            batch = next(it)

        @jaxprof.annotate("compute_loss")      # every call is a range named compute_loss
        def compute_loss(self, model, x, y): ...

    ``@jaxprof.annotate`` without a name uses the function's qualified name. A decorated
    function keeps its name, docstring and signature (``functools.wraps``). Under ``jax.jit``
    the range marks tracing only, not the compiled program's execution.
    """
    if callable(name) and not isinstance(name, str):
        fn = name
        label = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "function")
        return _Annotation(label, metadata)(fn)
    return _Annotation(name, metadata)


def trace_function(fn: Optional[F] = None, name: Optional[str] = None,
                   **metadata: Any) -> Any:
    """Marks every call of ``fn`` on the timeline; usable as ``@trace_function`` or
    ``@trace_function(name="...")``."""
    if fn is None:
        return functools.partial(trace_function, name=name, **metadata)
    label = name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "function")

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with jax.profiler.TraceAnnotation(label, **metadata):
            return fn(*args, **kwargs)

    return wrapper


def step(step_num: int, name: str = "train", **metadata: Any) -> Any:
    """Marks one training step (XProf's step annotation): ``with jaxprof.step(i): ...``."""
    return jax.profiler.StepTraceAnnotation(name, step_num=step_num, **metadata)


def latest(log_dir: PathLike) -> Path:
    """The newest run directory (``<log_dir>/plugins/profile/<session>/``) holding a profile.

    ``log_dir`` may also be a ``plugins/profile`` directory. Raises ProfileNotFoundError.
    """
    root = Path(log_dir)
    candidates = []
    for base in (root / "plugins" / "profile", root):
        if base.is_dir():
            for d in base.iterdir():
                files = list(d.glob("*.xplane.pb")) + list(d.glob("*.xplane.pb.gz")) \
                    if d.is_dir() else []
                if files:
                    candidates.append((max(f.stat().st_mtime for f in files), d.name, d))
        if candidates:
            break
    if not candidates:
        raise ProfileNotFoundError(f"{root}: no capture found", str(root), "no capture found")
    return max(candidates)[2]


def _device_time_per_step_ns(modules: Any, steps: int) -> Optional[float]:
    """The module executions' device time per step in the steady state: each program's runs in
    the capture per device, each at its steady runs' mean, summed over programs, divided by the
    steps. A capture taken mid-training has no warm-up run and this is its executions' device
    time per step; one that holds a program's compile counts that first run at the steady mean
    (docs/steady-state.md)."""
    rows = modules.data.get("modules", [])
    if not rows or steps <= 0:
        return None
    per_device = sum((m["mean_ns"] or 0) * m["executions"] / m["devices"]
                     for m in rows if m["devices"])
    return per_device / steps


def summarize(path: PathLike, steps: int = 1, wall_s: Optional[float] = None) -> str:
    """One line about a capture: the device time per step (its module executions), the wall
    time per step when ``wall_s`` is given, device idle share and top op (from the C++ analyses).
    """
    from ._profile import load

    profile = load(path)
    ops = profile.ops()
    devices = ops.devices
    parts = []
    device_ns = _device_time_per_step_ns(profile.modules(top_ops=0), steps)
    timing = []
    if device_ns is not None:
        timing.append(f"{device_ns / 1e6:.2f} ms on the device")
    if wall_s is not None and steps > 0:
        timing.append(f"{wall_s / steps * 1e3:.2f} ms wall")
    if timing:
        parts.append("step " + ", ".join(timing))
    if devices:
        span = sum(d["span_ns"] for d in devices)
        busy = sum(d["busy_ns"] for d in devices)
        idle = 1.0 - busy / span if span > 0 else 0.0
        parts.append(f"{len(devices)} device(s) idle {idle:.0%}")
        totals: dict = {}
        for row in ops.rows:
            totals[row["name"]] = totals.get(row["name"], 0.0) + row["self_ns"]
        top, top_ns = max(totals.items(), key=lambda kv: kv[1])
        parts.append(f"top op {top} ({top_ns / busy:.0%} of busy)" if busy else f"top op {top}")
    else:
        parts.append("no device ops")
    return ", ".join(parts)


def wait_for_device() -> None:
    """Blocks until the device work dispatched so far has finished: every pending effect and
    every live array. Work whose results were all dropped cannot be waited for."""
    jax.effects_barrier()
    for a in jax.live_arrays():
        try:
            a.block_until_ready()
        except Exception:  # noqa: BLE001 - an array deleted meanwhile has nothing to wait for
            pass


@dataclass
class _StepContext:
    """What ``with prof.step(i) as s`` yields: set ``s.result`` to the step's outputs so the
    profiler can wait for exactly them before stopping a capture."""

    step_num: int
    profiling: bool
    result: Any = None
    _set: bool = field(default=False, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "result":
            object.__setattr__(self, "_set", True)
        object.__setattr__(self, name, value)


class StepProfiler:
    """Profiles chosen steps of a training loop, without stopping it when a capture fails.

    Use it outside jit::

        prof = jaxprof.StepProfiler("/tmp/logs", every_n_steps=100, max_profiles=5)
        for i in range(steps):
            with prof.step(i) as s:
                s.result = state = train_step(state, batch)   # s.result is optional

    Captures start at ``first_step``, ``first_step + every_n_steps``, ... (at most
    ``max_profiles``) and cover ``steps_per_profile`` steps, or, with ``duration_ms``, as many
    steps as it takes for that much time to pass (at least one).

    What a capture holds: before it starts, the profiler waits for the device work already
    dispatched (earlier steps still queued on the device), so that a capture of N steps holds
    those N steps' executions and nothing else. That wait costs the loop one drained dispatch
    queue per capture: the step before it cannot overlap the next one's dispatch. With
    ``wait_each_step`` (the default) each profiled step also waits for its own device work
    inside its step mark (``jax.block_until_ready`` on ``s.result`` when set, otherwise on every
    live array), so that the mark spans the step's device work as ``jaxprof check`` needs; the
    profiled steps then run without overlapping host and device work.

    Capture on anomaly: with ``on_slow_step=k`` the profiler keeps the wall times of the last
    ``slow_step_window`` unprofiled steps (start of a step to start of the next; nothing is
    profiled for it), and when a step took more than ``k`` times their median it captures the
    next steps, as a scheduled capture would, at most ``max_slow_profiles`` times and at least
    ``slow_step_window`` steps apart. ``on_slow_step`` may also be a predicate
    ``(step_num, seconds, median_seconds) -> bool``. Nothing is judged before
    ``slow_step_min_history`` steps were seen. ``slow_steps`` lists the steps that fired.

    Each capture is a session ``<log_dir>/plugins/profile/<time>_step<N>/`` (``_slow<N>`` for a
    capture on anomaly). A capture that fails (unwritable or full disk, profiler error) is logged
    on the ``jaxprof`` logger, counted in ``failures`` and skipped; the loop goes on. With
    ``summarize=True`` a one-line summary of each capture is printed (and kept in
    ``Capture.summary``).
    """

    def __init__(self, log_dir: PathLike, every_n_steps: int = 100, max_profiles: int = 5,
                 steps_per_profile: int = 1, duration_ms: Optional[float] = None,
                 first_step: int = 1, *, summarize: bool = False,
                 python_tracer: Optional[bool] = None, host_tracer_level: Optional[int] = None,
                 print_fn: Callable[[str], None] = print, wait_each_step: bool = True,
                 on_slow_step: Union[float, SlowStepPredicate, None] = None,
                 max_slow_profiles: int = 1, slow_step_window: int = 50,
                 slow_step_min_history: int = 10) -> None:
        if every_n_steps < 1 or steps_per_profile < 1 or max_profiles < 0:
            raise ValueError("every_n_steps and steps_per_profile must be >= 1, "
                             "max_profiles >= 0")
        if max_slow_profiles < 0:
            raise ValueError("max_slow_profiles must be >= 0")
        self.log_dir = Path(log_dir)
        self.every_n_steps = every_n_steps
        self.max_profiles = max_profiles
        self.steps_per_profile = steps_per_profile
        self.duration_ms = duration_ms
        self.first_step = first_step
        self.summarize = summarize
        self.python_tracer = python_tracer
        self.host_tracer_level = host_tracer_level
        self.print_fn = print_fn
        self.wait_each_step = wait_each_step
        self.max_slow_profiles = max_slow_profiles
        self._watch = (SlowStepWatch(on_slow_step, slow_step_window, slow_step_min_history)
                       if on_slow_step is not None else None)
        self.slow_steps: List[SlowStep] = []  # the steps that fired a capture on anomaly
        self.captures: List[Capture] = []  # every attempt, failed ones included
        self.failures = 0
        self._active: Optional[Capture] = None
        self._steps_in = 0
        self._t0 = 0.0
        self._scheduled = 0  # scheduled captures attempted
        # The step being timed: (number, start, clean); clean when no capture touched it.
        self._open: Optional[tuple] = None
        self._slow: Optional[SlowStep] = None  # fired, its capture not started yet
        self._steps_since_slow: Optional[int] = None

    @property
    def profiles(self) -> List[Capture]:
        """The captures that succeeded."""
        return [c for c in self.captures if c.ok]

    def should_start(self, step_num: int) -> bool:
        if self._scheduled >= self.max_profiles or step_num < self.first_step:
            return False
        return (step_num - self.first_step) % self.every_n_steps == 0

    @contextlib.contextmanager
    def step(self, step_num: int, name: str = "train", *,
             session_label: Optional[str] = None) -> Iterator[_StepContext]:
        """Marks step ``step_num`` (a step annotation named ``name`` while a capture runs), and
        starts or stops a capture around it as scheduled. ``session_label`` replaces the
        ``step<N>`` suffix of the session name of a scheduled capture starting at this step."""
        now = time.perf_counter()
        self._close_timing(now)
        clean = self._active is None  # no capture runs, starts or stops in this step
        if self._active is None:
            if self._slow is not None:
                slow, self._slow = self._slow, None
                self._start(step_num, slow)
                clean = False
            elif self.should_start(step_num):
                self._scheduled += 1
                self._start(step_num, None, session_label)
                clean = False
        ctx = _StepContext(step_num, self._active is not None)
        self._open = (step_num, now, clean)
        if self._active is None:
            yield ctx
            return
        with jax.profiler.StepTraceAnnotation(name, step_num=step_num):
            yield ctx
            if self.wait_each_step:
                self._wait(ctx)
        self._steps_in += 1
        self._active.last_step = step_num
        if self._window_done():
            self._stop(ctx)

    def close(self) -> None:
        """Stops a capture still running (e.g. the loop ended inside a window)."""
        if self._active is not None:
            self._stop(None)

    def __enter__(self) -> "StepProfiler":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _close_timing(self, now: float) -> None:
        """Ends the wall time of the step before, and judges it when no capture touched it."""
        opened, self._open = self._open, None
        if self._watch is None or opened is None:
            return
        step_num, start, clean = opened
        if self._steps_since_slow is not None:
            self._steps_since_slow += 1
        if not clean:
            return
        try:
            slow = self._watch.observe(step_num, now - start)
        except Exception as e:  # noqa: BLE001 - a failing predicate must not stop training
            log.warning("jaxprof: on_slow_step failed at step %s (%s); slow steps are no longer "
                        "watched", step_num, e)
            self._watch = None
            return
        cooled = (self._steps_since_slow is None
                  or self._steps_since_slow >= self._watch.times.maxlen)
        if (slow is not None and cooled and self._active is None
                and len(self.slow_steps) < self.max_slow_profiles):
            self.slow_steps.append(slow)
            self._slow = slow
            self._steps_since_slow = 0

    def _wait(self, ctx: _StepContext) -> None:
        try:
            if ctx._set:
                jax.block_until_ready(ctx.result)
            else:
                wait_for_device()
        except Exception as e:  # noqa: BLE001 - the step's own error surfaces where it is used
            log.warning("jaxprof: waiting for step %s failed (%s)", ctx.step_num, e)

    def _window_done(self) -> bool:
        if self.duration_ms is not None:
            return (time.perf_counter() - self._t0) * 1e3 >= self.duration_ms
        return self._steps_in >= self.steps_per_profile

    def _start(self, step_num: int, slow: Optional[SlowStep],
               session_label: Optional[str] = None) -> None:
        label = f"slow{step_num}" if slow is not None else (session_label or f"step{step_num}")
        cap = Capture(self.log_dir, _session_name(label), step_num)
        cap.reason = slow.describe() if slow is not None else None
        self.captures.append(cap)
        try:
            # Fail early (and cheaply) when the directory cannot be written.
            cap.path.parent.mkdir(parents=True, exist_ok=True)
            if not os.access(cap.path.parent, os.W_OK | os.X_OK):
                raise PermissionError(f"{cap.path.parent} is not writable")
            # Device work still queued from earlier steps would land in the trace.
            t = time.perf_counter()
            wait_for_device()
            cap.drain_s = time.perf_counter() - t
            opts = _options(cap.session, self.python_tracer, self.host_tracer_level)
            jax.profiler.start_trace(str(self.log_dir), profiler_options=opts)
        except Exception as e:  # noqa: BLE001 - any failure must leave training running
            self._fail(cap, e, "start")
            return
        self._active = cap
        self._steps_in = 0
        self._t0 = time.perf_counter()

    def _stop(self, ctx: Optional[_StepContext]) -> None:
        cap, self._active = self._active, None
        assert cap is not None
        try:
            if ctx is not None and ctx._set:
                jax.block_until_ready(ctx.result)
            else:
                wait_for_device()
            cap.wall_s = time.perf_counter() - self._t0
            jax.profiler.stop_trace()
        except Exception as e:  # noqa: BLE001
            _reset_jax_profiler()
            self._fail(cap, e, "stop")
            return
        cap.ok = True
        if self.summarize:
            try:
                steps = (cap.last_step or 0) - (cap.first_step or 0) + 1
                after = f" (after {cap.reason})" if cap.reason else ""
                cap.summary = (f"jaxprof: steps {cap.first_step}-{cap.last_step}{after} -> "
                               f"{cap.path}: " + summarize(cap.path, steps, cap.wall_s))
                self.print_fn(cap.summary)
            except Exception as e:  # noqa: BLE001 - a summary must never stop training
                log.warning("jaxprof: could not summarise %s: %s", cap.path, e)

    def _fail(self, cap: Capture, error: BaseException, phase: str) -> None:
        cap.error = error
        self.failures += 1
        log.warning("jaxprof: capture at step %s failed to %s (%s); training continues",
                    cap.first_step, phase, error)
