"""Shared helpers for the `jaxprof ops` tests: where things are, how to run the
CLI, and how to compare its JSON with the oracle (exact picoseconds)."""
from __future__ import annotations

import functools
import json
import math
import os
import subprocess
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import xplane_oracle as xo

ROOT = Path(__file__).resolve().parents[2]
SHARED_FIXTURES = Path(os.environ.get("JAXPROF_SHARED_FIXTURES",
                                      ROOT.parent / "shared" / "fixtures"))
# ../shared/tools beside the fixtures (scale_xplane.py, which bench/make_hosts.py uses).
SHARED_TOOLS = SHARED_FIXTURES.parent / "tools"
XPLANE_FIXTURES = SHARED_FIXTURES / "xplane"
BAD_FIXTURES = SHARED_FIXTURES / "bad"
DATA_DIR = ROOT / "tests" / "data"
# The project's own CPU captures (made by tests/data/capture_cpu_profiles.py).
DATA_PROFILES = ("jax_cpu_8dev", "jax_cpu_matmul", "jax_cpu_matmul.xplane.pb.gz")

CLI_TIMEOUT_S = 60


def make_hosts(out: Path, binary, *args: str, timeout: int = 600) -> Path:
    """A run directory of hosts made by bench/make_hosts.py (ARGS: its options) under `out`;
    skips the test when ../shared/tools/scale_xplane.py, which it needs, is not there."""
    import pytest
    import sys
    if not (SHARED_TOOLS / "scale_xplane.py").exists():
        pytest.skip(f"bench/make_hosts.py needs {SHARED_TOOLS}/scale_xplane.py")
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_hosts.py"), str(out), *args,
                    "--jaxprof", str(binary)], check=True, capture_output=True, timeout=timeout)
    return out


def default_binary() -> Path:
    env = os.environ.get("JAXPROF_BIN")
    return Path(env) if env else ROOT / "build" / "jaxprof"


def fixture_profiles() -> List[Path]:
    if not XPLANE_FIXTURES.is_dir():
        return []
    return sorted(p for p in XPLANE_FIXTURES.iterdir()
                  if p.name.endswith((".xplane.pb", ".xplane.pb.gz")))


def profile_cases():
    """(id, path) for every profile the comparison runs on. Paths may not exist
    (shared fixtures absent, captures not made yet); tests skip those."""
    cases = [(p.name.split(".", 1)[0], p) for p in fixture_profiles()]
    if not cases:
        cases = [("shared-fixtures-missing", XPLANE_FIXTURES)]
    cases += [("data-" + n.replace(".", "-"), DATA_DIR / n) for n in DATA_PROFILES]
    return cases


def require_profile(path: Path) -> Path:
    """Skip the calling test when a profile has not been made or provided."""
    import pytest
    if not path.exists():
        if path.parent == DATA_DIR:
            pytest.skip(f"{path.relative_to(ROOT)} does not exist yet: "
                        f"run python3 tests/data/capture_cpu_profiles.py")
        pytest.skip(f"profile {path} not available")
    return path


@functools.lru_cache(maxsize=None)
def oracle_devices(path: str):
    return xo.analyze_path(path)


def run_cli(binary: Path, args: Sequence[str], timeout: float = CLI_TIMEOUT_S,
            cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True,
                          timeout=timeout, cwd=str(cwd or ROOT))


# The oracles count every event: the steady state (docs/steady-state.md) is tested on its own.
EVERYTHING = ("--include-autotuning", "--include-warmup")


def run_ops_json(binary: Path, path, extra: Sequence[str] = ()) -> Dict[str, Any]:
    args = ["ops", str(path), "--format", "json", *EVERYTHING, *extra]
    proc = run_cli(binary, args)
    assert proc.returncode == 0, (
        f"jaxprof {' '.join(map(str, args))} exited {proc.returncode}\n"
        f"stderr: {proc.stderr.decode(errors='replace')[-2000:]}")
    return parse_json(proc.stdout)


def api_view(command: str, data: Dict[str, Any]) -> Dict[str, Any]:
    """The CLI's JSON less its notes of what it read (`input`) and set apart (`set_apart`):
    Profile.input and Profile.set_apart() give those in Python. Summary keeps `set_apart`: it is
    one of its own figures there, in both."""
    data.pop("input", None)
    if command != "summary":
        data.pop("set_apart", None)
    return data


def parse_json(data: bytes) -> Dict[str, Any]:
    # Decimal keeps the printed value exactly; ints stay Python ints (uint64 safe).
    return json.loads(data.decode("utf-8"), parse_float=Decimal)


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

NS_ABS_TOL = Fraction(1, 10**6)       # 1e-6 ns
REL_TOL = Fraction(1, 10**9)


def _exact(v: Any) -> Fraction:
    if isinstance(v, bool) or v is None:
        raise AssertionError(f"expected a number, got {v!r}")
    if isinstance(v, (int, Decimal)):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(v)
    raise AssertionError(f"expected a number, got {v!r}")


def _ulp(x: Fraction) -> Fraction:
    return Fraction(math.ulp(float(abs(x)) or 0.0))


def check_ns(what: str, got: Any, ps: int) -> None:
    """A time in ns printed for an exact picosecond value: within 1e-6 ns, or
    (for values too large for that in a double) within one double ulp."""
    want = Fraction(ps, 1000)
    tol = max(NS_ABS_TOL, _ulp(want))
    g = _exact(got)
    assert abs(g - want) <= tol, f"{what}: got {got}, want {float(want)!r} ({ps} ps)"


def check_rel(what: str, got: Any, want: Fraction, abs_floor: Fraction) -> None:
    g = _exact(got)
    tol = max(REL_TOL * abs(want), abs_floor)
    assert abs(g - want) <= tol, f"{what}: got {got}, want {float(want)!r}"


