"""Choosing a kernel's configuration: the in-memory and persistent caches, overlays (what
``with result:`` applies), the policy, the tuner and the selector chain that ties them."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import threading
import warnings
from argparse import Namespace
from pathlib import Path
from typing import Any, Callable, Dict, Generic, Iterable, List, Mapping, Optional, Tuple

from ...autotune._active import _context, active_configs, applied
from ...autotune._keys import device_fingerprint as _device_fingerprint
from ...autotune._keys import split_static
from ...autotune._registry import _spec, canonical_config, example_args
from ...autotune._timing import TimingResult, time_candidates
from ._kernel import Cfg, Invocation, Kernel, Out, get_device_platform, method, op_id_v

__all__ = ["ConfigCache", "PersistentCache", "AutotunePolicy", "policy_override", "Tuner",
           "ConfigSelectorChain", "overlay_cache", "device_fingerprint"]

_fingerprints: Dict[Tuple[str, int], str] = {}


def device_fingerprint(dev: Any = None) -> str:
    """jaxprof's device fingerprint (:func:`jaxprof.autotune.device_fingerprint`: platform,
    device kind, JAX and runtime versions) of ``dev``, default JAX's first device."""
    import jax

    d = dev if dev is not None else jax.devices()[0]
    key = (str(d.platform), int(d.id))
    # Called on every kernel call: build it once per device.
    fp = _fingerprints.get(key)
    if fp is None:
        fp = _fingerprints[key] = _device_fingerprint(d)
    return fp


class ConfigCache(Generic[Cfg]):
    """In-memory configurations by (device fingerprint, ``op@vN``, call key); thread-safe."""

    def __init__(self) -> None:
        self._data: Dict[Tuple[str, str, str], Cfg] = {}
        self._lock = threading.Lock()

    def get(self, dev: str, op_id: str, call_key: str) -> Optional[Cfg]:
        with self._lock:
            return self._data.get((dev, op_id, call_key))

    def put(self, dev: str, op_id: str, call_key: str, cfg: Cfg) -> None:
        with self._lock:
            self._data[(dev, op_id, call_key)] = cfg

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def size(self) -> int:
        return len(self._data)

    def keys(self) -> List[Tuple[str, str, str]]:
        with self._lock:
            return list(self._data)

    def __len__(self) -> int:
        return len(self._data)


# ---- overlays -------------------------------------------------------------------------------

# Configurations applied by overlays, by (op, call key, applied text). The text (device and
# canonical config) travels in jaxprof's applied-configs context, which is part of JAX's
# tracing cache key; the object itself is looked up here.
_overlay_objects: Dict[Tuple[str, str, str], Any] = {}
_overlay_lock = threading.Lock()


def config_text(cfg: Any) -> str:
    """Canonical JSON of a configuration (dataclasses and pydantic models by their fields)."""
    if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
        value: Any = {"<type>": type(cfg).__qualname__, **dataclasses.asdict(cfg)}
    elif hasattr(cfg, "model_dump"):
        value = {"<type>": type(cfg).__qualname__, **cfg.model_dump()}
    elif isinstance(cfg, Namespace):
        value = vars(cfg)
    else:
        value = cfg
    return canonical_config(value)


class overlay_cache:
    """Applies ``{(device, op@vN, call_key): cfg}`` to every kernel call traced in the block,
    ahead of the caches (the innermost block wins; restored on exit, also on an exception).
    A computation traced before the block is traced again inside it, so a fresh
    ``jax.jit(fn)`` sees the overlay."""

    def __init__(self, mapping: Mapping[Tuple[str, str, str], Any]) -> None:
        self.mapping = dict(mapping)
        self._active: List[applied] = []
        _context()  # create JAX's user context now, not in the middle of a trace

    def _items(self) -> List[Tuple[str, str, str]]:
        items = []
        with _overlay_lock:
            for (dev, op, key), cfg in self.mapping.items():
                text = json.dumps([dev, config_text(cfg)])
                _overlay_objects[(op, key, text)] = cfg
                items.append((op, key, text))
        return items

    def __enter__(self) -> "overlay_cache":
        ctx = applied(self._items())
        ctx.__enter__()
        self._active.append(ctx)
        return self

    def __exit__(self, *exc: Any) -> bool:
        return self._active.pop().__exit__(*exc)


