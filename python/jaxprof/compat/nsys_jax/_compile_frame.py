"""nsys-jax's compile frame: every host range inside a compile jaxprof found (compiles table),
with the ranges that worker threads ran during it placed under the launching thread's deepest
open range, as nsys-jax splices them in.

nsys-jax archives have one XlaCompile range per compile, which is the frame's root. xplane
captures have none: a compile there is a run of JAX stages (trace, lower, backend compile) on the
launching thread, so the frame holds the compile events jaxprof counted (``compile_passes``)
under one root range per compile that spans its wall time (``_compile_stages``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, Optional

import numpy as np

from ._compile_stages import COMPILE_ROOT, stage_tree
from ._source import thread_ids

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


class HostRanges:
    """The ``host_ranges`` table as arrays, with each range's children."""

    def __init__(self, p: Any) -> None:
        hr = p.table("host_ranges").to_pandas()
        self.ids = hr["id"].to_numpy(dtype=np.int64)
        self.start = hr["start_ps"].to_numpy(dtype=np.int64)
        self.dur = hr["duration_ps"].to_numpy(dtype=np.int64)
        self.end = self.start + self.dur
        self.depth = hr["depth"].to_numpy(dtype=np.int64)
        self.host = hr["host"].astype(str).to_numpy()
        self.thread = hr["thread"].astype(str).to_numpy()
        self.parent = hr["parent"].to_numpy(dtype=np.float64, na_value=np.nan)
        self.names = hr["name"].astype(str).to_numpy()
        self.row_of = {int(i): k for k, i in enumerate(self.ids)}
        self.children: Dict[int, List[int]] = defaultdict(list)
        for k in np.flatnonzero(~np.isnan(self.parent)):
            self.children[int(self.parent[k])].append(int(self.ids[k]))


def _xla_compile_tree(r: HostRanges, c: Any, new_parent: Dict[int, float]) -> Optional[List[int]]:
    """The ranges of a compile whose launching thread has one range over its whole wall time
    (XlaCompile in nsys-jax archives): that range's subtree and the worker threads' ranges
    within it. None when there is no such range."""
    end = c.start_ps + c.wall_ps
    at = np.flatnonzero((r.host == str(c.host)) & (r.thread == str(c.thread))
                        & (r.start >= c.start_ps) & (r.end <= end))
    if not len(at):
        return None
    at = at[r.depth[at] == r.depth[at].min()]
    if len(at) != 1 or r.start[at[0]] != c.start_ps or r.end[at[0]] != end:
        return None
    root_row = int(at[0])
    tree = _subtree(int(r.ids[root_row]), r.children)
    tree_rows = np.array([r.row_of[i] for i in tree])
    # Worker threads' outermost ranges within the compile, under the deepest range of the
    # launching thread that holds them.
    workers = np.flatnonzero((r.host == r.host[root_row]) & (r.thread != r.thread[root_row])
                             & (r.depth == 0) & (r.start >= c.start_ps) & (r.end <= end))
    for w in workers:
        holds = tree_rows[(r.start[tree_rows] <= r.start[w]) & (r.end[tree_rows] >= r.end[w])]
        if not len(holds):
            continue
        new_parent[int(r.ids[w])] = float(r.ids[holds[np.argmax(r.depth[holds])]])
        tree.extend(_subtree(int(r.ids[w]), r.children))
    return tree


def compile_frame(p: Any, pd: Any) -> Any:
    r = HostRanges(p)
    comps = p.table("compiles").to_pandas()
    passes = p.table("compile_passes").to_pandas()
    names_of = {int(k): set(v) for k, v in passes.groupby("compile")["name"]}

    new_parent: Dict[int, float] = {}
    program: Dict[int, tuple] = {}
    rows: List[int] = []
    roots: List[Dict[str, Any]] = []  # the compile ranges of xplane captures
    next_id = int(r.ids.max()) + 1 if len(r.ids) else 0
    for c in comps.itertuples():
        pid = -1 if c.program_id is None or pd.isna(c.program_id) else int(c.program_id)
        module = "" if c.module is None or pd.isna(c.module) else str(c.module)
        tree = _xla_compile_tree(r, c, new_parent)
        if tree is None:
            root = {"id": next_id, "start": int(c.start_ps), "dur": int(c.wall_ps),
                    "thread": str(c.thread), "program": (pid, module)}
            next_id += 1
            tree = stage_tree(r, c, names_of.get(int(c.compile), set()), root["id"], new_parent)
            roots.append(root)
        for i in tree:
            program[i] = (pid, module)
        rows.extend(tree)
    rows_idx = np.array(sorted(set(rows)), dtype=np.int64)
    k = np.array([r.row_of[i] for i in rows_idx], dtype=np.int64)
    tids = thread_ids(list(r.thread[k]) + [x["thread"] for x in roots])
    df = pd.DataFrame({
        "StartNs": np.concatenate([r.start[k], [x["start"] for x in roots]]) / 1000.0
        + p.base_ns,
        "DurNs": np.concatenate([r.dur[k], [x["dur"] for x in roots]]) / 1000.0,
        "Name": np.array([_nsys_name(n) for n in r.names[k]] + [COMPILE_ROOT] * len(roots),
                         dtype=object),
        "TID": np.array(tids, dtype=np.int64),
        "ParentId": [new_parent.get(int(i), r.parent[r.row_of[int(i)]]) for i in rows_idx]
        + [np.nan] * len(roots),
        "ProgramId": np.array([program[int(i)][0] for i in rows_idx]
                              + [x["program"][0] for x in roots], dtype=np.int32),
        "ProgramName": np.array([program[int(i)][1] for i in rows_idx]
                                + [x["program"][1] for x in roots], dtype=object),
    }, index=pd.Index(np.concatenate([rows_idx, [x["id"] for x in roots]]).astype(np.int32),
                      name="RangeId"))
    df = df.sort_index()
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
