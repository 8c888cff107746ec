"""Registered tunable ops and offline tuning of a lowered computation.

A registered op stamps a label (op id, version, call key) into the ops it traces and records
the abstract arguments of every call key it sees. :func:`tune_lowered` finds the labels in a
lowered computation, times each registered op's candidates on stand-in arguments of the
recorded shapes, and returns an :class:`AutotuneResult`; ``with result:`` applies the winners to
whatever is traced inside the block."""

from __future__ import annotations

import functools
import html
import json
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._active import _context, active_configs, applied, apply_globally
from ._cache import Cache, CacheEntry, open_cache
from ._keys import _static_value, call_key, device_fingerprint, split_static
from ._labels import DEFAULT_PREFIX, extract_labels, label, split_op_id
from ._timing import TimingResult, expand_grid, time_candidates

__all__ = ["Registry", "TunableOp", "register", "registry", "tune_lowered", "AutotuneResult",
           "AutotuneEntry", "canonical_config", "example_args"]


def canonical_config(config: Any) -> str:
    """A configuration as canonical JSON (sorted keys; non-JSON values by address-free repr):
    how configurations are compared, applied and cached."""
    return json.dumps(_static_value(config), sort_keys=True)


def _find(candidates: Sequence[Any], text: Optional[str]) -> Optional[Any]:
    if text is None:
        return None
    for c in candidates:
        if canonical_config(c) == text:
            return c
    return None


def _spec(x: Any) -> Any:
    import jax

    if hasattr(x, "shape") and hasattr(x, "dtype"):
        sharding = None
        if not isinstance(x, jax.core.Tracer):
            s = getattr(x, "sharding", None)
            sharding = s if isinstance(s, jax.sharding.Sharding) else None
        weak = bool(getattr(getattr(x, "aval", None), "weak_type", False))
        return jax.ShapeDtypeStruct(tuple(x.shape), x.dtype, sharding=sharding, weak_type=weak)
    return x


