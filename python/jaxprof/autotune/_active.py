"""The configurations applied by ``with result:`` (an :class:`AutotuneResult`), as seen by
registered ops when they are traced.

The value lives in a ``jax.make_user_context`` context: it is part of JAX's tracing and
compilation cache keys, so a computation traced inside the block is traced again (and uses the
applied configurations) rather than served from a cache filled outside it. Thread-local and
restored on exit, however the block ends. JAX versions without user contexts fall back to a
context variable plus ``jax.clear_caches()`` on entry and exit."""

from __future__ import annotations

import contextvars
from typing import Any, Dict, Iterable, Optional, Tuple

__all__ = ["active_configs", "applied", "apply_globally"]

Item = Tuple[str, str, str]  # (op id "op@vN", call key, config as canonical JSON)

_fallback: contextvars.ContextVar = contextvars.ContextVar("jaxprof_autotune_applied",
                                                           default=())
_user_context: Any = None
_global_fallback: Tuple[Item, ...] = ()


def _context() -> Any:
    global _user_context
    if _user_context is None:
        import jax

        make = getattr(jax, "make_user_context", None)
        _user_context = make(()) if make is not None else False
    return _user_context


def _current() -> Tuple[Item, ...]:
    ctx = _context()
    value = ctx.value if ctx else (_fallback.get() or _global_fallback)
    return tuple(value or ())


def active_configs() -> Dict[Tuple[str, str], str]:
    """``{(op_id, call_key): config JSON}`` applied in this thread right now."""
    return {(op, key): cfg for op, key, cfg in _current()}


def _merge(base: Dict[Tuple[str, str], str], items: Iterable[Item]) -> Tuple[Item, ...]:
    merged = dict(base)
    merged.update({(op, key): cfg for op, key, cfg in items})
    return tuple(sorted((op, key, cfg) for (op, key), cfg in merged.items()))


def apply_globally(items: Iterable[Item], remove: bool = False) -> None:
    """Applies ``items`` in every thread, outside ``with`` blocks too (the process default);
    with ``remove``, takes their (op, key) pairs out of it instead."""
    global _global_fallback
    ctx = _context()
    current = (ctx.get_global() if ctx else _global_fallback) or ()
    base = {(op, key): cfg for op, key, cfg in current}
    if remove:
        for op, key, _ in items:
            base.pop((op, key), None)
        value = _merge(base, ())
    else:
        value = _merge(base, items)
    if ctx:
        ctx.set_global(value)
    else:
        import jax

        _global_fallback = value
        jax.clear_caches()


class applied:
    """Context manager applying ``items`` on top of what is already applied (inner wins)."""

    def __init__(self, items: Iterable[Item]) -> None:
        self._items = tuple(items)
        self._tokens: list = []
        _context()

    def __enter__(self) -> "applied":
        value = _merge(active_configs(), self._items)
        ctx = _context()
        if ctx:
            token: Optional[Any] = ctx(value)
            token.__enter__()
        else:
            import jax

            token = _fallback.set(value)
            jax.clear_caches()
        self._tokens.append(token)
        return self

    def __exit__(self, *exc: Any) -> bool:
        token = self._tokens.pop()
        ctx = _context()
        if ctx:
            token.__exit__(*exc)
        else:
            import jax

            _fallback.reset(token)
            jax.clear_caches()
        return False
