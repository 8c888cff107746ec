"""``display_flamegraph``: weighted stacks as jaxprof's interactive SVG flamegraph."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from ... import _core


def display_flamegraph(data: Dict[Iterable[Any], float], title: str = "flamegraph",
                       filename: str = "flamegraph.svg", width: int = 1200) -> Optional[Any]:
    """Writes ``data`` (``{stack: nanoseconds}``, each stack outermost frame first) as an SVG
    flamegraph to ``filename`` and returns it for display in a notebook (an IPython SVG) when
    IPython is there, else None."""
    stacks = [[str(frame) for frame in stack] for stack in data]
    weights = [float(w) * 1000.0 for w in data.values()]  # frames show times from picoseconds
    svg = _core.flame_svg_of_stacks(stacks, weights, str(title), int(width))
    with open(filename, "w", encoding="utf-8") as f:
        f.write(svg)
    try:
        from IPython.display import SVG
    except ImportError:
        return None
    return SVG(filename=filename)