def example_args(tree: Any, seed: int = 0) -> Any:
    """Concrete stand-ins for a pytree of ``jax.ShapeDtypeStruct`` (what a registry records):
    standard normal floats, zero integers, False booleans, on the recorded sharding when there
    is one. Other leaves pass through."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(seed)

    def make(s: Any) -> Any:
        if not isinstance(s, jax.ShapeDtypeStruct):
            return s
        if jnp.issubdtype(s.dtype, jnp.complexfloating):
            value = jnp.asarray(rng.standard_normal(s.shape), dtype=s.dtype)
        elif jnp.issubdtype(s.dtype, jnp.floating):
            value = jnp.asarray(rng.standard_normal(s.shape, dtype=np.float32), dtype=s.dtype)
        else:
            value = jnp.zeros(s.shape, s.dtype)
        return jax.device_put(value, s.sharding) if s.sharding is not None else value

    with jax.ensure_compile_time_eval():
        return jax.tree_util.tree_map(make, tree)


@dataclass
class _Invocation:
    args: Tuple[Any, ...]  # ShapeDtypeStruct pytrees
    kwargs: Dict[str, Any]
    static: Dict[str, Any]


class TunableOp:
    """A registered op: ``op(*args, **kwargs)`` runs ``factory(config)(*args, **kwargs)`` with
    the configuration in force for its call key when it is traced (applied by ``with result:``
    or ``result.apply()``, else the registry's persistent cache, else the default), inside its
    label. Applied configurations are part of JAX's tracing cache key, so a computation is
    traced again when they change; the persistent cache is not: a computation JAX already
    traced keeps the configuration it was traced with."""

    def __init__(self, op_id: str, candidates: Sequence[Any], factory: Callable[[Any], Any],
                 version: Optional[int], default: int, prefix: str, reg: "Registry",
                 name: str = "") -> None:
        self.op, self.version = split_op_id(op_id, version)
        self.candidates = list(candidates)
        if not self.candidates:
            raise ValueError(f"op {op_id!r} needs at least one candidate")
        self.factory = factory
        self.default = self.candidates[default]
        self.prefix = prefix
        self.registry = reg
        self.__name__ = name or self.op

    @property
    def op_id(self) -> str:
        return f"{self.op}@v{self.version}"

    def config_for(self, key: str) -> Any:
        """The configuration this op uses for ``key`` right now."""
        found = _find(self.candidates, active_configs().get((self.op_id, key)))
        if found is None and self.registry.cache is not None:
            e = self.registry.cache.get(self.registry.device(), self.op_id, key)
            found = _find(self.candidates, canonical_config(e.config)) if e else None
        return self.default if found is None else found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        dyn, static = split_static(kwargs)
        key = call_key(args, dyn, static)
        self.registry._record(self, key, args, dyn, static)
        config = self.config_for(key)
        with label(self.op, key, self.version, self.prefix):
            return self.factory(config)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<TunableOp {self.op_id}: {len(self.candidates)} candidates>"


class Registry:
    """Op ids -> :class:`TunableOp` (candidates and factory), plus every call key each op has
    been traced with (its abstract arguments). ``cache`` (a :class:`Cache`, a path, True for
    the default path, or None) is where :func:`tune_lowered` stores winners and where ops look
    them up when nothing is applied."""

    def __init__(self, cache: Any = None) -> None:
        self.ops: Dict[Tuple[str, int], TunableOp] = {}
        self.invocations: Dict[Tuple[str, str], _Invocation] = {}
        self.cache: Optional[Cache] = open_cache(cache)
        self._lock = threading.Lock()
        self._device: Optional[str] = None

    def device(self) -> str:
        if self._device is None:
            self._device = device_fingerprint()
        return self._device

    def register(self, op_id: str, candidates: Union[Sequence[Any], Mapping[str, Sequence[Any]]],
                 factory: Optional[Callable[[Any], Any]] = None, *,
                 version: Optional[int] = None, default: int = 0,
                 prefix: str = DEFAULT_PREFIX) -> Any:
        """Registers an op (see :func:`register`)."""
        if isinstance(candidates, Mapping):
            candidates = expand_grid(candidates)
        _context()  # create JAX's user context now, not in the middle of a trace

        def add(make: Callable[[Any], Any], name: str) -> TunableOp:
            op = TunableOp(op_id, candidates, make, version, default, prefix, self, name)
            with self._lock:
                self.ops[(op.op, op.version)] = op
            return op

        if factory is not None:
            return add(factory, "")

        def decorate(fn: Callable[..., Any]) -> TunableOp:
            op = add(lambda cfg: functools.partial(fn, **cfg), getattr(fn, "__name__", ""))
            functools.update_wrapper(op, fn, updated=())
            return op

        return decorate

    def get(self, op: str, version: int) -> Optional[TunableOp]:
        return self.ops.get((op, version))

    def _record(self, op: TunableOp, key: str, args: Any, dyn: Dict[str, Any],
                static: Dict[str, Any]) -> None:
        import jax

        with self._lock:
            if (op.op_id, key) not in self.invocations:
                self.invocations[(op.op_id, key)] = _Invocation(
                    jax.tree_util.tree_map(_spec, tuple(args)),
                    jax.tree_util.tree_map(_spec, dict(dyn)), dict(static))

    def __repr__(self) -> str:
        return (f"<jaxprof.autotune.Registry: {len(self.ops)} ops, "
                f"{len(self.invocations)} recorded calls>")


_default = Registry()


def registry() -> Registry:
    """The process-wide default registry (no persistent cache unless one is assigned to its
    ``cache`` attribute)."""
    return _default


def register(op_id: str, candidates: Union[Sequence[Any], Mapping[str, Sequence[Any]]],
             factory: Optional[Callable[[Any], Any]] = None, *, version: Optional[int] = None,
             default: int = 0, prefix: str = DEFAULT_PREFIX,
             registry: Optional[Registry] = None) -> Any:
    """Registers a tunable op and returns it (a :class:`TunableOp`).

    ``candidates``: a list of configurations, or a grid dict (its cartesian product). With a
    ``factory(config) -> function`` the op is returned directly; without, ``register`` is a
    decorator for ``fn(*args, **config_items)``. ``op_id`` is ``"name"`` or ``"name@vN"``
    (``version``, default 1, when bare); ``default`` indexes the candidate used when nothing is
    applied or cached. ``registry`` defaults to the process-wide one.
    """
    reg = registry if registry is not None else _default
    return reg.register(op_id, candidates, factory, version=version, default=default,
                        prefix=prefix)


@dataclass
class AutotuneEntry:
    """The configuration chosen for one (op, call key): ``source`` is ``"measured"``
    (``timing`` holds the :class:`TimingResult`) or ``"cache"``."""

    op_id: str
    call_key: str
    config: Any
    source: str
    timing: Optional[TimingResult] = None


class AutotuneResult:
    """Winners of :func:`tune_lowered`. ``with result:`` applies them to everything traced in
    the block (nesting-safe: the innermost block wins, the previous configurations come back on
    exit, also on an exception); ``result.apply()`` makes them the registry's defaults."""

    def __init__(self, device: str, entries: List[AutotuneEntry],
                 skipped: List[Tuple[str, str]], reg: Registry) -> None:
        self.device = device
        self.entries = entries
        self.skipped = skipped
        self._registry = reg
        self._applied: List[applied] = []

    @property
    def configs(self) -> Dict[Tuple[str, str], Any]:
        return {(e.op_id, e.call_key): e.config for e in self.entries}

    def _items(self) -> List[Tuple[str, str, str]]:
        return [(e.op_id, e.call_key, canonical_config(e.config)) for e in self.entries]

    def __enter__(self) -> "AutotuneResult":
        ctx = applied(self._items())
        ctx.__enter__()
        self._applied.append(ctx)
        return self

    def __exit__(self, *exc: Any) -> bool:
        return self._applied.pop().__exit__(*exc)

    def apply(self) -> None:
        """Applies these winners for the rest of the process, in every thread and outside
        ``with`` blocks too (a later ``apply`` or an enclosing ``with`` wins per op and key)."""
        apply_globally(self._items())

    def unapply(self) -> None:
        """Undoes :meth:`apply` for these ops and keys."""
        apply_globally(self._items(), remove=True)

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        lines = [f"<AutotuneResult: {len(self.entries)} tuned, {len(self.skipped)} skipped>"]
        for e in self.entries:
            extra = ""
            if e.timing is not None and e.timing.winner is not None:
                t = e.timing
                extra = (f"  ({t.timing} timing, {t.speedup:.2f}x vs runner-up, "
                         f"{'significant' if t.significant else 'not significant'})")
            lines.append(f"  {e.op_id} [{e.call_key}]: {e.config!r} from {e.source}{extra}")
        lines += [f"  skipped {what}: {why}" for what, why in self.skipped]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        out = ["<table><thead><tr><th>op</th><th>call key</th><th>config</th><th>source</th>"
               "<th>speedup vs runner-up</th><th>significant</th></tr></thead><tbody>"]
        for e in self.entries:
            t = e.timing
            out.append("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
                e.op_id, e.call_key, e.config, e.source,
                f"{t.speedup:.2f}x" if t and t.winner else "-",
                t.significant if t else "-")) + "</tr>")
        out.append("</tbody></table>")
        out += [f"<p>skipped {html.escape(w)}: {html.escape(r)}</p>" for w, r in self.skipped]
        return "".join(out)


