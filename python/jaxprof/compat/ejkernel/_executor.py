"""Running kernels: :class:`Executor` chooses each call's configuration, stamps a label into
the ops it traces (``EJKERNEL_OPS_STAMP``) and records the call's abstract arguments per device
(``EJKERNEL_OPS_RECORD``) so that :func:`autotune_lowered` can time it later."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import warnings
from typing import Any, Callable, Dict, Generic, Optional, Protocol, Tuple

from ...autotune._labels import label_text
from ._kernel import (Cfg, Invocation, Kernel, Out, get_device_platform, has_custom_vjp, method,
                      op_id_v)
from ._select import config_text, device_fingerprint

__all__ = ["Executor", "ConfigChooser", "get_invocations", "record_invocation",
           "clear_invocations", "DEFAULT_STAMP_PREFIX"]

DEFAULT_STAMP_PREFIX = "ejkernel_ops"
_OP = re.compile(r"^[A-Za-z0-9_-]+$")
_KEY = re.compile(r"^[A-Za-z0-9_.=+-]+$")
_VERSION = re.compile(r"^[0-9]+$")

_lock = threading.Lock()
# device fingerprint -> op@vN -> call key -> (kernel, args, kwargs), arrays as ShapeDtypeStruct.
_invocations: Dict[str, Dict[str, Dict[str, Tuple[Kernel, Tuple[Any, ...], Dict[str, Any]]]]] = {}
# (prefix, label op, label version, label key) -> (op@vN, call key): labels whose op id, version
# or key had to be encoded to fit the label grammar.
_labels: Dict[Tuple[str, str, int, str], Tuple[str, str]] = {}
_prefixes = {DEFAULT_STAMP_PREFIX}


class ConfigChooser(Protocol):
    def choose(self, inv: Invocation, kernel: Kernel) -> Any: ...


def _abstract(tree: Any) -> Any:
    import jax

    from ...autotune._registry import _spec

    return jax.tree_util.tree_map(
        lambda x: _spec(x) if hasattr(x, "shape") and hasattr(x, "dtype") else x, tree)


def record_invocation(dev: str, op_id_v: str, call_key: str, kernel: Kernel,
                      args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
    """Records a call for offline tuning. Array leaves are kept as ``jax.ShapeDtypeStruct``
    (shape, dtype, sharding): never a tracer of the trace that made the call, never device
    memory. The first record of a call key is kept."""
    with _lock:
        calls = _invocations.setdefault(dev, {}).setdefault(op_id_v, {})
        if call_key in calls:
            return
    spec = (kernel, _abstract(tuple(args)), _abstract(dict(kwargs)))
    with _lock:
        calls.setdefault(call_key, spec)


def get_invocations(dev: Optional[str] = None
                    ) -> Dict[str, Dict[str, Tuple[Kernel, Tuple[Any, ...], Dict[str, Any]]]]:
    """``{op@vN: {call_key: (kernel, args, kwargs)}}`` recorded on device fingerprint ``dev``
    (default: the current device); arrays as ``jax.ShapeDtypeStruct``. A copy."""
    dev = dev if dev is not None else device_fingerprint()
    with _lock:
        return {op: dict(calls) for op, calls in _invocations.get(dev, {}).items()}


def clear_invocations() -> None:
    """Forgets every recorded call (all devices)."""
    with _lock:
        _invocations.clear()


def label_parts(op_v: str, version: str, call_key: str) -> Tuple[str, int, str]:
    """(label op, label version, label key) for an op id, version and call key: themselves when
    they fit the label grammar, else an encoding with a hash of the original (kept unique)."""
    op, v = op_v.rsplit("@v", 1)
    if _OP.match(op) and _VERSION.match(v):
        lab_op, lab_v = op, int(v)
    else:
        digest = hashlib.sha256(op_v.encode()).hexdigest()[:10]
        lab_op = re.sub(r"[^A-Za-z0-9_-]", "_", op)[:60] + "-" + digest
        lab_v = int(v) if _VERSION.match(v) else 0
    lab_key = call_key if _KEY.match(call_key) else \
        hashlib.sha256(call_key.encode()).hexdigest()[:32]
    return lab_op, lab_v, lab_key


def resolve_label(prefix: str, op: str, version: int, key: str) -> Tuple[str, str]:
    """(op@vN, call key) of a label found in a computation."""
    with _lock:
        found = _labels.get((prefix, op, version, key))
    return found if found is not None else (f"{op}@v{version}", key)


def label_prefixes() -> list:
    with _lock:
        return sorted(_prefixes)


# Both default off, as in ejkernel: labels and records are asked for (EJKERNEL_OPS_STAMP=hash,
# EJKERNEL_OPS_RECORD=1) before the runs that autotune_lowered is to tune.
def _stamp_mode() -> str:
    mode = os.environ.get("EJKERNEL_OPS_STAMP", "none").strip().lower() or "none"
    if mode not in ("hash", "json", "none"):
        warnings.warn(f"EJKERNEL_OPS_STAMP={mode!r} is not hash, json or none: stamping nothing",
                      RuntimeWarning, stacklevel=3)
        return "none"
    return mode


def _recording() -> bool:
    return os.environ.get("EJKERNEL_OPS_RECORD", "0").strip().lower() in ("1", "true", "yes",
                                                                          "on")


class Executor(Generic[Cfg, Out]):
    """Runs kernels with the configuration ``chooser`` (a :class:`ConfigSelectorChain`) picks.

    ``executor(kernel, *args, cfg=None, stamp=True, **kwargs)``: ``kernel.prepare`` the
    arguments, choose (``cfg`` overrides), then run ``kernel.run(*args, cfg=chosen, **kwargs)``
    (through ``jax.custom_vjp`` when the kernel defines ``fwd_with_residuals`` and ``vjp``).

    Labels: with ``EJKERNEL_OPS_STAMP`` ``hash`` or ``json``, the ops are traced inside
    ``jax.named_scope("<stamp_prefix>#<op>.v<N>:<call_key>")`` (``json`` adds a scope with the
    chosen configuration); ``none`` (the default, as in ejkernel) stamps nothing. The ``.v`` form
    survives lowering to HLO and compilation, where XLA cuts ``@``. Recording: with
    ``EJKERNEL_OPS_RECORD=1`` (default ``0``, as in ejkernel), every call key's abstract
    arguments are recorded for the current device (:func:`get_invocations`).
    """

    def __init__(self, chooser: ConfigChooser, stamp_prefix: Optional[str] = None) -> None:
        self.chooser = chooser
        if stamp_prefix is None:
            stamp_prefix = os.environ.get("EJKERNEL_OPS_PREFIX", DEFAULT_STAMP_PREFIX)
        # ejkernel's prefixes end with '#', which jaxprof's labels put in themselves.
        self.stamp_prefix = stamp_prefix.rstrip("#") or DEFAULT_STAMP_PREFIX
        with _lock:
            _prefixes.add(self.stamp_prefix)

    def _invocation(self, kernel: Kernel, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                    cfg: Any, stamp: bool) -> Invocation:
        args2, kwargs2 = kernel.prepare(*args, **kwargs)
        return Invocation(kernel.op_id, tuple(args2), dict(kwargs2), override_cfg=cfg,
                          stamp=stamp)

    def choose_config(self, kernel: Kernel[Cfg, Out], *args: Any, cfg: Optional[Cfg] = None,
                      **kwargs: Any) -> Cfg:
        """The configuration a call with these arguments would run with."""
        cfg = kwargs.pop("_cfg", cfg)
        return self.chooser.choose(self._invocation(kernel, args, kwargs, cfg, False), kernel)

    def compile(self, kernel: Kernel[Cfg, Out], *example_args: Any, cfg: Optional[Cfg] = None,
                **example_kwargs: Any) -> Callable[..., Out]:
        """``jax.jit`` of the kernel's ``run`` with the configuration chosen for the examples."""
        import jax

        chosen = self.choose_config(kernel, *example_args, cfg=cfg, **example_kwargs)
        run = method(kernel, "run", get_device_platform())
        return jax.jit(lambda *a, **k: run(*a, cfg=chosen, **k))

    def __call__(self, kernel: Kernel[Cfg, Out], *args: Any, cfg: Optional[Cfg] = None,
                 stamp: bool = True, **kwargs: Any) -> Out:
        import jax

        cfg = kwargs.pop("_cfg", cfg)
        inv = self._invocation(kernel, args, kwargs, cfg, stamp)
        chosen = self.chooser.choose(inv, kernel)
        platform = get_device_platform()
        fn = _runner(kernel, chosen, platform, dict(inv.kwargs))
        op_v = op_id_v(kernel)
        mode = _stamp_mode() if stamp else "none"
        if mode == "none" and not _recording():
            return fn(*inv.args, **inv.kwargs)
        key = inv.make_key(kernel.key_builder)
        if _recording():
            record_invocation(device_fingerprint(), op_v, key, kernel, inv.args,
                              dict(inv.kwargs))
        if mode == "none":
            return fn(*inv.args, **inv.kwargs)
        lab_op, lab_v, lab_key = label_parts(op_v, str(getattr(kernel, "version", "0")), key)
        with _lock:
            _labels[(self.stamp_prefix, lab_op, lab_v, lab_key)] = (op_v, key)
        with jax.named_scope(label_text(lab_op, lab_key, lab_v, self.stamp_prefix)):
            if mode == "json":
                payload = json.dumps({"op_id": op_v, "cfg": json.loads(config_text(chosen))},
                                     sort_keys=True, separators=(",", ":"))
                with jax.named_scope(f"{self.stamp_prefix}:{payload}"):
                    return fn(*inv.args, **inv.kwargs)
            return fn(*inv.args, **inv.kwargs)


def _runner(kernel: Kernel, chosen: Any, platform: str,
            kwargs: Dict[str, Any]) -> Callable[..., Any]:
    import jax

    if not has_custom_vjp(kernel, platform):
        run = method(kernel, "run", platform)
        return lambda *a, **k: run(*a, cfg=chosen, **k)
    fwd = method(kernel, "fwd_with_residuals", platform)
    bwd = method(kernel, "vjp", platform)

    # Keyword arguments are closed over: gradients flow to the positional arguments only.
    def primal(*a: Any) -> Any:
        return fwd(*a, cfg=chosen, **kwargs)[0]

    def fwd_rule(*a: Any) -> Any:
        y, res = fwd(*a, cfg=chosen, **kwargs)
        return y, (res, y, a)

    def bwd_rule(saved: Any, dy: Any) -> Any:
        res, y, a = saved
        grads = bwd(res, y, dy, *a, cfg=chosen, **kwargs)
        if isinstance(grads, dict):
            raise TypeError("kernel.vjp must return a tuple of gradients for the positional "
                            "arguments")
        return tuple(grads)

    g = jax.custom_vjp(primal)
    g.defvjp(fwd_rule, bwd_rule)
    return lambda *a, **_k: g(*a)
