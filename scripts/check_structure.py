#!/usr/bin/env python3
"""Checks that every include in src/jaxprof keeps to the layers of src/jaxprof/layers.txt, and
names each one that does not: the file, the line, the layer it runs to and what its own layer may
use. The build enforces the same table (each layer's library sees only the folders it may
include); this check says why in one line where a compiler says "no such file".

Also: every folder of src/jaxprof is a layer of the table, and no source file is longer than
800 lines (a file past that is cut along its seams, not grown). Exit 1 when something is wrong.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "jaxprof"
MAX_LINES = 800
INCLUDE = re.compile(r'^\s*#\s*include\s+"jaxprof/([a-z_]+)/[^"]*"', re.M)


def read_layers() -> dict[str, set[str]]:
    """Layer -> every layer it may include (itself and, transitively, what it uses)."""
    seen: dict[str, set[str]] = {}
    for n, line in enumerate((SRC / "layers.txt").read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, uses = line.partition(":")
        allowed = {name}
        for dep in uses.split():
            if dep not in seen:
                sys.exit(f"src/jaxprof/layers.txt:{n}: {name} uses {dep}, which is not listed above it")
            allowed |= seen[dep]
        seen[name] = allowed
    return seen


def main() -> int:
    layers = read_layers()
    problems = []
    for d in sorted(p for p in SRC.iterdir() if p.is_dir()):
        if d.name not in layers:
            problems.append(f"src/jaxprof/{d.name}/: a folder that is no layer of src/jaxprof/layers.txt")
    for f in sorted(SRC.rglob("*")):
        if f.suffix not in (".h", ".cc") or not f.is_file():
            continue
        rel = f.relative_to(ROOT)
        parts = f.relative_to(SRC).parts
        layer = parts[0] if len(parts) > 1 else None
        text = f.read_text(errors="replace")
        lines = text.count("\n")
        if lines > MAX_LINES:
            problems.append(f"{rel}: {lines} lines (at most {MAX_LINES}: split it along its seams)")
        if layer not in layers:
            if layer is None:
                problems.append(f"{rel}: a file outside every layer")
            continue
        for m in INCLUDE.finditer(text):
            to = m.group(1)
            if to not in layers[layer]:
                line = text.count("\n", 0, m.start()) + 1
                may = ", ".join(sorted(layers[layer] - {layer})) or "nothing"
                problems.append(f"{rel}:{line}: {layer} includes {to} "
                                f"({layer} may use {may}; src/jaxprof/layers.txt)")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s)")
        return 1
    print(f"check_layers: {len(layers)} layers, every include keeps to them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