_MISSING = object()


def overlay_lookup(dev: str, op: str, key: str) -> Tuple[bool, Any]:
    """(found, cfg) from the innermost overlay applying to this device, op and call key."""
    text = active_configs().get((op, key))
    if text is None:
        return False, None
    cfg = _overlay_objects.get((op, key, text), _MISSING)
    if cfg is _MISSING:  # applied by something else (a jaxprof.autotune result)
        return False, None
    try:
        applies = json.loads(text)[0] == dev
    except (ValueError, IndexError, TypeError):
        applies = False
    return (True, cfg) if applies else (False, None)


# ---- persistent cache -----------------------------------------------------------------------


class PersistentCache(Generic[Cfg]):
    """Configurations kept across processes, in jaxprof's SQLite autotuning cache (one
    transaction per write: concurrent processes lose nothing; ``jaxprof cache list`` shows the
    entries).

    ``path``: the database; default ``$EJKERNEL_PERSISTENT_CACHE_DIR/<opname>.sqlite`` when
    that variable is set, else jaxprof's default cache (:func:`jaxprof.autotune.
    default_cache_path`). An existing ejkernel JSON cache at ``path`` is imported into
    ``<path>.sqlite`` (entries already there are kept). Values are stored as JSON:
    ``dumper(cfg)``, else the fields of a dataclass or pydantic model, else ``cfg`` itself; they
    come back as ``loader(value)``, else ``cfg_type(**value)`` or ``argparse.Namespace(**value)``
    for objects, else the value. When the database cannot be opened, entries are kept in memory
    for this process only, with a warning.
    """

    def __init__(self, opname: str, path: Optional[str] = None,
                 loader: Optional[Callable[[Any], Cfg]] = None,
                 dumper: Optional[Callable[[Cfg], Any]] = None,
                 cfg_type: Optional[type] = None) -> None:
        from ...autotune._cache import Cache

        self.opname = opname
        self.loader, self.dumper, self.cfg_type = loader, dumper, cfg_type
        legacy: Optional[Dict[str, Any]] = None
        if path is None:
            root = os.environ.get("EJKERNEL_PERSISTENT_CACHE_DIR")
            target = str(Path(root).expanduser() / f"{opname}.sqlite") if root else None
        else:
            target = str(Path(path).expanduser())
            legacy = _read_legacy(target)
            if legacy is not None:
                target += ".sqlite"
        self._memory: Optional[Dict[Tuple[str, str, str], Any]] = None
        try:
            if target is not None:
                Path(target).parent.mkdir(parents=True, exist_ok=True)
            self._cache: Any = Cache(target)
            self.path = self._cache.path
        except Exception as e:  # best effort, like ejkernel; but say so
            warnings.warn(f"PersistentCache({opname!r}): cannot open {target}: {e}; keeping "
                          "configurations in memory for this process only", RuntimeWarning)
            self._cache, self._memory, self.path = None, {}, target or ""
        if legacy:
            self._import_legacy(legacy)

    def _import_legacy(self, data: Dict[str, Any]) -> None:
        from ...autotune._cache import CacheEntry

        new = []
        for k, value in data.items():
            parts = k.split("|")
            if len(parts) != 3:
                continue
            dev, op, key = parts
            if self._cache is not None and self._cache.get(dev, op, key) is None:
                new.append(CacheEntry(dev, op, key, value))
            elif self._memory is not None:
                self._memory.setdefault((dev, op, key), value)
        if new:
            self._cache.put(new)

    def _load(self, raw: Any) -> Any:
        out = self.loader(raw) if self.loader is not None else raw
        if isinstance(out, dict):
            out = self.cfg_type(**out) if self.cfg_type is not None else Namespace(**out)
        return out

    def _dump(self, cfg: Any) -> Any:
        if self.dumper is not None:
            value = self.dumper(cfg)
        elif dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
            value = dataclasses.asdict(cfg)
        elif hasattr(cfg, "model_dump"):
            value = cfg.model_dump()
        elif isinstance(cfg, Namespace):
            value = vars(cfg)
        else:
            value = cfg
        try:
            json.dumps(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"PersistentCache({self.opname!r}): configuration {cfg!r} is not "
                            f"JSON-serializable (give a dumper=): {e}") from e
        return value

    def get(self, device: str, op_id: str, call_key: str) -> Optional[Cfg]:
        if self._cache is None:
            raw = self._memory.get((device, op_id, call_key)) if self._memory is not None \
                else None
        else:
            e = self._cache.get(device, op_id, call_key)
            raw = e.config if e is not None else None
        return None if raw is None else self._load(raw)

    def put(self, device: str, op_id: str, call_key: str, cfg: Cfg, *,
            timing: Optional[TimingResult] = None) -> None:
        """Stores ``cfg``; ``timing`` (the measurement that chose it) adds its samples."""
        from ...autotune._cache import CacheEntry

        value = self._dump(cfg)
        if self._cache is None:
            if self._memory is not None:
                self._memory[(device, op_id, call_key)] = value
            return
        entry = CacheEntry(device, op_id, call_key, value)
        w = timing.winner if timing is not None else None
        if w is not None:
            entry.samples_ns, entry.median_ns, entry.mad_ns = list(w.samples_ns), w.median_ns, \
                w.mad_ns
            entry.ci95_ns = tuple(w.ci95_ns)
        self._cache.put(entry)


