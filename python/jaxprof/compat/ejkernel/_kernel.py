"""The kernel protocol: :class:`Invocation` (one call's arguments) and :class:`Kernel` (how to
run an op with a configuration, its default and its candidates)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import (Any, Callable, Dict, Generic, Iterable, Mapping, Optional, Tuple, TypeVar)

from ...autotune._keys import call_key as _call_key
from ...autotune._keys import split_static

__all__ = ["Cfg", "Out", "Invocation", "Kernel", "op_id_v", "get_device_platform"]

Cfg = TypeVar("Cfg")
Out = TypeVar("Out")


@dataclass(frozen=True)
class Invocation(Generic[Cfg, Out]):
    """One call of a kernel: its (prepared) arguments, an optional configuration that overrides
    every other source, batch axes, and whether the call is stamped with a label."""

    op_id: str
    args: Tuple[Any, ...]
    kwargs: Mapping[str, Any]
    batch_axes: Optional[Mapping[str, int]] = None
    override_cfg: Optional[Cfg] = None
    stamp: bool = True

    @property
    def call_key(self) -> str:
        """jaxprof's :func:`jaxprof.autotune.call_key` of the arguments: shapes, dtypes, weak
        types and shardings of the array leaves, non-array keyword arguments by value, and the
        batch axes. Equal for concrete arrays, tracers and ``jax.ShapeDtypeStruct``."""
        dyn, static = split_static(dict(self.kwargs))
        if self.batch_axes is not None:
            # Not a valid identifier, so it cannot clash with a keyword argument.
            static["<batch_axes>"] = dict(self.batch_axes)
        return _call_key(tuple(self.args), dyn, static)

    def make_key(self, key_builder: Optional[Callable[["Invocation[Cfg, Out]"], str]] = None
                 ) -> str:
        """``key_builder(self)`` when given, else :attr:`call_key`."""
        return key_builder(self) if key_builder is not None else self.call_key


class Kernel(Generic[Cfg, Out]):
    """An op with tunable configurations. Subclasses implement :meth:`run` and
    :meth:`heuristic_cfg`, and optionally :meth:`prepare`, :meth:`candidate_cfgs` and the custom
    gradient pair :meth:`fwd_with_residuals` / :meth:`vjp`. A method named ``NAME_PLATFORM``
    (``run_gpu``, ``candidate_cfgs_tpu``, ...) is used instead of ``NAME`` on that platform.

    ``op_id`` (default ``module.ClassName``) and ``version`` name the op in caches and labels
    (``op_id@vVERSION``); bump ``version`` when cached configurations stop being valid.
    """

    op_id: str
    key_builder: Optional[Callable[[Invocation[Cfg, Out]], str]] = None
    version: str = "0"

    def __init__(self, op_id: Optional[str] = None) -> None:
        if op_id is not None:
            self.op_id = op_id
        elif not getattr(self, "op_id", None):
            self.op_id = f"{type(self).__module__}.{type(self).__name__}"

    def prepare(self, *args: Any, **kwargs: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """Arguments as :meth:`run` takes them (called once per call, before choosing)."""
        return args, kwargs

    def run(self, *args: Any, cfg: Cfg, **kwargs: Any) -> Out:
        raise NotImplementedError(f"{type(self).__name__}.run")

    def heuristic_cfg(self, inv: Invocation[Cfg, Out]) -> Cfg:
        raise NotImplementedError(f"{type(self).__name__}.heuristic_cfg")

    def candidate_cfgs(self, inv: Invocation[Cfg, Out]) -> Iterable[Cfg]:
        """Configurations to time; by default only the heuristic one."""
        return [self.heuristic_cfg(inv)]

    def fwd_with_residuals(self, *args: Any, cfg: Cfg, **kwargs: Any) -> Tuple[Out, Any]:
        raise NotImplementedError(f"{type(self).__name__}.fwd_with_residuals")

    def vjp(self, residuals: Any, y: Out, dy: Out, *args: Any, cfg: Cfg, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.vjp")


def op_id_v(kernel: Kernel) -> str:
    """``op_id@vVERSION``: the op field of cache entries."""
    return f"{kernel.op_id}@v{getattr(kernel, 'version', '0')}"


def _overridden(kernel: Kernel, name: str) -> bool:
    impl = getattr(type(kernel), name, None)
    return impl is not None and impl is not getattr(Kernel, name, None)


def method(kernel: Kernel, name: str, platform: Optional[str]) -> Callable[..., Any]:
    """``kernel.NAME_PLATFORM`` where the kernel defines it, else ``kernel.NAME``."""
    if platform and hasattr(kernel, f"{name}_{platform}"):
        return getattr(kernel, f"{name}_{platform}")
    return getattr(kernel, name)


def has_custom_vjp(kernel: Kernel, platform: Optional[str]) -> bool:
    for suffix in ([f"_{platform}"] if platform else []) + [""]:
        fwd, bwd = f"fwd_with_residuals{suffix}", f"vjp{suffix}"
        if suffix and hasattr(kernel, fwd) and hasattr(kernel, bwd):
            return True
        if not suffix and _overridden(kernel, fwd) and _overridden(kernel, bwd):
            return True
    return False


def get_device_platform(dev: Any = None) -> str:
    """``"gpu"``, ``"tpu"``, ``"cpu"`` or ``"unknown"`` for ``dev`` (default: JAX's first
    device); the suffix of platform-specific kernel methods."""
    import jax

    d = dev if dev is not None else jax.devices()[0]
    platform = str(getattr(d, "platform", "")).lower()
    if platform in ("gpu", "cuda", "rocm"):
        return "gpu"
    if platform in ("tpu", "cpu"):
        return platform
    kind = str(getattr(d, "device_kind", "")).lower()
    for name, words in (("gpu", ("gpu", "cuda", "nvidia", "rocm")), ("tpu", ("tpu",)),
                        ("cpu", ("cpu",))):
        if any(w in kind for w in words):
            return name
    return "unknown"
