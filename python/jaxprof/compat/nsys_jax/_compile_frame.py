"""nsys-jax's compile frame: every host range inside a compile jaxprof found (compiles table),
with the ranges that worker threads ran during it placed under the launching thread's deepest
open range, as nsys-jax splices them in."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List

import numpy as np

from ._source import thread_id

# Ranges of other libraries (NCCL, cuBLAS) count as their parent's own time, as in nsys-jax,
# which keeps only XLA's ("TSL:") ranges.
_LIBRARY_RANGE = r"^(?:NCCL|nccl|cuBLAS|cublas|cuDNN|cudnn|CUDA|cuda)[A-Za-z]*:"


def _nsys_name(name: str) -> str:
    # jaxprof names passes "XlaPass:NAME"; nsys-jax's frame keeps XLA's "XlaPass:#name=NAME#".
    for kind in ("XlaPass:", "XlaPassPipeline:"):
        if name.startswith(kind) and not name.startswith(kind + "#"):
            return f"{kind}#name={name[len(kind):]}#"
    return name


def _subtree(root: int, children: Dict[int, List[int]]) -> List[int]:
    out, todo = [], [root]
    while todo:
        r = todo.pop()
        out.append(r)
        todo.extend(children.get(r, ()))
    return out


def compile_frame(p: Any, pd: Any) -> Any:
    hr = p.table("host_ranges").to_pandas()
    comps = p.table("compiles").to_pandas()
    ids = hr["id"].to_numpy(dtype=np.int64)
    start = hr["start_ps"].to_numpy(dtype=np.int64)
    dur = hr["duration_ps"].to_numpy(dtype=np.int64)
    end = start + dur
    depth = hr["depth"].to_numpy(dtype=np.int64)
    host = hr["host"].astype(str).to_numpy()
    thread = hr["thread"].astype(str).to_numpy()
    parent = hr["parent"].to_numpy(dtype=np.float64, na_value=np.nan)
    names = hr["name"].astype(str).to_numpy()
    row_of = {int(i): k for k, i in enumerate(ids)}
    children: Dict[int, List[int]] = defaultdict(list)
    for k in np.flatnonzero(~np.isnan(parent)):
        children[int(parent[k])].append(int(ids[k]))

    new_parent: Dict[int, float] = {}
    program: Dict[int, tuple] = {}
    rows: List[int] = []
    for c in comps.itertuples():
        # The compile's outermost ranges on its thread (one XlaCompile range in nsys-jax
        # archives; on xplane captures the stages jaxprof groups into one compile).
        at = np.flatnonzero((host == str(c.host)) & (thread == str(c.thread))
                            & (start >= c.start_ps) & (end <= c.start_ps + c.wall_ps))
        if not len(at):
            continue
        at = at[depth[at] == depth[at].min()]
        root_row = int(at[0])
        pid = -1 if c.program_id is None or pd.isna(c.program_id) else int(c.program_id)
        module = "" if c.module is None or pd.isna(c.module) else str(c.module)
        tree = [r for k in at for r in _subtree(int(ids[k]), children)]
        tree_rows = np.array([row_of[r] for r in tree])
        # Worker threads' outermost ranges within the compile, under the deepest range of the
        # launching thread that holds them.
        workers = np.flatnonzero((host == host[root_row]) & (thread != thread[root_row])
                                 & (depth == 0) & (start >= c.start_ps)
                                 & (end <= c.start_ps + c.wall_ps))
        for w in workers:
            holds = tree_rows[(start[tree_rows] <= start[w]) & (end[tree_rows] >= end[w])]
            if not len(holds):
                continue
            new_parent[int(ids[w])] = float(ids[holds[np.argmax(depth[holds])]])
            tree.extend(_subtree(int(ids[w]), children))
        for r in tree:
            program[r] = (pid, module)
        rows.extend(tree)
    rows_idx = np.array(sorted(set(rows)), dtype=np.int64)
    k = np.array([row_of[r] for r in rows_idx], dtype=np.int64)
    df = pd.DataFrame({
        "StartNs": p.base_ns + start[k] / 1000.0,
        "DurNs": dur[k] / 1000.0,
        "Name": np.array([_nsys_name(n) for n in names[k]], dtype=object),
        "TID": [thread_id(t, i) for i, t in enumerate(thread[k])],
        "ParentId": [new_parent.get(int(r), parent[row_of[int(r)]]) for r in rows_idx],
        "ProgramId": np.array([program[int(r)][0] for r in rows_idx], dtype=np.int32),
        "ProgramName": np.array([program[int(r)][1] for r in rows_idx], dtype=object),
    }, index=pd.Index(rows_idx.astype(np.int32), name="RangeId"))
    for col in ("StartNs", "DurNs"):
        if (df[col] % 1 == 0).all():
            df[col] = df[col].astype(np.int64)
    return _fold_and_sum(df, np)


def _fold_and_sum(df: Any, np_: Any) -> Any:
    """Drops non-XLA ranges (their time becomes their parent's own), then sets NumChild,
    DurChildNs, DurNonChildNs and RangeStack from the parent links."""
    df = df[~df["Name"].astype(str).str.contains(_LIBRARY_RANGE, regex=True)].copy()
    parent = df["ParentId"]
    kept = parent.isin(df.index)
    child_dur = df.loc[kept, "DurNs"].groupby(parent[kept].astype(np.int64)).sum()
    counts = parent[kept].astype(np.int64).value_counts()
    df["NumChild"] = counts.reindex(df.index, fill_value=0).to_numpy(dtype=np.int64)
    df["DurChildNs"] = child_dur.reindex(df.index, fill_value=0).to_numpy()
    df["DurNonChildNs"] = df["DurNs"] - df["DurChildNs"]
    stacks: Dict[int, str] = {}
    parent_of = {int(i): (int(pa) if k else None)
                 for i, pa, k in zip(df.index, parent.fillna(-1), kept)}

    def stack(i: int) -> str:
        chain = []
        while i is not None and i not in stacks:
            chain.append(i)
            i = parent_of[i]
        s = stacks[i] if i is not None else ""
        for j in reversed(chain):
            s = f"{s}:{j}"
            stacks[j] = s
        return stacks[chain[0]] if chain else s

    df["RangeStack"] = [stack(int(i)) for i in df.index]
    df["ParentId"] = parent.where(kept)
    return df
