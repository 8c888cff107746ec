#!/usr/bin/env python3
"""Runs two builds of the jaxprof command over the same inputs and says where their outputs
differ: every command, in every output format, on every fixture and bundled capture (and on any
extra paths given). A restructuring or an optimisation that must not change what users see is
checked with it:

    bench/compare_builds.py BASE/jaxprof NEW/jaxprof [--inputs PATH ...] [--jobs N]

Standard output, the exit code and standard error must be byte-identical; files a command writes
(report, export, flame SVG, partial) are compared too. Exit 1 when anything differs.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures"

# (arguments after the input, formats it is run in); {out} is a file the command writes.
COMMANDS = [
    (["summary"], True), (["info"], True), (["ops"], True),
    (["ops", "--group-by", "kernel"], True), (["ops", "--group-by", "module"], True),
    (["ops", "--group-by", "hlo-op"], True), (["ops", "--group-by", "category"], True),
    (["ops", "--include-warmup", "--include-autotuning"], True),
    (["timeline"], True), (["modules"], True), (["collectives"], True),
    (["collectives", "--instances"], True), (["kernels"], True), (["compile"], True),
    (["roofline"], True), (["memory"], True), (["hosts"], True), (["flame"], True),
    (["flame", "--by", "module", "--idle"], True),
    (["flame", "-o", "{out}.svg"], False), (["flame", "--speedscope", "{out}.json"], False),
    (["report", "-o", "{out}.html"], False), (["export", "--perfetto", "{out}.json"], False),
    (["export", "--perfetto", "{out}.json.gz"], False),
    (["partial", "-o", "{out}.partial"], False),
]
FORMATS = ["table", "json", "csv"]


def default_inputs() -> list[str]:
    out = [str(ROOT / "tests/data/jax_cpu_8dev"), str(ROOT / "tests/data/jax_cpu_matmul"),
           str(ROOT / "tests/data/jax_cpu_matmul.xplane.pb.gz"),
           str(ROOT / "tests/data/jax_cpu_8dev/plugins/profile/session/vm.trace.json.gz")]
    for sub in ("xplane", "nsys-jax", "bad"):
        d = FIXTURES / sub
        if d.is_dir():
            out += sorted(str(p) for p in d.iterdir()
                          if p.name.endswith((".xplane.pb", ".zip")))
    return out


def run(binary: str, args: list[str], workdir: str) -> tuple:
    out = os.path.join(workdir, "out")
    argv = [binary] + [a.replace("{out}", out) for a in args]
    p = subprocess.run(argv, capture_output=True, timeout=600, cwd=workdir,
                       env={**os.environ, "COLUMNS": "120"})
    files = {}
    for f in sorted(Path(workdir).iterdir()):
        if f.is_file():
            files[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()
            f.unlink()
        elif f.is_dir():
            for g in sorted(f.rglob("*")):
                if g.is_file():
                    files[str(g.relative_to(workdir))] = hashlib.sha256(g.read_bytes()).hexdigest()
            subprocess.run(["rm", "-rf", str(f)])
    return p.returncode, p.stdout, p.stderr, files


def case(base: str, new: str, args: list[str]) -> str | None:
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        rb, ob, eb, fb = run(base, args, a)
        rn, on, en, fn = run(new, args, b)
    # Temporary folders appear in messages about written files: compare with them named alike.
    eb, en = eb.replace(a.encode(), b"TMP"), en.replace(b.encode(), b"TMP")
    ob, on = ob.replace(a.encode(), b"TMP"), on.replace(b.encode(), b"TMP")
    what = []
    if rb == rn and rb != 0 and args[0] in ("flame", "report", "export", "partial") and \
            "bad" not in args[1]:
        what.append(f"both builds exit {rb}: the case tests nothing")
    if rb != rn:
        what.append(f"exit {rb} -> {rn}")
    if ob != on:
        what.append("stdout")
    if eb != en:
        what.append("stderr")
    if fb != fn:
        what.append("written files")
    return None if not what else f"{' '.join(args)}: {', '.join(what)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--inputs", nargs="*", help="paths to read (default: fixtures and bundled)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    a.base, a.new = os.path.abspath(a.base), os.path.abspath(a.new)
    inputs = a.inputs or default_inputs()
    cases = []
    for path in inputs:
        for cmd, formatted in COMMANDS:
            for fmt in (FORMATS if formatted else [None]):
                args = [cmd[0], path] + cmd[1:] + (["--format", fmt] if fmt else [])
                cases.append(args)
    # diff and check read two inputs.
    pairs = list(zip(inputs, inputs[1:]))[:6]
    for x, y in pairs:
        for fmt in FORMATS:
            cases.append(["diff", x, y, "--format", fmt])
        cases.append(["check", x, y, "--max-regression", "5%"])
    differ = 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for res in ex.map(lambda c: case(a.base, a.new, c), cases):
            if res:
                differ += 1
                print("DIFFERS", res)
    print(f"{len(cases)} runs, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
