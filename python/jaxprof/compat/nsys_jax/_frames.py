"""``load_profiler_data``: nsys-jax's module, thunk and compile frames from jaxprof's tables."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

import numpy as np

from ..._optional import require
from ._compile_frame import compile_frame
from ._source import PathLike, profile_at

_FRAMES = {"thunk", "module", "compile"}


def _ns(ps: Any) -> Any:
    # Picoseconds to nanoseconds: integers when every value is whole (nsys-jax archives are),
    # else floats, so that sums keep every picosecond.
    ps = np.asarray(ps, dtype=np.int64)
    return ps // 1000 if not (ps % 1000).any() else ps / 1000.0


def _device_tids(devices: Iterable[str]) -> Dict[str, int]:
    # nsys-jax's TID is the thread that launched a device's work, one per device; here the device
    # stands for it, numbered in the profile's device order.
    return {d: i for i, d in enumerate(sorted(set(map(str, devices))))}


def _module_frame(p: Any, pd: Any, tids: Dict[str, int]) -> Any:
    me = p.table("module_executions", include_warmup=True).to_pandas()
    me = me.sort_values(["start_ps", "execution"], kind="stable")
    autotuning = (me["role"].astype(str) == "autotuning").to_numpy()
    program = me["program_id"].to_numpy(dtype=np.float64, na_value=np.nan)
    program = np.where(autotuning | np.isnan(program), -1, program).astype(np.int64)
    df = pd.DataFrame({
        "Name": me["module"].astype(str).to_numpy(dtype=object),
        "ProjStartNs": p.base_ns + _ns(me["start_ps"]),
        "ProjDurNs": _ns(me["duration_ps"]),
        "TID": me["device"].astype(str).map(tids).to_numpy(dtype=np.int64),
        "ProgramId": program.astype(np.int32),
    }, index=pd.Index(me["execution"].to_numpy(dtype=np.int32), name="RangeId"))
    df["OrigStartNs"] = df["ProjStartNs"].astype(np.float64)
    df["OrigDurNs"] = df["ProjDurNs"].astype(np.float64)
    df["ModuleExecution"] = df.groupby(["TID", "ProgramId"]).cumcount().astype(np.int32)
    df["_warmup"] = (me["role"].astype(str) == "warmup").to_numpy()
    return df


def _hidden_ns(start: np.ndarray, end: np.ndarray, comm: np.ndarray) -> np.ndarray:
    """Per communication thunk: its time covered by the union of the compute thunks."""
    hidden = np.zeros(len(start), dtype=np.float64)
    if not comm.any() or comm.all():
        return hidden
    order = np.argsort(start[~comm], kind="stable")
    s, e = start[~comm][order], end[~comm][order]
    # The compute intervals merged into disjoint ones, then covered time as a running sum.
    run_end = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > run_end[:-1]
    ms, me_ = s[new], np.maximum.reduceat(run_end, np.flatnonzero(new))
    before = np.concatenate([[0], np.cumsum(me_ - ms)])

    def covered(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(ms, t, side="right") - 1
        inside = np.where(k >= 0, np.clip(t - ms[np.maximum(k, 0)], 0,
                                          (me_ - ms)[np.maximum(k, 0)]), 0)
        return before[np.maximum(k, 0)] * (k >= 0) + inside

    hidden[comm] = covered(end[comm]) - covered(start[comm])
    return hidden


def _thunk_frame(p: Any, pd: Any, modules: Any, tids: Dict[str, int]) -> Any:
    ops = p.table("device_ops", include_warmup=True).to_pandas()
    ops = ops[ops["execution"].notna()]
    ops = ops.sort_values(["timeline_start_ps"], kind="stable")
    module_id = ops["execution"].to_numpy(dtype=np.int64)
    name = ops["hlo_op"].astype(object).where(ops["hlo_op"].notna(), ops["name"].astype(object))
    df = pd.DataFrame({
        "Name": name.astype(str).to_numpy(dtype=object),
        "ProjStartNs": p.base_ns + _ns(ops["timeline_start_ps"]),
        "ProjDurNs": _ns(ops["duration_ps"]),
        "TID": ops["device"].astype(str).map(tids).to_numpy(dtype=np.int64),
        "ModuleId": module_id,
        "ProgramId": modules["ProgramId"].reindex(module_id).to_numpy(dtype=np.int32),
        "ModuleExecution": modules["ModuleExecution"].reindex(module_id).to_numpy(dtype=np.int32),
        "Communication": (ops["category"].astype(str) == "collective").to_numpy(),
        "_warmup": ops["warmup"].to_numpy(dtype=bool),
    })
    first = int(modules.index.max()) + 1 if len(modules) else 0
    df.index = pd.Index(np.arange(first, first + len(df), dtype=np.int32), name="RangeId")
    df["OrigStartNs"] = df["ProjStartNs"].astype(np.float64)
    df["OrigDurNs"] = df["ProjDurNs"].astype(np.float64)
    df["ThunkExecution"] = df.groupby(
        ["TID", "ProgramId", "Name", "ModuleExecution"]).cumcount().astype(np.int64)
    # Communication time hidden behind computation on the same device, as nsys-jax splits it.
    df["ProjDurHiddenNs"] = 0.0
    for _, rows in df.groupby("TID").groups.items():
        sub = df.loc[rows]
        start = sub["ProjStartNs"].to_numpy(dtype=np.float64)
        end = start + sub["ProjDurNs"].to_numpy(dtype=np.float64)
        df.loc[rows, "ProjDurHiddenNs"] = _hidden_ns(start, end, sub["Communication"].to_numpy())
    dur = df["ProjDurNs"] - df["ProjDurHiddenNs"]
    df["ProjDurNs"] = dur.astype(df["ProjDurNs"].dtype) if (dur % 1 == 0).all() else dur
    return df


def load_profiler_data(prefix: Optional[PathLike] = None,
                       frames: Iterable[str] = frozenset({"compile", "thunk", "module"}),
                       warmup_removal_heuristics: bool = True) -> Dict[str, Any]:
    """nsys-jax's frames of the profile at ``prefix`` (default: the working directory): an
    nsys-jax archive (``.zip`` or unpacked), a JAX log directory or ``*.xplane.pb``.

    Returns ``{name: DataFrame}`` for each of ``frames`` ("thunk", "module", "compile"), indexed
    by ``RangeId``. With ``warmup_removal_heuristics`` the executions jaxprof sets apart as
    warm-up (the first execution of a program compiled in the profile, docs/steady-state.md)
    are left out of the module and thunk frames; autotuner executions stay, with ProgramId -1.
    """
    pd = require("pandas", "jaxprof.compat.nsys_jax")
    frames = set(frames)
    unknown = frames - _FRAMES
    if unknown:
        raise ValueError(f"unknown frames {sorted(unknown)}: expected some of {sorted(_FRAMES)}")
    p = profile_at(prefix)
    out: Dict[str, Any] = {}
    if "compile" in frames:
        out["compile"] = compile_frame(p, pd)
    if frames & {"thunk", "module"}:
        devices = p.table("module_executions", include_warmup=True).column("device")
        tids = _device_tids(devices.to_pylist())
        modules = _module_frame(p, pd, tids)
        if "thunk" in frames:
            thunks = _thunk_frame(p, pd, modules, tids)
            if warmup_removal_heuristics:
                thunks = thunks[~thunks["_warmup"]]
            out["thunk"] = thunks.drop(columns=["_warmup"])
        if warmup_removal_heuristics:
            modules = modules[~modules["_warmup"]]
        if "module" in frames:
            out["module"] = modules.drop(columns=["_warmup"])
    return out