def _sqrt_fraction(x: Fraction) -> Fraction:
    """Square root with 50 significant digits (far below any tolerance used)."""
    with localcontext() as ctx:
        ctx.prec = 50
        return Fraction((Decimal(x.numerator) / Decimal(x.denominator)).sqrt())


def group_identity(group_by: str, g: Dict[str, Any]):
    if group_by == "hlo-op":
        return (g.get("module"), g["name"])
    if group_by == "module":
        return (g["name"], g.get("program_id"))
    return (g["name"],)


def oracle_identity(group_by: str, g: xo.Group):
    if group_by == "hlo-op":
        return (g.module, g.name)
    if group_by == "module":
        return (g.name, g.program_id)
    return (g.name,)


def check_group(where: str, group_by: str, got: Dict[str, Any], want: xo.Group,
                busy_ps: int) -> None:
    for key in ("name", "count", "total_ns", "self_ns", "mean_ns", "min_ns", "max_ns",
                "std_ns", "share"):
        assert key in got, f"{where}: key {key!r} missing in {sorted(got)}"
    assert got["name"] == want.name, f"{where}: name {got['name']!r} != {want.name!r}"
    assert isinstance(got["count"], int) and got["count"] == want.count, \
        f"{where}: count {got['count']} != {want.count}"
    check_ns(f"{where}: total_ns", got["total_ns"], want.total_ps)
    check_ns(f"{where}: self_ns", got["self_ns"], want.self_ps)
    check_ns(f"{where}: min_ns", got["min_ns"], want.min_ps)
    check_ns(f"{where}: max_ns", got["max_ns"], want.max_ps)
    mean = Fraction(want.total_ps, want.count * 1000)
    check_rel(f"{where}: mean_ns", got["mean_ns"], mean, Fraction(1, 10**9))
    std = _sqrt_fraction(want.variance_ps2()) / 1000
    # relative 1e-9; plus what a double-precision computation can lose to the
    # mean's magnitude (1e-12 of the mean) so a tiny spread is not over-judged
    check_rel(f"{where}: std_ns", got["std_ns"], std, Fraction(1, 10**9) + mean / 10**12)
    if busy_ps:
        # A group's self time can pass its device's busy time where lines of one device overlap
        # (events counted more than once): the share is then shown as 100% with a warning.
        check_rel(f"{where}: share", got["share"], min(Fraction(want.self_ps, busy_ps), 1),
                  Fraction(1, 10**12))
    if group_by == "hlo-op":
        assert "module" in got, f"{where}: hlo-op group without 'module'"
        assert got["module"] == want.module, f"{where}: module {got['module']!r} != {want.module!r}"
    if group_by == "module":
        assert "program_id" in got, f"{where}: module group without 'program_id'"
        assert got["program_id"] == want.program_id, \
            f"{where}: program_id {got['program_id']!r} != {want.program_id!r}"


def compare_ops(got: Dict[str, Any], want: List[Dict[str, Any]], group_by: str,
                top: Optional[int] = None, label: str = "") -> None:
    """Compare the CLI's JSON with the oracle's result (from xo.ops(); if `top`
    was given, `want` must be computed WITHOUT top: ties at the cut are then
    judged fairly)."""
    assert isinstance(got, dict) and "devices" in got, f"{label}: no 'devices' in JSON"
    gdevs = got["devices"]
    assert [d.get("device") for d in gdevs] == [d["device"] for d in want], \
        f"{label}: devices {[d.get('device') for d in gdevs]} != {[d['device'] for d in want]}"
    for gd, wd in zip(gdevs, want):
        where = f"{label} {wd['device']}"
        assert gd.get("host") == wd["host"], f"{where}: host {gd.get('host')!r} != {wd['host']!r}"
        check_ns(f"{where}: busy_ns", gd.get("busy_ns"), wd["busy_ps"])
        check_ns(f"{where}: span_ns", gd.get("span_ns"), wd["span_ps"])
        groups = gd.get("groups")
        assert isinstance(groups, list), f"{where}: 'groups' is not a list"
        wgroups: List[xo.Group] = wd["groups"]
        by_id = {oracle_identity(group_by, g): g for g in wgroups}
        expected_len = len(wgroups) if top is None else min(top, len(wgroups))
        got_ids = [group_identity(group_by, g) for g in groups]
        assert len(set(got_ids)) == len(got_ids), f"{where}: duplicate groups in output"
        missing = [i for i in got_ids if i not in by_id]
        assert not missing, f"{where}: groups the oracle does not have: {missing[:5]}"
        if len(groups) != expected_len:
            extra = sorted(set(by_id) - set(got_ids), key=str)[:5]
            raise AssertionError(f"{where}: {len(groups)} groups, want {expected_len}; "
                                 f"e.g. missing {extra}")
        for i, g in enumerate(groups):
            check_group(f"{where} group #{i} {got_ids[i]}", group_by, g, by_id[got_ids[i]],
                        wd["busy_ps"])
        # order: total desc, then name asc (exact totals from the oracle)
        keys = [(-by_id[i].total_ps, by_id[i].name) for i in got_ids]
        for i in range(1, len(keys)):
            assert keys[i - 1] <= keys[i], (
                f"{where}: groups #{i - 1} {got_ids[i - 1]} and #{i} {got_ids[i]} out of order")
        # with --top: the kept groups are the first N of the sorted list
        # (members of a tie of equal total and name are interchangeable)
        want_keys = [(-g.total_ps, g.name) for g in wgroups][:expected_len]
        assert keys == want_keys, f"{where}: kept groups differ from the oracle's first {expected_len}"
