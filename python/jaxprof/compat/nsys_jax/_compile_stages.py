"""The compile frame's ranges of a compile that no single range spans (xplane captures: JAX's
trace, lower and backend-compile stages on the launching thread, XLA's passes and code generation
on its worker threads), as ``jaxprof compile`` counts them."""

from __future__ import annotations

from typing import Any, Dict, List, Set

import numpy as np

# The name of the range the frame adds for each such compile, over its wall time. Its own time
# is what `jaxprof compile` reports as "(between stages)": the launching thread's time in the
# compile outside every stage.
COMPILE_ROOT = "(compile)"


def stage_tree(r: Any, c: Any, names: Set[str], root_id: int,
               new_parent: Dict[int, float]) -> List[int]:
    """The ids of the compile ``c``'s ranges: those that start in its wall time on its host with
    a name among its steps (``names``, from ``compile_passes``), as ``jaxprof compile`` counts
    them. Each goes under its nearest enclosing range among them on its thread; the outermost
    ones of the launching thread under ``root_id``, a worker thread's under the deepest range of
    the launching thread that holds it, else ``root_id``. Sets ``new_parent`` where that differs
    from the range's own parent."""
    end = c.start_ps + c.wall_ps
    inside = np.flatnonzero((r.host == str(c.host)) & (r.start >= c.start_ps) & (r.start < end)
                            & np.isin(r.names, list(names)))
    chosen = {int(r.ids[k]) for k in inside}
    main = [k for k in inside if r.thread[k] == str(c.thread)]
    main_rows = np.array(main, dtype=np.int64)
    for k in inside:
        i = int(r.ids[k])
        # Nearest enclosing chosen range: up the parent links (same thread).
        up = r.parent[k]
        while not np.isnan(up) and int(up) not in chosen:
            up = r.parent[r.row_of[int(up)]]
        if not np.isnan(up):
            parent = float(up)
        elif r.thread[k] == str(c.thread) or not len(main_rows):
            parent = float(root_id)
        else:
            holds = main_rows[(r.start[main_rows] <= r.start[k]) & (r.end[main_rows] >= r.end[k])]
            parent = float(r.ids[holds[np.argmax(r.depth[holds])]]) if len(holds) else \
                float(root_id)
        if not (parent == r.parent[k]):
            new_parent[i] = parent
    return sorted(chosen)
