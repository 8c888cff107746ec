"""Autotune labels: ``PREFIX#OP.vVERSION:KEY`` stamped into op names with ``jax.named_scope``,
found again in lowered or compiled computations by the C++ ``extract_labels``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, List, Tuple, Union

from .. import _core

__all__ = ["Label", "label", "label_text", "extract_labels", "split_op_id", "DEFAULT_PREFIX"]

DEFAULT_PREFIX: str = _core.DEFAULT_LABEL_PREFIX
_OP = re.compile(r"^[A-Za-z0-9_-]+$")
_KEY = re.compile(r"^[A-Za-z0-9_.=+-]+$")
_OP_ID = re.compile(r"^([A-Za-z0-9_-]+)(?:[@.]v([0-9]+))?$")


@dataclass(frozen=True)
class Label:
    """A label found in a computation. ``version`` is -1 and ``call_key`` empty when XLA cut the
    label at ``@`` (write ``.v`` labels to keep them whole, see docs/autotune.md)."""

    label: str
    op: str
    version: int
    call_key: str
    occurrences: int

    @property
    def complete(self) -> bool:
        return self.version >= 0

    @property
    def op_id(self) -> str:
        """``op@vN`` (the cache's op field), or the bare op of a cut label."""
        return f"{self.op}@v{self.version}" if self.complete else self.op


def split_op_id(op_id: str, version: Union[int, None] = None) -> Tuple[str, int]:
    """``"matmul@v2"`` -> ("matmul", 2); a bare op takes ``version`` (default 1)."""
    m = _OP_ID.match(op_id)
    if not m:
        raise ValueError(f"op id must match [A-Za-z0-9_-]+ with an optional @vN: {op_id!r}")
    if m.group(2) is not None:
        v = int(m.group(2))
        if version is not None and version != v:
            raise ValueError(f"op id {op_id!r} says version {v}, version= says {version}")
        return m.group(1), v
    return m.group(1), 1 if version is None else int(version)


def label_text(op_id: str, call_key: str, version: Union[int, None] = None,
               prefix: str = DEFAULT_PREFIX) -> str:
    """``PREFIX#OP.vVERSION:KEY``: the form that survives lowering to HLO and compilation."""
    op, v = split_op_id(op_id, version)
    if not _KEY.match(call_key):
        raise ValueError(f"call key must match [A-Za-z0-9_.=+-]+: {call_key!r}")
    if not prefix or "#" in prefix:
        raise ValueError(f"label prefix must be non-empty and without '#': {prefix!r}")
    return f"{prefix}#{op}.v{v}:{call_key}"


def label(op_id: str, call_key: str, version: Union[int, None] = None,
          prefix: str = DEFAULT_PREFIX) -> Any:
    """A ``jax.named_scope`` that stamps :func:`label_text` into the names of the ops traced
    inside it (``op_name`` metadata in HLO, locations in StableHLO)."""
    import jax

    return jax.named_scope(label_text(op_id, call_key, version, prefix))


def _text(obj: Any) -> bytes:
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, str):
        return obj.encode("utf-8")
    as_text = getattr(obj, "as_text", None)
    if as_text is None:
        raise TypeError("extract_labels takes HLO/StableHLO text, bytes, or a jax Lowered or "
                        f"Compiled object; got {type(obj).__name__}")
    if hasattr(obj, "compile"):  # Lowered: StableHLO with its debug locations
        try:
            return as_text(debug_info=True).encode("utf-8")
        except TypeError:  # older JAX without debug_info
            return as_text().encode("utf-8")
    return as_text().encode("utf-8")


def extract_labels(obj: Any, prefix: str = DEFAULT_PREFIX) -> List[Label]:
    """Distinct labels (by op, version and key) in order of first appearance.

    ``obj``: HLO or StableHLO text (str or bytes), the bytes of a serialized HloProto, a
    ``jax.stages.Lowered`` (its StableHLO with debug locations is searched) or a
    ``jax.stages.Compiled`` (its optimized HLO).
    """
    return [Label(*t) for t in _core.extract_labels(_text(obj), prefix)]
