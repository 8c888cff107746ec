#!/usr/bin/env python3
"""Write docs/compatibility.md from bench/compat/jax_versions.json (made by bench/jax_versions.py),
bench/compat/sources.json (the other sources the tests read, with the tests that check them) and
bench/compat/known_differences.json (why some checks fail, with the condition each applies under).

usage: scripts/gen_compatibility.py [--check]

--check writes nothing and exits 1 when docs/compatibility.md is not what this script makes
(tests/python/formats/test_compatibility_matrix.py runs it so). Exits 2 when a test named in
sources.json does not exist.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MATRIX = ROOT / "bench" / "compat" / "jax_versions.json"
SOURCES = ROOT / "bench" / "compat" / "sources.json"
KNOWN = ROOT / "bench" / "compat" / "known_differences.json"
PAGE = ROOT / "docs" / "compatibility.md"
COMMAND = "python3 scripts/gen_compatibility.py"
MEASURE = "python3 bench/jax_versions.py --fixtures"

COLUMNS = (("ops", "ops exact"), ("steps", "steps"), ("modules", "module executions"),
           ("compile", "compile"), ("collectives", "collectives"))
WORD = {"pass": "exact", "absent": "not in capture", "n/a": "n/a", "fail": "**FAIL**"}


def version_key(v: str):
    return tuple(int(p) for p in re.findall(r"\d+", v))


def cell(check: dict | None) -> str:
    if check is None:
        return "not run"
    return WORD[check["status"]]


def figure_cell(name: str, check: dict | None, capture: dict | None = None) -> str:
    """The check's word and, where it passed, its main figure."""
    word = cell(check)
    if not check or check["status"] != "pass":
        return word
    f = check.get("figures", {})
    if name == "ops":
        if capture and capture["op_devices"] == ["/host:CPU"]:
            where = "devices not told apart"
        else:
            where = f"on {f['devices']} device{'s' if f['devices'] != 1 else ''}"
        return f"{word} ({f['op_events']} events, {where})"
    if name == "steps":
        return f"{word} ({f['steps']})"
    if name == "modules":
        return f"{word} ({sum(f['modules'].values())})"
    if name == "compile":
        return f"{word} ({f['compiles']})"
    if name == "collectives":
        kinds = sorted({o["opcode"] for o in f["ops"]})
        return f"{word} ({sum(o['count'] for o in f['ops'])} {'/'.join(kinds)})"
    if name == "chrome_trace":
        return f"{word} ({f['events']} events)"
    if name == "xprof":
        ops = f.get("op_events", "no ops")
        return f"{word} ({f['steps']} steps, {ops}{' events' if isinstance(ops, int) else ''})"
    return word


def hlo_cell(capture: dict | None) -> str:
    if not capture:
        return "unknown"
    n = capture["hlo_proto_modules"]
    return f"yes ({n} modules)" if n else "no"


def line_set(capture: dict) -> str:
    parts = []
    for plane, lines in capture["planes"].items():
        if plane.startswith("/device:"):
            m = re.match(r"(/device:[A-Z]+):", plane)
            plane = (m.group(1) + ":N") if m else plane
        if any(p.startswith(plane + " ") or p == plane for p in parts):
            continue
        parts.append(f"{plane} ({', '.join(lines)})" if lines else plane)
    return "; ".join(parts)


def version_rows(matrix: dict) -> list:
    head = ["JAX", "jaxlib", "extension API", *[t for _, t in COLUMNS], "HLO metadata",
            "Chrome trace = xplane", f"XProf {matrix.get('xprof') or ''} (second reader)".replace(
                "  ", " ")]
    rows = [head, ["---"] * len(head)]
    for v, r in matrix["versions"].items():
        if not r.get("captured"):
            rows.append([v, "", "", f"**not captured** ({r['failed_stage']} failed)"] +
                        [""] * (len(head) - 4))
            continue
        c = r["checks"]
        rows.append([v, r.get("jaxlib", ""), str(r.get("extension_version") or ""),
                     *[figure_cell(n, c.get(n), r.get("capture")) for n, _ in COLUMNS],
                     hlo_cell(r.get("capture")), figure_cell("chrome_trace", c.get("chrome_trace")),
                     figure_cell("xprof", c.get("xprof"))])
    return rows


