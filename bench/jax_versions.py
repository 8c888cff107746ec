#!/usr/bin/env python3
"""The JAX version compatibility matrix: capture the same training run with every JAX release
the package index serves for this Python from 0.4.30 on, and read each capture with the jaxprof
built in this tree, checked against the independent oracles (tests/python/compat_checks.py).

usage: bench/jax_versions.py [--versions V,V,...] [--jobs N] [--capture-only] [--check-only]
                             [--cache DIR] [--out FILE] [--binary PATH] [--no-xprof]
                             [--fixtures]

1. Versions: `pip index versions jax`, those >= 0.4.30 (or --versions). They are taken in a
   spread order (newest, oldest, then the middle of the widest gap, ...) so that a run cut
   short still covers the range.
2. Per version, under the cache dir (default ~/.cache/jaxprof-jax-versions): a clean venv
   venvs/jax-V with `jax[cpu]==V` (pip picks the jaxlib that jax version requires), kept and
   reused; then tests/data/capture_train_step.py run in it into captures/jax-V/ (log dir and
   info.json with the versions used), kept and reused. At most --jobs (default 2) at once.
   A failure to install or capture is recorded with its last lines of output.
3. Each capture is read with build/jaxprof (and XProf's hlo_stats as a second reader, where
   xprof imports in this interpreter) by compat_checks.check_capture; the results go to
   bench/compat/jax_versions.json (--out), merged with the versions already there, so that
   a partial run adds to the matrix instead of replacing it. --fixtures also runs the same
   comparisons with the oracles on the shared xplane fixtures (GPU, TPU; a few minutes).

scripts/gen_compatibility.py turns that JSON into docs/compatibility.md.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
for _group in ("steps", "timeline", "compile", "formats"):
    sys.path.insert(1, str(ROOT / "tests" / "python" / _group))

CAPTURE_SCRIPT = ROOT / "tests" / "data" / "capture_train_step.py"
DEFAULT_CACHE = Path.home() / ".cache" / "jaxprof-jax-versions"
DEFAULT_OUT = ROOT / "bench" / "compat" / "jax_versions.json"
OLDEST = (0, 4, 30)
INSTALL_TIMEOUT_S = 1200
CAPTURE_TIMEOUT_S = 600


def version_key(v: str):
    return tuple(int(p) for p in re.findall(r"\d+", v))


def index_versions() -> list:
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "jax"],
                          capture_output=True, text=True, timeout=120)
    m = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if proc.returncode != 0 or not m:
        raise SystemExit(f"jax_versions: pip index versions jax failed: {proc.stderr[-500:]}")
    found = [v.strip() for v in m.group(1).split(",")]
    return sorted((v for v in found if version_key(v)[:3] >= OLDEST), key=version_key)


def spread_order(versions: list) -> list:
    """Newest, oldest, then repeatedly the middle of the widest run not yet taken."""
    if len(versions) <= 2:
        return list(reversed(versions))
    taken = {len(versions) - 1, 0}
    order = [versions[-1], versions[0]]
    while len(taken) < len(versions):
        ends = sorted(taken)
        lo, hi = max(zip(ends, ends[1:]), key=lambda p: (p[1] - p[0], p[1]))
        mid = (lo + hi) // 2
        taken.add(mid)
        order.append(versions[mid])
    return order


def _tail(text: str, n: int = 1500) -> str:
    return text[-n:].strip()


def install(cache: Path, version: str) -> dict:
    venv = cache / "venvs" / f"jax-{version}"
    done = venv / "installed.ok"
    if done.is_file():
        return {"ok": True, "python": str(venv / "bin" / "python"), "reused": True}
    if venv.exists():
        shutil.rmtree(venv)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        return {"ok": False, "error": "venv: " + _tail(proc.stderr)}
    py = venv / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           f"jax[cpu]=={version}"], capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT_S)
    if proc.returncode != 0:
        return {"ok": False, "error": "pip install: " + _tail(proc.stderr + proc.stdout)}
    done.write_text(f"jax[cpu]=={version}\n")
    return {"ok": True, "python": str(py), "reused": False,
            "install_s": round(time.monotonic() - t0, 1)}


def _clean_env() -> dict:
    """The environment for a venv's interpreter: nothing of this one's paths or XLA flags."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XLA_FLAGS")}


def capture(cache: Path, version: str, python: str) -> dict:
    out = cache / "captures" / f"jax-{version}"
    info = out / "info.json"
    if info.is_file():
        return {"ok": True, "dir": str(out), "reused": True}
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = _clean_env()
    t0 = time.monotonic()
    tmp_info = out / "info.json.tmp"
    proc = subprocess.run([python, str(CAPTURE_SCRIPT), str(out / "log"), "--info",
                           str(tmp_info)], capture_output=True, text=True, env=env,
                          timeout=CAPTURE_TIMEOUT_S, cwd=str(out))
    if proc.returncode != 0:
        (out / "capture.err").write_text(proc.stderr)
        return {"ok": False, "error": "capture: " + _tail(proc.stderr)}
    tmp_info.rename(info)
    return {"ok": True, "dir": str(out), "reused": False,
            "capture_s": round(time.monotonic() - t0, 1)}