def _read_legacy(path: str) -> Optional[Dict[str, Any]]:
    """The entries of an ejkernel JSON cache at ``path`` (None when it is not one)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip()
            if not head.startswith(b"{"):
                return None
            f.seek(0)
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ---- policy and tuner -----------------------------------------------------------------------


@dataclasses.dataclass
class AutotunePolicy:
    """What a cache miss leads to: ``cache_miss_fallback="heuristics"`` (the kernel's
    ``heuristic_cfg``) or ``"autotune"`` (time the candidates now, when ``allow_autotune``)."""

    allow_autotune: bool = True
    allow_heuristics: bool = True
    cache_miss_fallback: str = "heuristics"

    def __post_init__(self) -> None:
        # A misspelt value would otherwise mean "heuristics" without a word.
        if self.cache_miss_fallback not in ("heuristics", "autotune"):
            raise ValueError("cache_miss_fallback must be 'heuristics' or 'autotune', not "
                             f"{self.cache_miss_fallback!r}")


class policy_override:
    """Sets attributes of ``selector.policy`` for the duration of a ``with`` block."""

    def __init__(self, selector: "ConfigSelectorChain", **updates: Any) -> None:
        self.selector = selector
        self.updates = updates
        self._prev: List[Dict[str, Any]] = []

    def __enter__(self) -> "policy_override":
        policy = self.selector.policy
        self._prev.append({k: getattr(policy, k) for k in self.updates})
        for k, v in self.updates.items():
            setattr(policy, k, v)
        return self

    def __exit__(self, *exc: Any) -> bool:
        for k, v in self._prev.pop().items():
            setattr(self.selector.policy, k, v)
        return False


def stand_ins(tree: Any) -> Any:
    """Concrete arrays for the tracers and ``jax.ShapeDtypeStruct`` leaves of ``tree`` (same
    shapes, dtypes and shardings); other leaves unchanged. Timing runs on these, never on
    tracers of an enclosing trace."""
    import jax

    specs = jax.tree_util.tree_map(
        lambda x: _spec(x) if isinstance(x, jax.core.Tracer) else x, tree)
    return example_args(specs)


class Tuner(Generic[Cfg]):
    """Times candidate configurations from device events in a ``jax.profiler`` capture
    (:func:`jaxprof.autotune.time_candidates`): each candidate compiled once, ``warmup``
    untimed runs, then ``iters`` timed runs of each, interleaved in random order; the winner has
    the smallest median. ``timing_options`` go to ``time_candidates`` (``repeats="auto"`` for
    runs until the medians are known to ``rel_precision``, ``timing="wall"``, ...).
    ``last_result`` keeps the last :class:`jaxprof.autotune.TimingResult`."""

    def __init__(self, warmup: int = 1, iters: int = 3, **timing_options: Any) -> None:
        self.warmup, self.iters = warmup, iters
        self.timing_options = timing_options
        self.last_result: Optional[TimingResult] = None

    def _time(self, make_fn: Callable[[Any], Callable[..., Any]], candidates: List[Any],
              args: Any, kwargs: Mapping[str, Any]) -> TimingResult:
        import jax

        with jax.ensure_compile_time_eval():
            args, kwargs = stand_ins((tuple(args), dict(kwargs or {})))
            dyn, static = split_static(kwargs)

            def make(cfg: Any) -> Callable[..., Any]:
                fn = make_fn(cfg)
                return functools.partial(fn, **static) if static else fn

            options = dict(repeats=max(1, int(self.iters)), warmup=max(1, int(self.warmup)))
            options.update(self.timing_options)
            result = time_candidates(make, candidates, args, dyn, **options)
        self.last_result = result
        return result

    def measure(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
        """The median time of ``fn(*args, **kwargs)`` in seconds."""
        result = self._time(lambda _cfg: fn, [None], args, kwargs)
        if result.winner is None:
            raise RuntimeError(f"measure failed: {result.candidates[0].error}")
        return result.winner.median_ns / 1e9

    def autotune(self, make_fn: Callable[[Cfg], Callable[..., Any]], args: Any,
                 kwargs: Optional[Mapping[str, Any]], candidates: Iterable[Cfg]) -> Cfg:
        """The fastest of ``candidates``: ``make_fn(cfg)(*args, **kwargs)`` timed for each.
        Array keyword arguments are traced, the others are passed as constants; tracers and
        ``jax.ShapeDtypeStruct`` leaves are replaced by concrete stand-ins."""
        candidates = list(candidates)
        if not candidates:
            raise RuntimeError("No candidates provided for autotuning.")
        result = self._time(make_fn, candidates, args, kwargs or {})
        if result.winner is None:
            raise RuntimeError("All candidate configurations failed: " + "; ".join(
                f"{c.config!r}: {c.error}" for c in result.failed))
        return result.best_config


# ---- the selector chain ---------------------------------------------------------------------


class ConfigSelectorChain(Generic[Cfg, Out]):
    """Chooses a kernel's configuration, first found wins: the invocation's override, an
    overlay (``with result:``), the in-memory ``cache``, the ``persistent`` cache (copied into
    memory), autotuning (``policy.cache_miss_fallback == "autotune"`` and
    ``policy.allow_autotune``; the winner goes to memory and, with ``persist_autotune``, to the
    persistent cache), the kernel's heuristic (``policy.allow_heuristics``; not cached), else
    RuntimeError. ``on_event(event, **data)`` is called at each decision."""

    def __init__(self, cache: ConfigCache, policy: Optional[AutotunePolicy] = None,
                 tuner: Optional[Tuner] = None, persistent: Optional[PersistentCache] = None,
                 persist_autotune: bool = True,
                 on_event: Optional[Callable[..., Any]] = None,
                 forbid_reautotune: bool = True) -> None:
        self.cache = cache
        self.policy = policy if policy is not None else AutotunePolicy()
        self.tuner = tuner if tuner is not None else Tuner()
        self.persistent = persistent
        self.persist_autotune = persist_autotune
        self.on_event = on_event
        self.forbid_reautotune = forbid_reautotune
        self._autotuned: set = set()
        _context()

    def _emit(self, event: str, **data: Any) -> None:
        if self.on_event is not None:
            self.on_event(event, **data)

    def choose(self, inv: Invocation[Cfg, Out], kernel: Kernel[Cfg, Out]) -> Cfg:
        dev = device_fingerprint()
        op = op_id_v(kernel)
        key = inv.make_key(kernel.key_builder)
        where = dict(device=dev, op_id=op, call_key=key)
        if inv.override_cfg is not None:
            # For this call only: an explicit choice is not a measurement worth caching.
            self._emit("override", cfg=inv.override_cfg, **where)
            return inv.override_cfg
        found, cfg = overlay_lookup(dev, op, key)
        if found:
            self._emit("overlay_hit", cfg=cfg, **where)
            return cfg
        cfg = self.cache.get(dev, op, key)
        if cfg is not None:
            self._emit("cache_hit", level="memory", cfg=cfg, **where)
            return cfg
        if self.persistent is not None:
            cfg = self.persistent.get(dev, op, key)
            if cfg is not None:
                self._emit("cache_hit", level="persistent", cfg=cfg, **where)
                self.cache.put(dev, op, key, cfg)
                return cfg
        platform = get_device_platform()
        if self.policy.cache_miss_fallback == "autotune" and self.policy.allow_autotune:
            if self.forbid_reautotune and (dev, op, key) in self._autotuned:
                raise RuntimeError(f"Re-autotune requested for {(dev, op, key)}")
            candidates = tuple(method(kernel, "candidate_cfgs", platform)(inv))
            self._emit("autotune_start", candidates=len(candidates), platform=platform, **where)
            best = tune_outside_trace(self.tuner, make_runner(kernel, platform), inv.args,
                                      dict(inv.kwargs), candidates)
            self._autotuned.add((dev, op, key))
            self.cache.put(dev, op, key, best)
            if self.persistent is not None and self.persist_autotune:
                put_persistent(self.persistent, dev, op, key, best, self.tuner)
            self._emit("autotune_finish", cfg=best, platform=platform, **where)
            return best
        if self.policy.allow_heuristics:
            cfg = method(kernel, "heuristic_cfg", platform)(inv)
            self._emit("heuristics", cfg=cfg, platform=platform, **where)
            return cfg
        self._emit("error", reason="no_config", **where)
        raise RuntimeError(f"No config for {op} (call key {key}): no override, overlay or cached "
                           "configuration, and the policy allows neither autotuning nor "
                           "heuristics.")


def tune_outside_trace(tuner: Any, make_fn: Callable[[Any], Callable[..., Any]],
                       args: Any, kwargs: Dict[str, Any], candidates: Tuple[Any, ...]) -> Any:
    """``tuner.autotune`` on concrete stand-ins of the arguments, evaluated eagerly: a cache
    miss inside ``jax.jit`` hands any tuner (the user's own too) arrays it can run, never the
    enclosing trace's tracers."""
    import jax

    with jax.ensure_compile_time_eval():
        args, kwargs = stand_ins((tuple(args), dict(kwargs)))
        return tuner.autotune(make_fn, args, kwargs, candidates)


def make_runner(kernel: Kernel, platform: str) -> Callable[[Any], Callable[..., Any]]:
    """``cfg -> function(*args, **kwargs)`` running the kernel's (platform) ``run``."""
    run = method(kernel, "run", platform)

    def make(cfg: Any) -> Callable[..., Any]:
        def fn(*args: Any, **kwargs: Any) -> Any:
            return run(*args, cfg=cfg, **kwargs)
        return fn

    return make


def put_persistent(persistent: Any, dev: str, op: str, key: str, cfg: Any, tuner: Any) -> None:
    timing = getattr(tuner, "last_result", None)
    if isinstance(persistent, PersistentCache) and isinstance(timing, TimingResult):
        persistent.put(dev, op, key, cfg, timing=timing)
    else:
        persistent.put(dev, op, key, cfg)