def table(rows: list) -> list:
    return ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]


def layouts(matrix: dict) -> list:
    """Consecutive versions whose captures have the same planes and lines, as ranges."""
    out, cur = [], None
    for v, r in matrix["versions"].items():
        if not r.get("captured"):
            continue
        key = (line_set(r["capture"]), r["capture"]["op_events"] > 0,
               ", ".join(r["capture"].get("op_event_stats", [])))
        if cur and cur[0] == key:
            cur[2] = v
        else:
            cur = [key, v, v]
            out.append(cur)
    lines = []
    for (layout, has_ops, stats), first, last in out:
        span = first if first == last else f"{first} to {last}"
        ops = f"op events carry {stats}" if has_ops else "no per-op events recorded"
        lines.append(f"- **{span}**: {layout}; {ops}.")
    return lines


def applies(diff: dict, check: str, capture: dict) -> bool:
    """Whether a known difference explains a failed check of a capture (its condition holds)."""
    when = diff["when"]
    if check not in diff["checks"] or not capture:
        return False
    if "op_events" in when and (capture["op_events"] > 0) != when["op_events"]:
        return False
    without = when.get("op_event_stats_without")
    return not (without and without in capture.get("op_event_stats", []))


def explanation(known: list, check: str, capture: dict) -> str:
    for i, d in enumerate(known):
        if applies(d, check, capture):
            return f" (known difference {i + 1}: {d['title']})"
    return " (**unexplained**)"


def failures(matrix: dict, section: str, known: list) -> list:
    lines = []
    for name, r in matrix.get(section, {}).items():
        if not r.get("captured", True):
            lines.append(f"- {name}: {r['failed_stage']} failed: `{r['error'][-300:].strip()}`"
                         .replace("\n", " "))
            continue
        for check, c in r["checks"].items():
            if c["status"] == "fail":
                why = explanation(known, check, r.get("capture"))
                lines.append(f"- {name}, {check}{why}: `{c['error'][:400].strip()}`"
                             .replace("\n", " "))
    return lines


def known_section(known: list, matrix: dict) -> list:
    out = []
    for i, d in enumerate(known):
        where = [name for section in ("versions", "fixtures")
                 for name, r in matrix.get(section, {}).items()
                 if any(c["status"] == "fail" and applies(d, check, r.get("capture"))
                        for check, c in r.get("checks", {}).items())]
        out += [f"{i + 1}. **{d['title']}** (checks: {', '.join(d['checks'])}; seen in: "
                f"{', '.join(where) or 'none'}). {d['explanation']}"]
    return out


def fixture_rows(matrix: dict) -> list:
    head = ["fixture", "devices", "HLO metadata", *[t for _, t in COLUMNS]]
    rows = [head, ["---"] * len(head)]
    for name, r in matrix.get("fixtures", {}).items():
        cap = r.get("capture") or {}
        devices = sorted({re.sub(r":\d+$", "", d) for d in cap.get("op_devices", [])})
        rows.append([name, f"{len(cap.get('op_devices', []))} x {', '.join(devices)}"
                     if devices else "none", hlo_cell(cap),
                     *[figure_cell(n, r["checks"].get(n), cap) for n, _ in COLUMNS]])
    return rows


