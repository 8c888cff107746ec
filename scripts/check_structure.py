#!/usr/bin/env python3
"""Checks the shape of the C++ tree, and names each thing that breaks it:

- every include in src/jaxprof keeps to the layers of src/jaxprof/layers.txt (the file, the line,
  the layer it runs to and what its own layer may use). The build enforces the same table (each
  layer's library sees only the folders it may include); this says why in one line where a
  compiler says "no such file";
- every folder of src/jaxprof is a layer of the table;
- no two headers define a class of the same name in the same namespace (the linker would keep
  one class's inline members for both: a crash, not an error);
- no source file (src/, tools/, python/) is longer than 800 lines and no function longer than
  150: past that a file or function is cut along its seams, not grown. Functions are found as
  the code is formatted (.clang-format): a definition starts at the left margin or one
  indentation inside a class and ends at the closing brace at its own indentation.

Exit 1 when something is wrong.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "jaxprof"
MAX_LINES = 800
MAX_FUNCTION_LINES = 150
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


DEFINITION = re.compile(r"^( {0,4})(?!(?:if|for|while|switch|return|else|case|do|namespace|struct|class|"
                        r"enum|union)\b)[A-Za-z_~][\w:<>,\s*&~\[\]]*\(")


def long_functions(path: Path) -> list[str]:
    """The functions of a C++ file longer than MAX_FUNCTION_LINES, as problems."""
    lines = path.read_text(errors="replace").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = DEFINITION.match(lines[i])
        if not m or "=" in lines[i].split("(")[0]:
            i += 1
            continue
        indent, j = m.group(1), i
        while j < len(lines) and j < i + 8 and not lines[j].rstrip().endswith(("{", ";")):
            j += 1
        if j >= len(lines) or not lines[j].rstrip().endswith("{") or \
                lines[j].rstrip().endswith(("= {", "({")):
            i += 1
            continue
        k = j + 1
        while k < len(lines) and not lines[k].startswith(indent + "}"):
            k += 1
        if k - i + 1 > MAX_FUNCTION_LINES:
            name = lines[i].strip()[:60]
            out.append(f"{path.relative_to(ROOT)}:{i + 1}: a function of {k - i + 1} lines "
                       f"(at most {MAX_FUNCTION_LINES}): {name}")
        i = j + 1
    return out


CLASS = re.compile(r"^(?:struct|class) (\w+)(?: final)?\s*(?::[^;{]*)?\{", re.M)
NAMESPACE = re.compile(r"^namespace ([\w:]+) \{", re.M)


def class_clashes(headers: list[Path]) -> list[str]:
    """Classes defined at namespace scope in two headers under one namespace."""
    seen: dict[tuple[str, str], Path] = {}
    out = []
    for h in headers:
        text = h.read_text(errors="replace")
        spaces = [(m.start(), m.group(1)) for m in NAMESPACE.finditer(text)]
        for m in CLASS.finditer(text):
            ns = [name for at, name in spaces if at < m.start()]
            key = (ns[-1] if ns else "", m.group(1))
            if key in seen and seen[key] != h:
                out.append(f"{h.relative_to(ROOT)}: class {key[0]}::{key[1]} is also defined in "
                           f"{seen[key].relative_to(ROOT)} (rename one, or give it a namespace)")
            seen.setdefault(key, h)
    return out


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
    problems += class_clashes(sorted(p for top in ("src", "python") for p in (ROOT / top).rglob("*.h")))
    for top in ("src", "tools", "python"):
        for f in sorted((ROOT / top).rglob("*")):
            if f.suffix not in (".h", ".cc") or not f.is_file():
                continue
            if top != "src":
                lines = f.read_text(errors="replace").count("\n")
                if lines > MAX_LINES:
                    problems.append(f"{f.relative_to(ROOT)}: {lines} lines (at most {MAX_LINES}: "
                                    "split it along its seams)")
            problems += long_functions(f)
    for p in problems:
        print(p)
    if problems:
        print(f"check_structure: {len(problems)} problem(s)")
        return 1
    print(f"check_structure: {len(layers)} layers, every include keeps to them; no file over "
          f"{MAX_LINES} lines, no function over {MAX_FUNCTION_LINES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