def prepare(cache: Path, version: str) -> dict:
    """Install and capture one version; the result says where the capture is or what failed."""
    t0 = time.monotonic()
    inst = install(cache, version)
    if not inst["ok"]:
        res = {"version": version, "stage": "install", **inst}
    else:
        cap = capture(cache, version, inst["python"])
        res = {"version": version, "stage": "capture" if not cap["ok"] else "done", **cap}
    res["seconds"] = round(time.monotonic() - t0, 1)
    print(f"[{time.strftime('%H:%M:%S')}] jax {version}: {res['stage']} "
          f"({res['seconds']} s){'' if res['ok'] else ': ' + res['error'][-300:]}", flush=True)
    (cache / "status").mkdir(parents=True, exist_ok=True)
    (cache / "status" / f"jax-{version}.json").write_text(json.dumps(res, indent=1))
    return res


def check_fixtures(matrix: dict, binary: Path) -> None:
    """The shared xplane fixtures (GPU, TPU, TensorFlow) through the same comparisons with the
    oracles, less what is specific to the training capture."""
    import compat_checks as cc
    import ops_check as oc

    matrix["fixtures"] = {}
    for path in oc.fixture_profiles():
        t0 = time.monotonic()
        result = cc.check_capture(binary, path, xprof=False, program=False)
        matrix["fixtures"][path.name] = result
        print(f"{path.name}: {'PASS' if result['passed'] else 'FAIL'} "
              f"({time.monotonic() - t0:.1f} s) "
              f"{[c for c, r in result['checks'].items() if not r['passed']]}", flush=True)


def check_all(cache: Path, versions: list, out: Path, binary: Path, xprof: bool,
              fixtures: bool, available: list) -> None:
    import compat_checks as cc

    matrix = json.loads(out.read_text()) if out.is_file() else {"versions": {}}
    if fixtures:
        check_fixtures(matrix, binary)
    for version in versions:
        status_file = cache / "status" / f"jax-{version}.json"
        if not status_file.is_file():
            continue  # not attempted in this cache: whatever the JSON holds stays
        status = json.loads(status_file.read_text())
        if not status["ok"]:
            matrix["versions"][version] = {"jax": version, "captured": False,
                                           "failed_stage": status["stage"],
                                           "error": status["error"][-600:]}
            continue
        cap = Path(status["dir"])
        python = cache / "venvs" / f"jax-{version}" / "bin" / "python"
        if python.is_file():  # what the venv holds, in this script's current terms
            subprocess.run([str(python), str(CAPTURE_SCRIPT), "--info", str(cap / "info.json")],
                           capture_output=True, timeout=120, env=_clean_env())
        info = json.loads((cap / "info.json").read_text())
        t0 = time.monotonic()
        result = cc.check_capture(binary, cap / "log", xprof=xprof)
        result = {**info, "captured": True, **result}
        matrix["versions"][version] = result
        print(f"jax {version}: {'PASS' if result['passed'] else 'FAIL'} "
              f"({time.monotonic() - t0:.1f} s) "
              f"{[c for c, r in result['checks'].items() if not r['passed']]}", flush=True)
    matrix["versions"] = dict(sorted(matrix["versions"].items(), key=lambda kv: version_key(kv[0])))
    if available:
        matrix["index_versions"] = available
    matrix["python"] = "%d.%d" % sys.version_info[:2]
    matrix["capture_script"] = str(CAPTURE_SCRIPT.relative_to(ROOT))
    matrix["xprof"] = cc.xprof_version() if xprof else None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(matrix, indent=1, sort_keys=False) + "\n")
    print(f"wrote {out}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", help="comma-separated jax versions (default: the index's)")
    ap.add_argument("--jobs", type=int, default=2, help="installs at once (default 2)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--binary", type=Path, default=ROOT / "build" / "jaxprof")
    ap.add_argument("--capture-only", action="store_true")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--no-xprof", action="store_true", help="skip XProf as the second reader")
    ap.add_argument("--fixtures", action="store_true",
                    help="also run the comparisons on the shared xplane fixtures (minutes)")
    args = ap.parse_args(argv)

    try:
        available = index_versions()
    except SystemExit as e:  # offline: the list of the last run, when there is one
        if not args.out.is_file() or "index_versions" not in json.loads(args.out.read_text()):
            raise
        print(f"{e}; using the versions listed in {args.out}", file=sys.stderr)
        available = json.loads(args.out.read_text())["index_versions"]
    versions = args.versions.split(",") if args.versions else available
    order = spread_order(sorted(versions, key=version_key))
    print("versions, in the order taken:", " ".join(order), flush=True)
    if not args.check_only:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(lambda v: prepare(args.cache, v), order))
    if not args.capture_only:
        if not args.binary.is_file():
            raise SystemExit(f"jax_versions: no jaxprof binary at {args.binary}: build it first")
        check_all(args.cache, sorted(versions, key=version_key), args.out, args.binary,
                  not args.no_xprof, args.fixtures, available)
    return 0


if __name__ == "__main__":
    sys.exit(main())