def test_exists(ref: str) -> bool:
    path, _, name = ref.partition("::")
    file = ROOT / path
    if not file.is_file():
        return False
    tree = ast.parse(file.read_text())
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def source_rows(sources: dict) -> list:
    figures = sources["figures"]
    head = ["source", "backend", *[t for n, t in COLUMNS if n in figures]]
    rows = [head, ["---"] * len(head)]
    missing = []
    for s in sources["sources"]:
        cells = []
        for f in figures:
            refs = s["tests"].get(f, [])
            missing += [r for r in refs if not test_exists(r)]
            cells.append(", ".join(f"`{Path(r.split('::')[0]).name}::{r.split('::')[1]}`"
                                   for r in refs) or "not tested")
        rows.append([s["source"], s["backend"], *cells])
    if missing:
        print(f"gen_compatibility: tests named in {SOURCES.relative_to(ROOT)} do not exist: "
              f"{missing}", file=sys.stderr)
        sys.exit(2)
    return rows


def render(matrix: dict, sources: dict, known: list) -> str:
    captured = [v for v, r in matrix["versions"].items() if r.get("captured")]
    left_out = [v for v in matrix.get("index_versions", []) if v not in matrix["versions"]]
    fails = failures(matrix, "versions", known)
    out = [
        f"<!-- Generated by `{COMMAND}` from {MATRIX.relative_to(ROOT)} (measured by "
        f"`{MEASURE}`), {SOURCES.relative_to(ROOT)} and {KNOWN.relative_to(ROOT)}: do not edit "
        "by hand. -->",
        "# Compatibility: which captures jaxprof reads, and what it reads from each",
        "",
        "Every cell below was measured, not written by hand. `exact` means jaxprof's figure equals "
        "the independent reader's to the picosecond (the protobuf-based oracles in "
        "`tests/python/`, see `tests/python/compat_checks.py`) and, for the JAX captures, what "
        "the captured program is known to do; `not in capture` means both readers agree the "
        "capture holds no such events; `**FAIL**` is a difference, listed under the table.",
        "",
        "## JAX versions",
        "",
        f"Every JAX release the package index serves for Python {matrix.get('python', '3')} from "
        f"0.4.30 on, each in its own clean venv (`jax[cpu]==V`, pip choosing the jaxlib), ran "
        f"`{matrix.get('capture_script')}`: a 2-layer MLP trained data-parallel over 8 CPU "
        "devices (gradient all-reduce under jit, a shard_map psum), 4 steps under "
        "StepTraceAnnotation, one program compiled inside the trace. Figures in brackets: op "
        "events, steps, module executions, compiles, collective op events and kinds.",
        "",
        f"{len(captured)} versions captured"
        + (f"; not run: {', '.join(left_out)}." if left_out else "; none left out."),
        "",
        *table(version_rows(matrix)),
        "",
    ]
    out += ["Failures:", "", *fails, ""] if fails else ["No check failed.", ""]
    if known:
        out += ["### Known differences", "", *known_section(known, matrix), ""]
    out += ["### Planes and lines by version", "",
            "Consecutive versions whose captures hold the same planes and thread lines (thread "
            "ids dropped):", "", *layouts(matrix), ""]
    if matrix.get("fixtures"):
        ffails = failures(matrix, "fixtures", known)
        out += ["## Other backends: the shared xplane fixtures", "",
                "The same comparisons with the oracles on `../shared/fixtures/xplane` (GPU, TPU "
                "and TensorFlow profiles), without the expectations of the training capture:", "",
                *table(fixture_rows(matrix)), ""]
        out += (["Differences:", "", *ffails, ""] if ffails else ["No comparison failed.", ""])
    out += ["## nsys-jax layouts and Chrome traces", "",
            f"From `{SOURCES.relative_to(ROOT)}`: each figure names the tests of the suite that "
            "compare it with an independent reading (the generator checks that they exist).", "",
            *table(source_rows(sources)), ""]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if docs/compatibility.md differs from what would be written")
    args = ap.parse_args(argv)
    text = render(json.loads(MATRIX.read_text()), json.loads(SOURCES.read_text()),
                  json.loads(KNOWN.read_text())["differences"])
    if args.check:
        if not PAGE.is_file() or PAGE.read_text() != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
