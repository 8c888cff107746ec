"""``tune``: a function wrapped with a grid of static parameters; on the first call with each
call key (shapes, dtypes, shardings, static arguments) it times the grid's candidates and then
keeps calling the winner's compiled executable."""

from __future__ import annotations

import functools
import random
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ._cache import Cache, open_cache
from ._keys import call_key, device_fingerprint, split_static
from ._registry import _find, cache_entry, canonical_config, example_args
from ._timing import TimingResult, expand_grid, time_candidates

__all__ = ["tune", "Tuned", "TunedCall"]


@dataclass
class TunedCall:
    """What :class:`Tuned` chose for one call key: the configuration, where it came from
    (``"measured"``, ``"cache"``, or ``"single"`` for a one-candidate grid), the timing (when
    measured) and the winner's compiled executable (None when chosen inside a trace)."""

    call_key: str
    config: Any
    source: str
    timing: Optional[TimingResult]
    compiled: Any


class Tuned:
    """A function tuned over a grid (see :func:`tune`). ``calls`` maps each call key seen to
    its :class:`TunedCall`; ``last`` is the most recent one."""

    def __init__(self, fn: Callable[..., Any], configs: List[Dict[str, Any]], op: str,
                 cache: Optional[Cache], device: Any, timing_options: Dict[str, Any]) -> None:
        if not configs:
            raise ValueError("tune: the grid has no candidates")
        self.fn = fn
        self.configs = configs
        self.op_id = op
        self.cache = cache
        self.device = device
        self.timing_options = timing_options
        self.calls: Dict[str, TunedCall] = {}
        self.last: Optional[TunedCall] = None
        self._lock = threading.Lock()
        self._fingerprint: Optional[str] = None
        functools.update_wrapper(self, fn)

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = device_fingerprint(self.device)
        return self._fingerprint

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import jax

        dyn, static = split_static(kwargs)
        key = call_key(args, dyn, static)
        with self._lock:
            chosen = self.calls.get(key)
            if chosen is None:
                chosen = self.calls[key] = self._choose(key, args, dyn, static)
            self.last = chosen
        leaves = jax.tree_util.tree_leaves((args, dyn))
        if chosen.compiled is None or any(isinstance(x, jax.core.Tracer) for x in leaves):
            # Inside a trace: inline the winner into the caller's computation.
            return self.fn(*args, **kwargs, **chosen.config)
        return chosen.compiled(*args, **dyn)

    def _factory(self, static: Mapping[str, Any]) -> Callable[[Any], Callable[..., Any]]:
        return lambda cfg: functools.partial(self.fn, **static, **cfg)

    def _choose(self, key: str, args: Any, dyn: Dict[str, Any],
                static: Dict[str, Any]) -> TunedCall:
        import jax

        tracing = any(isinstance(x, jax.core.Tracer)
                      for x in jax.tree_util.tree_leaves((args, dyn)))
        if tracing:  # time on stand-ins of the traced shapes, outside the trace
            from ._registry import _spec

            args, dyn = example_args(jax.tree_util.tree_map(_spec, (tuple(args), dyn)))
        make = self._factory(static)
        config = None
        if self.cache is not None:
            e = self.cache.get(self.fingerprint(), self.op_id, key)
            config = _find(self.configs, canonical_config(e.config)) if e else None
        if config is not None or len(self.configs) == 1:
            config = self.configs[0] if config is None else config
            compiled = None
            if not tracing:
                compiled = jax.jit(make(config)).lower(*args, **dyn).compile()
            return TunedCall(key, config, "cache" if self.cache is not None and len(
                self.configs) > 1 else "single", None, compiled)
        with jax.ensure_compile_time_eval():
            result = time_candidates(make, self.configs, args, dyn, device=self.device,
                                     keep_executables=True, **self.timing_options)
        executables = result.__dict__.pop("_executables", {})
        if result.winner is None:
            raise RuntimeError(f"tune({self.op_id}): no candidate compiled and ran:\n" +
                               "\n".join(f"  #{c.index} {c.config!r}: {c.error}"
                                         for c in result.failed))
        if self.cache is not None:
            self.cache.put(cache_entry(self.fingerprint(), self.op_id, key, result))
        compiled = None if tracing else executables.get(result.winner.index)
        return TunedCall(key, result.winner.config, "measured", result, compiled)

    def config_for(self, *args: Any, **kwargs: Any) -> Optional[Any]:
        """The configuration chosen for these arguments' call key (None: not tuned yet)."""
        dyn, static = split_static(kwargs)
        chosen = self.calls.get(call_key(args, dyn, static))
        return chosen.config if chosen else None

    def __repr__(self) -> str:
        return (f"<jaxprof.autotune.Tuned {self.op_id}: {len(self.configs)} candidates, "
                f"{len(self.calls)} call key(s) tuned>")


def _op_name(fn: Callable[..., Any]) -> str:
    # module.qualname: two functions that share a name do not share cache entries.
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "fn"
    name = name.replace("<locals>.", "").replace("<lambda>", "lambda")
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module else name


def tune(fn: Optional[Callable[..., Any]] = None, *,
         grid: Optional[Mapping[str, Sequence[Any]]] = None,
         candidates: Optional[Sequence[Dict[str, Any]]] = None, sample: Optional[int] = None,
         seed: int = 0, cache: Any = True, op_id: Optional[str] = None, version: int = 1,
         device: Any = None, **timing_options: Any) -> Any:
    """Wraps ``fn`` so that each call runs the fastest configuration for its call key.

    ``fn(*args, **kwargs, **config)``: each config (an element of the cartesian product of
    ``grid``, or of ``candidates``) is passed as keyword arguments and is static. With
    ``sample=k`` only a seeded random sample of k configs is tried. On the first call with a
    new call key (:func:`call_key` of the array arguments and the non-array keyword arguments)
    the candidates are timed with :func:`time_candidates` (``timing_options``: ``repeats``,
    ``rel_precision``, ``max_time_s``, ``timing``, ...) unless the persistent cache (``cache``:
    True for the default path, a path, a :class:`Cache`, or False) already holds a winner for
    this device, ``op_id@v<version>`` (``op_id`` defaults to ``module.qualname`` of ``fn``) and
    key; the winner is stored there. Later calls with the
    same key run the winner's compiled executable; inside ``jax.jit`` the winner is inlined.

    Usable as ``@tune(grid=...)`` or ``tune(fn, grid=...)``.
    """
    if fn is None:
        return lambda f: tune(f, grid=grid, candidates=candidates, sample=sample, seed=seed,
                              cache=cache, op_id=op_id, version=version, device=device,
                              **timing_options)
    if (grid is None) == (candidates is None):
        raise ValueError("tune: give exactly one of grid= or candidates=")
    configs = expand_grid(grid) if grid is not None else [dict(c) for c in candidates or ()]
    if sample is not None and sample < len(configs):
        picked = sorted(random.Random(seed).sample(range(len(configs)), int(sample)))
        configs = [configs[i] for i in picked]
    timing_options.setdefault("seed", seed)
    name = op_id or _op_name(fn)
    op = name if re.search(r"@v\d+$", name) else f"{name}@v{version}"
    return Tuned(fn, configs, op, open_cache(cache), device, timing_options)
