"""jaxprof.Profiler.get_events_from_plane_ps against an independent computation over the protobuf
oracle (tests/python/xplane_oracle.py): every key, union time and occurrence count on every plane
of the shared fixtures and of the bundled captures, with and without a prefix, a minimum
duration, an event cap and a child regex. The rules are those docs/python.md and the ejkernel
table of docs/migrating.md give for jaxprof.Profiler."""
from __future__ import annotations

import bisect
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import ops_check
from xplane_oracle import _PlaneStats, _merged_lines, load_xspace, union_length

jaxprof = pytest.importorskip("jaxprof", reason="the jaxprof package is not installed (pip install .)")

FIXTURES = sorted((ops_check.SHARED_FIXTURES / "xplane").glob("*.xplane.pb"))
CAPTURES = sorted((ops_check.ROOT / "tests" / "data").glob("**/*.xplane.pb*"))
PROFILES = FIXTURES + CAPTURES

# (prefix, child regex, min duration in ps, max events)
VARIANTS = [
    ("", None, 0, 0),
    ("jit_", None, 0, 0),
    ("", None, 1_000_000, 0),
    ("", None, 0, 777),
    ("", r"fusion|dot|conv|Thunk|copy|all-reduce|Eigen", 0, 0),
    ("jit_", r"^end: |fusion", 1000, 5000),
]


def _text(v) -> str:
    if v is None:
        return "None"
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    assert not isinstance(v, float), "a float key stat: extend the oracle's formatting"
    return str(v)


class _Key:
    """The documented key of an event: its own stats, then its metadata's for the gaps when
    hlo_module or program_id is missing."""

    def __init__(self, plane) -> None:
        self.stats = _PlaneStats(plane)
        self.names = {"hlo_module", "program_id", "run_id", "scope_range_id"}

    def __call__(self, ev) -> str:
        own = {k: v for k, v in self.stats._first_by_name(ev.stats).items() if k in self.names}
        if "hlo_module" not in own or "program_id" not in own:
            for k, v in self.stats.metadata_stats(ev.metadata_id).items():
                if k in self.names and k not in own:
                    own[k] = v
        md = self.stats.event_md.get(ev.metadata_id)
        module = own.get("hlo_module")
        name = _text(module) if isinstance(module, (str, bytes)) else (md.name if md else "")
        program = own["program_id"] if "program_id" in own else own.get("run_id")
        return f"{name}({_text(program)}-{_text(own.get('scope_range_id'))})"


def oracle(plane, prefix: str, regex: Optional[str], min_ps: int,
           cap: int) -> Dict[str, Tuple[int, int]]:
    key_of = _Key(plane)
    # Events of each merged line in start order (longer first on ties, else file order), lines in
    # file order; only events long enough, up to the cap.
    cands: List[Tuple[int, int, str]] = []
    for _lid, xlines in _merged_lines(plane):
        evs = [(xl.timestamp_ns * 1000 + ev.offset_ps, ev.duration_ps, i, ev)
               for xl in xlines for i, ev in enumerate(xl.events)]
        evs = [e for e in evs if e[1] >= min_ps]
        for start, dur, _i, ev in sorted(evs, key=lambda e: (e[0], -e[1])):
            if cap and len(cands) >= cap:
                break
            cands.append((start, start + dur, key_of(ev)))
        if cap and len(cands) >= cap:
            break
    spans: Dict[str, List[Tuple[int, int]]] = {}
    count: Dict[str, int] = {}
    if regex is None:
        for s, e, k in cands:
            if k.startswith(prefix):
                spans.setdefault(k, []).append((s, e))
                count[k] = count.get(k, 0) + 1
    else:
        rx = re.compile(regex)
        order = sorted(range(len(cands)), key=lambda i: cands[i][0])
        starts = [cands[i][0] for i in order]
        for pos, i in enumerate(order):
            s, e, k = cands[i]
            if not k.startswith(prefix):
                continue
            count[k] = count.get(k, 0) + 1
            out = spans.setdefault(k, [])
            lo, hi = bisect.bisect_left(starts, s), bisect.bisect_right(starts, e)
            for j in order[lo:hi]:
                cs, ce, ck = cands[j]
                if j != i and ck != k and ce <= e and rx.search(ck):
                    out.append((cs, ce))
    return {k: (union_length(v), count[k]) for k, v in spans.items()}


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_get_events_from_plane_matches_oracle(path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"{path} not found")
    space = load_xspace(str(path))
    prof = jaxprof.Profiler.parse_profile_from_bytes(path.read_bytes())
    assert [p.name for p in prof.planes] == [p.name for p in space.planes]
    checked = 0
    for idx, plane in enumerate(space.planes):
        for prefix, regex, min_ps, cap in VARIANTS:
            p = jaxprof.Profiler(prefix_filter=prefix, event_filter_regex=regex,
                                 min_duration_ns=min_ps / 1000, max_events_per_profile=cap or None)
            want = oracle(plane, prefix, regex, min_ps, cap)
            got = p.get_events_from_plane_ps(prof, idx)
            assert got == {k: t for k, (t, _n) in want.items()}, (path.name, plane.name, prefix,
                                                                  regex, min_ps, cap)
            # The binding also returns occurrence counts; big planes are read by several threads,
            # so force 1 to 7 readers here (these planes are small).
            for threads in (1, 2, 3, 7):
                timed = prof._core.plane_timing(idx, prefix, regex or "", min_ps, cap, threads)
                assert {k: (t, n) for k, t, n in timed} == want, (path.name, plane.name, threads)
                assert [k for k, _t, _n in timed] == list(got), "keys in first-start order"
            checked += len(want)
    assert checked > 0