def tune_lowered(lowered: Any, registry: Optional[Registry] = None, *, retune: bool = False,
                 **timing_options: Any) -> AutotuneResult:
    """Tunes every registered op labelled in ``lowered`` (a ``jax.stages.Lowered``, a
    ``Compiled``, or their text), each distinct (op, call key) once.

    For each label: the op must be in ``registry`` (default: the process-wide one) and must
    have been traced with that call key (which lowering did), so its argument shapes are known;
    otherwise it is listed in ``result.skipped`` with the reason. A winner already in the
    registry's cache is reused unless ``retune``; new winners are stored there.
    ``timing_options`` go to :func:`time_candidates` (``max_time_s`` is per op).
    """
    reg = registry if registry is not None else _default
    prefixes = sorted({op.prefix for op in reg.ops.values()}) or [DEFAULT_PREFIX]
    device = reg.device()
    entries: List[AutotuneEntry] = []
    skipped: List[Tuple[str, str]] = []
    seen = set()
    for prefix in prefixes:
        for lab in extract_labels(lowered, prefix):
            if not lab.complete:
                skipped.append((lab.label, "label cut before its version and key (write "
                                "'.v' labels, see docs/autotune.md)"))
                continue
            if (lab.op_id, lab.call_key) in seen:
                continue
            seen.add((lab.op_id, lab.call_key))
            op = reg.get(lab.op, lab.version)
            if op is None or op.prefix != prefix:
                skipped.append((lab.label, "op not registered"))
                continue
            inv = reg.invocations.get((op.op_id, lab.call_key))
            if inv is None:
                skipped.append((lab.label, "call key never traced in this process"))
                continue
            if reg.cache is not None and not retune:
                e = reg.cache.get(device, op.op_id, lab.call_key)
                found = _find(op.candidates, canonical_config(e.config)) if e else None
                if found is not None:
                    entries.append(AutotuneEntry(op.op_id, lab.call_key, found, "cache"))
                    continue
            entry = _measure(op, lab.call_key, inv, timing_options)
            if entry.timing is None or entry.timing.winner is None:
                failed = entry.timing.failed if entry.timing else []
                skipped.append((lab.label, "no candidate ran: " +
                                "; ".join(f"#{c.index} {c.error}" for c in failed)))
                continue
            entries.append(entry)
            if reg.cache is not None:
                reg.cache.put(cache_entry(device, op.op_id, lab.call_key, entry.timing))
    return AutotuneResult(device, entries, skipped, reg)


def _measure(op: TunableOp, key: str, inv: _Invocation,
             timing_options: Dict[str, Any]) -> AutotuneEntry:
    args = example_args(inv.args)
    kwargs = example_args(inv.kwargs)
    static = inv.static

    def make(config: Any) -> Callable[..., Any]:
        fn = op.factory(config)
        return functools.partial(fn, **static) if static else fn

    import jax

    with jax.ensure_compile_time_eval():
        result = time_candidates(make, op.candidates, args, kwargs, **timing_options)
    return AutotuneEntry(op.op_id, key, result.best_config, "measured", result)


def cache_entry(device: str, op_id: str, key: str, result: TimingResult) -> CacheEntry:
    """The cache entry recording ``result``'s winner."""
    w = result.winner
    assert w is not None
    return CacheEntry(device, op_id, key, json.loads(canonical_config(w.config)),
                      list(w.samples_ns), w.median_ns, w.mad_ns, tuple(w.ci95_ns))
