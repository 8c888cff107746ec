"""``calculate_collective_metrics``: message size and bandwidths of communication thunks, from
the collectives jaxprof found (operand sizes and replica groups from the HLO)."""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from ._source import current_profile

# Algorithm-bandwidth size factor and bus-bandwidth factor per collective for n devices, as
# NCCL's tests define bus bandwidth.
_FACTORS = {
    "all-gather": lambda n: (n, (n - 1) / n),
    "all-reduce": lambda n: (1, 2 * (n - 1) / n),
    "all-to-all": lambda n: (1, (n - 1) / n),
    "collective-broadcast": lambda n: (1, 1.0),
    "collective-permute": lambda n: (1, 1.0),
    "reduce-scatter": lambda n: (n, (n - 1) / n),
}


def _collective_info(p: Any) -> Dict[Tuple[int, str], Tuple[str, int, int]]:
    """(program id, HLO op) -> (collective, group size, message bytes)."""
    ops = p.sql("SELECT DISTINCT module, program_id FROM device_ops "
                "WHERE program_id IS NOT NULL").to_pylist()
    programs_of: Dict[str, list] = {}
    for o in ops:  # one module name may be several programs (jit__psum compiled twice)
        programs_of.setdefault(o["module"], []).append(int(o["program_id"]))
    out: Dict[Tuple[int, str], Tuple[str, int, int]] = {}
    for c in p.sql("SELECT DISTINCT module, name, opcode, group_size, message_bytes "
                   "FROM collectives").to_pylist():
        kind = str(c["opcode"]).removesuffix("-start").removesuffix("-done")
        size = 2 if kind == "collective-permute" else int(c["group_size"] or 1)
        message = int(c["message_bytes"] or 0)
        if kind == "reduce-scatter":  # NCCL counts a reduce-scatter's output buffer
            message //= max(size, 1)
        for pid in programs_of.get(c["module"], []):
            out[(pid, c["name"])] = (kind, size, message)
    return out


def calculate_collective_metrics(thunk_df: Any, prefix: Any = None) -> Any:
    """The communication rows of a thunk frame with ``Collective``, ``CollectiveSize``,
    ``MessageSize`` (bytes, NCCL's convention), ``AlgorithmBandwidthGBPerSec`` and
    ``BusBandwidthGBPerSec`` (decimal GB/s over the whole kernel, hidden time included)."""
    info = _collective_info(current_profile(prefix))
    comm = thunk_df[thunk_df["Communication"]].drop(columns=["Communication"]).copy()
    rows = [info.get((int(pid), name), ("unknown", 1, 0))
            for pid, name in zip(comm["ProgramId"], comm["Name"])]
    comm["Collective"] = [r[0] for r in rows]
    comm["CollectiveSize"] = np.array([r[1] for r in rows], dtype=np.int64)
    comm["MessageSize"] = np.array([r[2] for r in rows], dtype=np.int64)
    factors = [_FACTORS.get(r[0], lambda n: (1, 1.0))(max(r[1], 1)) for r in rows]
    full = (comm["ProjDurNs"] + comm["ProjDurHiddenNs"]).to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        algo = np.array([f[0] for f in factors], dtype=np.float64) * comm["MessageSize"] / full
    comm["AlgorithmBandwidthGBPerSec"] = algo
    comm["BusBandwidthGBPerSec"] = algo * np.array([f[1] for f in factors], dtype=np.float64)
    return comm
