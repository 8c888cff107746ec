"""Offline tuning of a lowered computation: :func:`autotune_lowered` finds the kernel calls
labelled in it, times each one's candidates on stand-ins of its recorded arguments, and returns
an :class:`AutotuningResult` whose ``with result:`` applies the winners."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from ...autotune._labels import extract_labels
from ._executor import get_invocations, label_prefixes, resolve_label
from ._kernel import Invocation, get_device_platform, method
from ._select import (ConfigSelectorChain, device_fingerprint, make_runner, overlay_cache,
                      put_persistent, stand_ins)

__all__ = ["Entry", "AutotuningResult", "autotune_lowered"]


@dataclass(frozen=True)
class Entry:
    """The configuration chosen for one kernel call: ``op@vN``, call key, configuration."""

    op_id_v: str
    call_key: str
    cfg: Any


@dataclass(frozen=True)
class AutotuningResult:
    """Winners for ``device``. ``with result:`` applies them to every kernel call traced in the
    block, ahead of the selector's caches; a computation traced before is traced again inside
    the block. Nesting-safe, restored on exit also on an exception, and the same result may be
    entered again. ``skipped`` lists the labels that were not tuned, with the reason."""

    device: str
    entries: Tuple[Entry, ...]
    skipped: Tuple[Tuple[str, str], ...] = ()
    _active: List[overlay_cache] = field(default_factory=list, init=False, repr=False,
                                         compare=False)

    def as_overlay(self) -> Dict[Tuple[str, str, str], Any]:
        """``{(device, op@vN, call_key): cfg}`` (what :class:`overlay_cache` takes)."""
        return {(self.device, e.op_id_v, e.call_key): e.cfg for e in self.entries}

    def __enter__(self) -> "AutotuningResult":
        # The list is mutable state of a frozen object: entering changes no field.
        ctx = overlay_cache(self.as_overlay())
        ctx.__enter__()
        self._active.append(ctx)
        return self

    def __exit__(self, *exc: Any) -> bool:
        return self._active.pop().__exit__(*exc)

    def __len__(self) -> int:
        return len(self.entries)


def autotune_lowered(selector: ConfigSelectorChain, lowered: Any) -> AutotuningResult:
    """Tunes every recorded kernel call labelled in ``lowered`` (a ``jax.stages.Lowered``, a
    ``Compiled``, or their text), each distinct (op, call key) once, with ``selector.tuner``.

    Labels are there when ``EJKERNEL_OPS_STAMP`` was ``hash`` or ``json`` while ``lowered`` was
    traced; one counts when its call was recorded on this device (``EJKERNEL_OPS_RECORD=1``
    then). Both default off, as in ejkernel. The candidates are the kernel's ``candidate_cfgs`` for
    an :class:`Invocation` of the recorded abstract arguments, timed on concrete stand-ins.
    Winners go to ``selector.cache`` and, with ``selector.persist_autotune``, to
    ``selector.persistent``. Labels not tuned are listed in ``result.skipped``.
    """
    import jax

    dev = device_fingerprint()
    invocations = get_invocations(dev)
    platform = get_device_platform()
    entries: List[Entry] = []
    skipped: List[Tuple[str, str]] = []
    seen = set()
    for prefix in label_prefixes():
        for lab in extract_labels(lowered, prefix):
            if not lab.complete:
                skipped.append((lab.label, "label cut at '@' (no version or call key)"))
                continue
            op_v, key = resolve_label(prefix, lab.op, lab.version, lab.call_key)
            if (op_v, key) in seen:
                continue
            seen.add((op_v, key))
            recorded = invocations.get(op_v, {}).get(key)
            if recorded is None:
                skipped.append((lab.label, "call not recorded on this device "
                                "(EJKERNEL_OPS_RECORD=1 not set while tracing?)"))
                continue
            kernel, args, kwargs = recorded
            inv = Invocation(kernel.op_id, args, kwargs, stamp=False)
            candidates = tuple(method(kernel, "candidate_cfgs", platform)(inv))
            with jax.ensure_compile_time_eval():
                concrete_args, concrete_kwargs = stand_ins((args, kwargs))
            best = selector.tuner.autotune(make_runner(kernel, platform), concrete_args,
                                           concrete_kwargs, candidates)
            selector.cache.put(dev, op_v, key, best)
            if selector.persistent is not None and selector.persist_autotune:
                put_persistent(selector.persistent, dev, op_v, key, best, selector.tuner)
            entries.append(Entry(op_v, key, best))
    return AutotuningResult(dev, tuple(entries), tuple(skipped))
