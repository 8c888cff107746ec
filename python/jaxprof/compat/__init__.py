"""ejkernel-compatible autotuning profiler: the API of ``ejkernel``'s ``Profiler``, computed by
the C++ core (no TensorFlow, integer picoseconds, corrupt profiles raise).

Deliberate differences from ejkernel are listed in docs/migrating.md. The rest of ejkernel's API
(kernels, executor, selector chain, ``autotune_lowered``) is :mod:`jaxprof.compat.ejkernel`.
"""

from __future__ import annotations

import importlib
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import _core
from .._profile import Profile, load
from ..errors import ProfileError

__all__ = ["Profiler", "ProfilingError"]

_FUNCTION_ID = re.compile(r"^jit_autotune_fn_([0-9]+)")


class ProfilingError(ProfileError, RuntimeError):
    """Profiling failed: no profile written, a corrupt profile, no plane for the device, a bad
    regex. Also a :class:`jaxprof.ProfileError` (and a RuntimeError, which is what ejkernel
    raised when no profile was written)."""


def _wrap(e: ProfileError, what: str) -> ProfilingError:
    err = ProfilingError(f"{what}: {e}", e.path, e.reason, e.offset)
    err.__cause__ = e
    return err


def _tensorflow_available() -> bool:
    try:
        importlib.import_module("tensorflow.python.profiler.trace")
    except Exception:  # not installed, or broken: either way it cannot be used
        return False
    return True


