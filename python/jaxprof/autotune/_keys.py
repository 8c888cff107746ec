"""Cache keys: the device fingerprint and the call key.

Both are built from canonical text, never from ``repr`` of objects that print memory addresses or
device ids, so the same call on the same kind of machine gets the same key in every process.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Dict, Mapping, Optional, Sequence

__all__ = ["device_fingerprint", "call_key", "call_signature"]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{6,}")


def _no_address(text: str) -> str:
    return _ADDRESS.sub("", text)


def device_fingerprint(device: Any = None) -> str:
    """What makes a kernel's speed on ``device`` (default: JAX's first device) comparable.

    ``platform=...;kind=...;jax=...;jaxlib=...;runtime=...`` plus, where the platform tells,
    the compute capability (GPU), the CUDA driver and runtime versions and the NVIDIA kernel
    driver. Readable on purpose: ``jaxprof cache list --device`` filters by substring.
    """
    import jax

    d = device if device is not None else jax.devices()[0]
    parts = [f"platform={d.platform}", f"kind={d.device_kind}"]
    cc = getattr(d, "compute_capability", None)
    if cc:
        parts.append(f"cc={cc}")
    parts.append(f"jax={jax.__version__}")
    try:
        import jaxlib

        parts.append(f"jaxlib={jaxlib.__version__}")
    except Exception:  # pragma: no cover - jaxlib always comes with jax
        pass
    runtime = str(getattr(getattr(d, "client", None), "platform_version", "") or "")
    if runtime and runtime != "<unknown>":
        parts.append(f"runtime={runtime}")
    if d.platform == "gpu":
        parts += _cuda_versions()
    return ";".join(p.replace(";", ",") for p in parts)


def _cuda_versions() -> list:
    out = []
    try:  # private but stable for years; only adds detail when present
        from jax._src.lib import cuda_versions as cv

        if cv is not None:
            out.append(f"cuda_driver={cv.cuda_driver_get_version()}")
            out.append(f"cuda_runtime={cv.cuda_runtime_get_version()}")
            out.append(f"cudnn={cv.cudnn_get_version()}")
    except Exception:
        pass
    try:
        with open("/proc/driver/nvidia/version") as f:
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([0-9.]+)", f.read())
        if m:
            out.append(f"nvidia={m.group(1)}")
    except OSError:
        pass
    return out


def _sharding_text(aval_sharding: Any, concrete: Any, ndim: int) -> str:
    s = concrete if concrete is not None else aval_sharding
    if s is None:
        return "single"
    name = type(s).__name__
    if name == "SingleDeviceSharding":
        return "single"
    mesh = getattr(s, "mesh", None)
    spec = getattr(s, "spec", None)
    if mesh is not None and spec is not None:
        axes = [(str(a), int(n)) for a, n in dict(mesh.shape).items()]
        if not axes or all(n == 1 for _, n in axes):
            return "single"
        entries = [_spec_entry(e) for e in tuple(spec)]
        entries += ["None"] * (ndim - len(entries))  # P('x') == P('x', None) for 2-d arrays
        kind = getattr(s, "memory_kind", None)
        mem = f" mem={kind}" if kind not in (None, "device") else ""
        return ("mesh(" + ",".join(f"{a}={n}" for a, n in axes) + ") spec(" +
                ",".join(entries) + ")" + mem)
    try:  # other shardings: the HLO sharding names logical devices, not physical ids
        return f"{name}{s._to_xla_hlo_sharding(ndim)}"
    except Exception:
        return _no_address(f"{name}")


def _spec_entry(e: Any) -> str:
    if e is None:
        return "None"
    if isinstance(e, (tuple, list)):
        return "(" + ",".join(str(a) for a in e) + ")"
    return str(e)


def _leaf_text(x: Any) -> str:
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        shape = tuple(int(d) for d in x.shape)
        aval = getattr(x, "aval", None)
        weak = bool(getattr(aval, "weak_type", getattr(x, "weak_type", False)))
        concrete = None
        if aval is None or not _is_tracer(x):
            concrete = getattr(x, "sharding", None)
        sharding = _sharding_text(getattr(aval, "sharding", None), concrete, len(shape))
        return f"{x.dtype}{list(shape)}{'~weak' if weak else ''} {sharding}"
    if isinstance(x, (bool, int, float, complex)):
        return f"py:{type(x).__name__}"  # traced: the value does not change the program
    if x is None:
        return "None"
    return f"obj:{type(x).__module__}.{type(x).__qualname__}"


def _is_tracer(x: Any) -> bool:
    try:
        import jax

        return isinstance(x, jax.core.Tracer)
    except Exception:  # pragma: no cover
        return False


def _static_value(v: Any) -> Any:
    # JSON-able canonical form; functions and classes by name, everything else by address-free
    # repr.
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_static_value(e) for e in v]
    if isinstance(v, Mapping):
        return {str(k): _static_value(val) for k, val in v.items()}
    if callable(v) and hasattr(v, "__qualname__"):
        return f"{getattr(v, '__module__', '')}.{v.__qualname__}"
    return _no_address(repr(v))


def call_signature(args: Sequence[Any] = (), kwargs: Optional[Mapping[str, Any]] = None,
                   static: Optional[Mapping[str, Any]] = None) -> str:
    """The canonical text that :func:`call_key` hashes: the pytree structure of ``(args,
    kwargs)``, each leaf's dtype, shape, weak type and sharding (mesh axis sizes and the
    partition spec), and the static parameters as sorted JSON."""
    import jax

    leaves, tree = jax.tree_util.tree_flatten((tuple(args), dict(kwargs or {})))
    lines = [_no_address(str(tree))]
    lines += [_leaf_text(x) for x in leaves]
    lines.append(json.dumps(_static_value(dict(static or {})), sort_keys=True))
    return "\n".join(lines)


def call_key(args: Sequence[Any] = (), kwargs: Optional[Mapping[str, Any]] = None,
             static: Optional[Mapping[str, Any]] = None) -> str:
    """A stable 32-hex-digit key (SHA-256 of :func:`call_signature`): identical across processes
    and machines for the same shapes, dtypes, shardings and static parameters. Works on concrete
    arrays, ``jax.ShapeDtypeStruct`` and tracers alike."""
    return hashlib.sha256(call_signature(args, kwargs, static).encode()).hexdigest()[:32]


def split_static(kwargs: Mapping[str, Any]) -> "tuple[Dict[str, Any], Dict[str, Any]]":
    """Keyword arguments holding arrays (dynamic) apart from the rest (static)."""
    import jax

    dyn, static = {}, {}
    for k, v in kwargs.items():
        leaves = jax.tree_util.tree_leaves(v)
        if leaves and all(hasattr(x, "shape") and hasattr(x, "dtype") for x in leaves):
            dyn[k] = v
        else:
            static[k] = v
    return dyn, static
