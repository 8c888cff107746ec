"""nsys-jax's compile-frame helpers: cutting ranges' children, and compile time per range name
with parallel (worker thread) regions shared out by what the workers did."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict

import numpy as np

from ..._optional import require


def _descendants(df: Any, index: Any) -> Any:
    return df["RangeStack"].str.startswith(df.at[index, "RangeStack"] + ":")


def remove_child_ranges(df: Any, mask: Any) -> Any:
    """``df`` without the descendants of the rows ``mask`` selects; those rows keep their whole
    duration as their own (``DurNonChildNs``) and have no children left."""
    df = df.copy()
    mask = mask.reindex(df.index, fill_value=False) & (df["NumChild"] != 0)
    drop = np.zeros(len(df), dtype=bool)
    for index in df.index[mask.to_numpy()]:
        if drop[df.index.get_loc(index)]:
            continue  # inside a range already cut
        drop |= _descendants(df, index).to_numpy()
        df.loc[index, ["NumChild", "DurChildNs"]] = 0
        df.loc[index, "DurNonChildNs"] = df.at[index, "DurNs"]
    return df[~drop]


def _launchers(ids: np.ndarray, parent: np.ndarray, main: np.ndarray) -> Dict[int, list]:
    """{launcher id: positions of the worker rows it launched}, the launcher of a worker row
    being its nearest ancestor on the launching thread."""
    pos = {int(i): k for k, i in enumerate(ids)}
    owner: Dict[int, int] = {}  # worker position -> launcher id (-1: none)
    out: Dict[int, list] = defaultdict(list)
    for k in np.flatnonzero(~main):
        chain, j, found = [], int(k), -1
        while True:
            if j in owner:
                found = owner[j]
                break
            chain.append(j)
            p = parent[j]
            if np.isnan(p) or int(p) not in pos:
                break
            j = pos[int(p)]
            if main[j]:
                found = int(ids[j])
                break
        for c in chain:
            owner[c] = found
        if found >= 0:
            out[found].append(int(k))
    return out


def generate_compilation_statistics(compile_df: Any) -> Any:
    """Compile time per range name over every compile in ``compile_df``: ``DurNonChildNs`` and
    ``DurChildNs`` sums, sorted by ``DurNonChildNs``. A launching-thread range whose children run
    on worker threads has its parallel region (first worker start to last worker end) shared out
    among the workers' ranges in proportion to their own time, so that the names' own times add
    up to the compiles' wall time."""
    pd = require("pandas", "generate_compilation_statistics")
    df = compile_df.copy()
    stack = df["RangeStack"].astype(str)
    root = stack.str.split(":").str[1].astype(np.int64)
    root_tid = df["TID"].reindex(root.to_numpy()).to_numpy()
    main = df["TID"].to_numpy() == root_tid
    totals: Dict[str, np.ndarray] = defaultdict(lambda: np.zeros(2))
    parent = df["ParentId"]
    starts = df["StartNs"].to_numpy(dtype=np.float64)
    ends = starts + df["DurNs"].to_numpy(dtype=np.float64)
    own = df["DurNonChildNs"].to_numpy(dtype=np.float64)
    child = df["DurChildNs"].to_numpy(dtype=np.float64)
    names = df["Name"].to_numpy()
    # Each worker range's launcher: its nearest launching-thread ancestor. A launcher shares out
    # only its own parallel region, so a range whose worker children launch more workers is not
    # counted twice.
    launcher_of = _launchers(df.index.to_numpy(), parent.to_numpy(dtype=np.float64), main)
    for launcher, rows in sorted(launcher_of.items()):
        workers = np.array(rows, dtype=np.int64)
        span = ends[workers].max() - starts[workers].min()
        busy = own[workers].sum()
        if busy > 0:
            for name, o, c in zip(names[workers], own[workers], child[workers]):
                totals[name] += (span * o / busy, span * c / busy)
        direct = (parent == launcher).to_numpy() & main
        child_ns = df["DurNs"].to_numpy(dtype=np.float64)[direct].sum() + span
        df.loc[launcher, "DurChildNs"] = child_ns
        df.loc[launcher, "DurNonChildNs"] = df.at[launcher, "DurNs"] - child_ns
    for name, o, c in zip(df["Name"].to_numpy()[main], df["DurNonChildNs"].to_numpy()[main],
                          df["DurChildNs"].to_numpy()[main]):
        totals[name] += (o, c)
    out = pd.DataFrame.from_dict(dict(totals), orient="index",
                                 columns=["DurNonChildNs", "DurChildNs"])
    return out.sort_values(by=["DurNonChildNs"], ascending=False)