class Profiler:
    """Times functions from a profile, keyed as autotuners expect.

    An event's key is ``NAME(PROGRAM_ID-SCOPE_RANGE_ID)``: NAME is its ``hlo_module`` stat, else
    its name; PROGRAM_ID its ``program_id`` stat, else ``run_id``; missing values print as
    ``None``. Events shorter than ``min_duration_ns`` are ignored, and only the first
    ``max_events_per_profile`` remaining events of the plane (line by line) are read. For every
    key starting with ``prefix_filter``: without ``event_filter_regex`` its time is the union of
    its events' intervals; with it, the union of the intervals of the events nested inside them
    (fully contained, any line of the plane, another key) whose key matches the regex. An event
    sits where the timeline places it, for the length its own clock measured: the device's clock
    where the event carries one (TPU ops' ``device_duration_ps``; docs/clocks.md).
    """

    def __init__(self, *, prefix_filter: str = "jit_", event_filter_regex: Optional[str] = None,
                 min_duration_ns: float = 1000.0, max_events_per_profile: Optional[int] = 10000,
                 verbose: bool = False, require_tf: bool = False,
                 silence_tf_cpp_logs: bool = True) -> None:
        self.prefix_filter = prefix_filter or ""
        self.event_filter_regex = event_filter_regex
        self.min_duration_ns = min_duration_ns
        self.max_events_per_profile = max_events_per_profile
        self.verbose = verbose
        # TensorFlow is never used. require_tf keeps ejkernel's check (see
        # profile_time_by_function_id); silence_tf_cpp_logs is stored only: setting
        # TF_CPP_MIN_LOG_LEVEL, as ejkernel does, would also hide XLA's own error logs.
        self.require_tf = require_tf
        self.silence_tf_cpp_logs = silence_tf_cpp_logs
        if event_filter_regex is not None:
            try:
                re.compile(event_filter_regex)
            except re.error as e:
                raise ProfilingError(f"Invalid regex pattern '{event_filter_regex}': {e}") from e

    # ---- parsing ---------------------------------------------------------------------------
    @staticmethod
    def parse_profile_from_bytes(profile_bytes: bytes) -> Profile:
        """Reads a serialized XSpace (``*.xplane.pb`` bytes, gzip allowed) into a Profile.

        Every event is decoded here, so a corrupt profile raises ProfilingError now.
        """
        try:
            core = _core.from_bytes(bytes(profile_bytes), "profile")
            core.require_all()
        except ProfileError as e:
            raise _wrap(e, "Failed to parse profile data") from e
        return Profile(core)

    @staticmethod
    def find_device_plane_ids(p: Any, device_str: str) -> List[int]:
        """Indices of the planes whose name contains ``device_str`` (case-insensitive)."""
        try:
            names = [plane.name for plane in p.planes]
        except AttributeError as e:
            raise ProfilingError(f"Invalid profile structure: {e}") from e
        ids = [i for i, n in enumerate(names) if device_str.lower() in n.lower()]
        if not ids:
            raise ProfilingError(
                f"No planes found for device '{device_str}'. Available devices: {names}")
        return ids

    def get_events_from_plane_ps(self, p: Profile, plane_idx: int) -> Dict[str, int]:
        """Like :meth:`get_events_from_plane`, in integer picoseconds."""
        planes = p.planes
        if not 0 <= plane_idx < len(planes):
            raise ProfilingError(
                f"Plane index {plane_idx} out of range (0-{len(planes) - 1})")
        try:
            keys = p._core.plane_timing(
                plane_idx, self.prefix_filter, self.event_filter_regex or "",
                int(round(self.min_duration_ns * 1000)), int(self.max_events_per_profile or 0))
        except ProfileError as e:
            raise _wrap(e, f"Failed to extract events from plane {plane_idx}") from e
        return {k: t for k, t, _n in keys}

    def get_events_from_plane(self, p: Profile, plane_idx: int) -> Dict[str, float]:
        """Time per key on plane ``plane_idx``, in seconds (see the class docstring)."""
        return {k: t / 1e12 for k, t in self.get_events_from_plane_ps(p, plane_idx).items()}

    # ---- capture + aggregate ---------------------------------------------------------------
    def profile_time_by_function_id(self, timing_closure: Callable[[], Any], platform: str,
                                    total_calls_number: int) -> Dict[int, Tuple[float, float]]:
        """Runs ``timing_closure`` ``total_calls_number`` times, each under its own trace, and
        returns ``{id: (mean_s, std_s)}`` for keys ``jit_autotune_fn_{id}...`` on the first plane
        matching ``platform``. With more than two samples the fastest and slowest are dropped;
        ``std`` is the population standard deviation. With ``require_tf`` it raises
        ProfilingError when TensorFlow's profiler cannot be imported, as ejkernel does (jaxprof
        itself never needs it)."""
        import jax

        if self.require_tf and not _tensorflow_available():
            raise ProfilingError("require_tf=True: TensorFlow's Python profiler "
                                 "(tensorflow.python.profiler.trace) cannot be imported")

        from ..capture import trace

        samples: Dict[int, List[int]] = {}
        for _ in range(total_calls_number):
            with tempfile.TemporaryDirectory(prefix="jaxprof_tuning_") as tmp:
                # No Python tracer: autotuning needs device ops, and it keeps the trace small.
                with trace(tmp, python_tracer=False):
                    out = timing_closure()
                    # Wait for the work so that it lands inside this trace.
                    jax.block_until_ready(out)
                    jax.effects_barrier()
                files = sorted(Path(tmp).glob("**/*.xplane.pb"), key=lambda f: f.stat().st_mtime)
                if not files:
                    raise ProfilingError("No profile was created.")
                try:
                    prof = load(files[-1])
                except ProfileError as e:
                    raise _wrap(e, "Failed to parse profile data") from e
                plane = self.find_device_plane_ids(prof, platform)[0]
                for key, ps in self.get_events_from_plane_ps(prof, plane).items():
                    m = _FUNCTION_ID.match(key)
                    if m:
                        samples.setdefault(int(m.group(1)), []).append(ps)
                if self.verbose:
                    print(f"jaxprof.Profiler: {files[-1]}: {len(samples)} function ids")
        result: Dict[int, Tuple[float, float]] = {}
        for fid, values in samples.items():
            v = sorted(values)
            if len(v) > 2:
                v = v[1:-1]
            arr = np.asarray(v, dtype=np.float64) / 1e12
            result[fid] = (float(arr.mean()), float(arr.std()))
        return result
