"""Timing candidate implementations from device events: compile each once, run them interleaved
in shuffled order inside profiler traces, read each run's device time from the profile (C++
``autotune_report``), and repeat until every median is known well enough or time runs out."""

from __future__ import annotations

import contextlib
import html
import itertools
import json
import math
import random
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .. import _core
from .._results import Result

__all__ = ["time_candidates", "TimingResult", "CandidateTiming", "expand_grid"]

PATTERN = r"autotune_fn_(\d+)"
_DEFAULT_RESAMPLES = 1000


def expand_grid(grid: Mapping[str, Sequence[Any]]) -> List[Dict[str, Any]]:
    """The cartesian product of ``{name: values}`` as a list of config dicts, in order (the
    last name varies fastest)."""
    names = list(grid)
    for n in names:
        if isinstance(grid[n], (str, bytes)) or not isinstance(grid[n], Sequence):
            raise TypeError(f"grid values must be a sequence (list or tuple): {n}={grid[n]!r}")
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


@dataclass
class CandidateTiming:
    """One candidate: its configuration, every sample (ns) and their statistics, or why it has
    none (``error``: the compile or first run failed).

    ``samples_ns`` are device busy times (union of the run's op intervals) with ``timing ==
    "device"``, wall-clock times of call + ``block_until_ready`` with ``"wall"``;
    ``span_samples_ns`` the runs' device spans (first op start to last op end);
    ``wall_samples_ns`` the wall clock of every timed run (inflated by the profiler when timing
    from device events). ``ci95_ns`` is the 95% bootstrap interval of the median.
    """

    index: int
    config: Any
    samples_ns: List[float] = field(default_factory=list)
    span_samples_ns: List[float] = field(default_factory=list)
    wall_samples_ns: List[float] = field(default_factory=list)
    median_ns: float = math.nan
    mean_ns: float = math.nan
    mad_ns: float = math.nan
    ci95_ns: Tuple[float, float] = (math.nan, math.nan)
    names: List[str] = field(default_factory=list)
    compile_s: float = 0.0
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples_ns)

    @property
    def runs(self) -> int:
        return len(self.samples_ns)

    @property
    def rel_precision(self) -> float:
        """Half the width of the median's 95% interval over the median."""
        if not self.samples_ns or not self.median_ns:
            return math.inf
        return (self.ci95_ns[1] - self.ci95_ns[0]) / 2.0 / self.median_ns


class TimingResult(Result):
    """What :func:`time_candidates` measured.

    ``candidates`` in input order; ``ranked`` fastest first (failed ones last); ``winner`` and
    ``runner_up`` (or None); ``significant`` when the winner's 95% interval ends below the
    runner-up's or a one-sided Mann-Whitney test gives p < 0.05 (``p_value``, ``ci_disjoint``,
    ``speedup`` = runner-up median / winner median). ``timing`` is ``"device"`` (samples from
    profiler device events) or ``"wall"`` (wall clock, said in ``warnings`` when it was a
    fallback). ``precision_reached`` tells whether every timed candidate's ``rel_precision`` met
    the target. ``data`` holds the C++ report (``jaxprof autotune-report`` JSON) plus these
    fields; ``rows``/``to_pandas()`` one row per candidate.
    """

    _lead = ("rank", "index", "config", "runs", "median_ns", "mad_ns", "ci95_low_ns",
             "ci95_high_ns", "vs_best", "error")

    def __init__(self, candidates: List[CandidateTiming], report: Dict[str, Any],
                 timing: str, rounds: int, elapsed_s: float, rel_precision: float,
                 warnings: List[str]) -> None:
        self.candidates = candidates
        self.timing = timing
        self.rounds = rounds
        self.elapsed_s = elapsed_s
        self.target_precision = rel_precision
        by_id = {c.index: c for c in candidates}
        order = [by_id[int(c["id"])] for c in report.get("candidates", [])]
        self.ranked = order + [c for c in candidates if c not in order]
        self.winner = by_id[int(report["winner"])] if report.get("winner") is not None else None
        self.runner_up = (by_id[int(report["runner_up"])]
                          if report.get("runner_up") is not None else None)
        self.significant = bool(report.get("significant", False))
        self.ci_disjoint = bool(report.get("ci_disjoint", False))
        self.p_value = float(report.get("p_value", 1.0))
        self.speedup = float(report.get("speedup", 0.0))
        self.warnings = list(warnings) + list(report.get("warnings", []))
        timed = [c for c in candidates if c.ok]
        self.precision_reached = bool(timed) and all(
            c.rel_precision <= rel_precision for c in timed)
        data = dict(report)
        data.update(timing=timing, rounds=rounds, elapsed_s=elapsed_s,
                    rel_precision=rel_precision, precision_reached=self.precision_reached,
                    warnings=self.warnings,
                    failed=[{"index": c.index, "config": _jsonable(c.config), "error": c.error}
                            for c in candidates if c.error])
        super().__init__(data)

    @property
    def best_config(self) -> Any:
        """The winner's configuration (None when no candidate could be timed)."""
        return self.winner.config if self.winner else None

    @property
    def failed(self) -> List[CandidateTiming]:
        return [c for c in self.candidates if c.error is not None]

    def _make_rows(self, data: Dict[str, Any]) -> List[Dict[str, Any]]:
        best = self.winner.median_ns if self.winner else math.nan
        rows = []
        for rank, c in enumerate(self.ranked, 1):
            rows.append({"rank": rank if c.ok else None, "index": c.index,
                         "config": _config_text(c.config), "runs": c.runs,
                         "median_ns": c.median_ns, "mean_ns": c.mean_ns, "mad_ns": c.mad_ns,
                         "ci95_low_ns": c.ci95_ns[0], "ci95_high_ns": c.ci95_ns[1],
                         "rel_precision": c.rel_precision if c.ok else None,
                         "vs_best": c.median_ns / best if c.ok and best else None,
                         "compile_s": c.compile_s, "error": c.error or ""})
        return rows

    def _summary_line(self) -> str:
        if self.winner is None:
            return "no winner: no candidate could be timed"
        w = self.winner
        s = f"winner: #{w.index} {_config_text(w.config)} (median {_human(w.median_ns)})"
        if self.runner_up is None:
            return s + ", the only timed candidate"
        u = self.runner_up
        verdict = "significant" if self.significant else "NOT significant"
        return (s + f", {self.speedup:.2f}x faster than #{u.index}: {verdict} "
                f"(95% CIs {'disjoint' if self.ci_disjoint else 'overlap'}, "
                f"Mann-Whitney p = {self.p_value:.3g})")

    def __repr__(self) -> str:
        head = (f"<TimingResult: {len(self.candidates)} candidates, {self.timing} timing, "
                f"{self.rounds} round(s), {self.elapsed_s:.2f} s, precision "
                f"{'reached' if self.precision_reached else 'NOT reached'} "
                f"(target {100 * self.target_precision:g}%)>")
        cols = ["rank", "#", "config", "runs", "median", "MAD", "95% CI of median", "vs best"]
        table = []
        for r in self.rows:
            if r["error"]:
                table.append(["-", str(r["index"]), r["config"], "0", "failed", "", "", ""])
                continue
            table.append([str(r["rank"]), str(r["index"]), r["config"], str(r["runs"]),
                          _human(r["median_ns"]), _human(r["mad_ns"]),
                          f"{_human(r['ci95_low_ns'])} - {_human(r['ci95_high_ns'])}",
                          f"{r['vs_best']:.2f}x"])
        widths = [max(len(c), *(len(t[i]) for t in table)) if table else len(c)
                  for i, c in enumerate(cols)]
        lines = [head, "  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
        lines += ["  ".join(v.ljust(w) for v, w in zip(t, widths)).rstrip() for t in table]
        lines += [f"#{c.index} {c.error}" for c in self.failed]
        lines.append(self._summary_line())
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self, max_rows: int = 50) -> str:
        head = html.escape(f"{len(self.candidates)} candidates, {self.timing} timing, "
                           f"{self.rounds} round(s), {self.elapsed_s:.2f} s")
        out = [f"<p><b>jaxprof autotune</b>: {head}</p>", super()._repr_html_(max_rows),
               f"<p>{html.escape(self._summary_line())}</p>"]
        out += [f"<p>warning: {html.escape(w)}</p>" for w in self.warnings]
        return "".join(out)


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except TypeError:
        return repr(v)


def _config_text(config: Any) -> str:
    if isinstance(config, Mapping):
        return ", ".join(f"{k}={v!r}" for k, v in config.items()) or "{}"
    return repr(config)


def _human(ns: float) -> str:
    if ns is None or math.isnan(ns):
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def _resolve(fns_or_factory: Any, candidates: Any) -> Tuple[List[Any], Callable[[int], Any]]:
    """(configs, make(i) -> callable)."""
    if isinstance(candidates, Mapping):
        candidates = expand_grid(candidates)
    if isinstance(fns_or_factory, Mapping):
        names = list(fns_or_factory)
        fns = [fns_or_factory[n] for n in names]
        return names, lambda i: fns[i]
    if isinstance(fns_or_factory, Sequence):
        fns = list(fns_or_factory)
        if candidates is None:
            configs = list(range(len(fns)))
        else:
            configs = list(candidates)
            if len(configs) != len(fns):
                raise ValueError(f"{len(fns)} functions but {len(configs)} candidates")
        return configs, lambda i: fns[i]
    if not callable(fns_or_factory):
        raise TypeError("time_candidates takes a list (or dict) of functions, or a factory "
                        "callable(config) -> function")
    if candidates is None:
        raise ValueError("a factory needs candidates (a list of configs or a grid dict)")
    configs = list(candidates)
    return configs, lambda i: fns_or_factory(configs[i])


def _named(fn: Callable[..., Any], i: int) -> Callable[..., Any]:
    # The jitted function's name becomes the XLA module name (jit_autotune_fn_<i>), which is how
    # the profile tells the candidates apart.
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    call.__name__ = call.__qualname__ = f"autotune_fn_{i}"
    return call


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:500]


def time_candidates(fns_or_factory: Any, candidates: Any = None, args: Sequence[Any] = (),
                    kwargs: Optional[Mapping[str, Any]] = None, *,
                    repeats: Union[str, int] = "auto", warmup: int = 2, min_runs: int = 5,
                    max_runs: int = 1000, rel_precision: float = 0.02,
                    max_time_s: float = 10.0, timing: str = "auto", device: Any = None,
                    seed: int = 0, resamples: int = _DEFAULT_RESAMPLES,
                    keep_executables: bool = False) -> TimingResult:
    """Times candidate implementations of one computation on the same arguments.

    Args:
        fns_or_factory: a list of functions (one per candidate), a dict ``{name: function}``, or
            a factory ``factory(config) -> function`` called once per config.
        candidates: the configs for a factory (a list, or a grid dict expanded to its cartesian
            product); for a list of functions, optional labels (default: their indices).
        args, kwargs: the arguments every candidate is called with (arrays and pytrees).
        repeats: ``"auto"`` (rounds of profiled runs until each median's 95% interval is within
            ``rel_precision``, ``max_runs`` or ``max_time_s``), or an exact number of runs per
            candidate (one round).
        warmup: untimed runs per candidate after compiling (at least one).
        min_runs: runs per candidate in a round.
        max_runs: most runs per candidate.
        rel_precision: target half-width of the median's 95% bootstrap interval over the median.
        max_time_s: time budget for compiling and timing (a round that would not fit is not
            started; the first round always runs).
        timing: ``"auto"`` (device events, falling back to the wall clock where the platform
            records none or a profiler trace cannot start, e.g. because another one is
            running), ``"device"`` (fail instead) or ``"wall"``.
        device: a ``jax.Device`` to run on (arguments are put there); default JAX's.
        seed: shuffling seed (the bootstrap seed is fixed, so reports are reproducible).
        resamples: bootstrap resamples of each median.
        keep_executables: keep the compiled candidates in ``result._executables`` (by index).

    Every candidate is compiled ahead of time (``jax.jit(f).lower(*args).compile()``); one that
    fails to compile or run is reported with its error, never dropped. Statistics, ranking and
    significance come from the C++ core (``jaxprof autotune-report``).
    """
    import jax

    if timing not in ("auto", "device", "wall"):
        raise ValueError(f"timing must be 'auto', 'device' or 'wall', not {timing!r}")
    if repeats != "auto" and (not isinstance(repeats, int) or repeats < 1):
        raise ValueError(f"repeats must be 'auto' or a positive int, not {repeats!r}")
    start = time.perf_counter()
    configs, make = _resolve(fns_or_factory, candidates)
    kwargs = dict(kwargs or {})
    args = tuple(args)
    if device is not None:
        args, kwargs = jax.device_put((args, kwargs), device)
    cands = [CandidateTiming(i, cfg) for i, cfg in enumerate(configs)]
    compiled: Dict[int, Any] = {}
    for c in cands:
        t0 = time.perf_counter()
        try:
            exe = jax.jit(_named(make(c.index), c.index)).lower(*args, **kwargs).compile()
        except Exception as e:  # reported per candidate; the others are still timed
            c.error = "compile failed: " + _first_line(e)
            continue
        finally:
            c.compile_s = time.perf_counter() - t0
        try:
            for _ in range(max(1, warmup)):
                jax.block_until_ready(exe(*args, **kwargs))
        except Exception as e:
            c.error = "run failed: " + _first_line(e)
            continue
        compiled[c.index] = exe

    warnings: List[str] = []
    mode = timing
    rng = random.Random(seed)
    samples: Dict[int, List[int]] = {i: [] for i in compiled}  # picoseconds
    spans: Dict[int, List[int]] = {i: [] for i in compiled}
    walls: Dict[int, List[int]] = {i: [] for i in compiled}
    names: Dict[int, set] = {i: set() for i in compiled}
    report: Dict[str, Any] = {}
    rounds = 0
    todo = sorted(compiled)
    runs = min_runs if repeats == "auto" else int(repeats)
    while todo:
        round_start = time.perf_counter()
        if mode == "wall":
            round_walls = _run_round(compiled, todo, runs, args, kwargs, rng)
            for i in todo:
                samples[i] += [ns * 1000 for ns in round_walls[i]]
                walls[i] += round_walls[i]
        else:
            try:
                got, round_walls = _device_round(compiled, todo, runs, args, kwargs, rng, seed)
            except _NoTrace as e:
                if mode == "device":
                    raise RuntimeError(f"timing='device': {e}") from e
                mode = "wall"
                warnings.append(f"{e}: timed with the wall clock (call + block_until_ready)")
                rounds, runs = 0, _restart(samples, spans, walls, names, min_runs, repeats)
                todo = sorted(compiled)
                continue
            if not any(got.values()):
                if mode == "device":
                    raise RuntimeError("timing='device': the profile holds no device events of "
                                       "the candidates (modules jit_autotune_fn_<i>)")
                mode = "wall"
                warnings.append("no device events for the candidates on this platform: timed "
                                "with the wall clock (call + block_until_ready)")
                # Start over untraced: device and wall samples are never mixed.
                rounds, runs = 0, _restart(samples, spans, walls, names, min_runs, repeats)
                todo = sorted(compiled)
                continue
            for i in todo:
                s, sp, nm = got.get(i, ([], [], []))
                if not s:
                    warnings.append(f"round {rounds + 1}: no device events for candidate {i}")
                samples[i] += s
                spans[i] += sp
                names[i].update(nm)
                walls[i] += round_walls[i]
        rounds += 1
        report = _rank(samples, spans, mode, resamples)
        if repeats != "auto":
            break
        stats = {int(c["id"]): c for c in report["candidates"]}
        prec = {i: _precision(stats.get(i)) for i in compiled}
        todo = [i for i in sorted(compiled)
                if prec[i] > rel_precision and len(samples[i]) < max_runs]
        if not todo:
            break
        # Runs still needed: the interval narrows like 1/sqrt(n); at most double per round.
        need = 0
        for i in todo:
            n = max(1, len(samples[i]))
            want = math.ceil(n * (prec[i] / rel_precision) ** 2) - n if math.isfinite(
                prec[i]) else n
            need = max(need, min(want, n, max_runs - len(samples[i])))
        round_s = time.perf_counter() - round_start
        per_run = round_s / max(1, runs * len(todo))
        runs = max(min_runs, need)
        if time.perf_counter() - start + per_run * runs * len(todo) > max_time_s:
            # Shrink the round to what still fits, or stop.
            left = max_time_s - (time.perf_counter() - start)
            runs = int(left / max(per_run * len(todo), 1e-9))
            if runs < min_runs:
                break
    for c in cands:
        if c.index not in compiled:
            continue
        c.span_samples_ns = [p / 1000 for p in spans[c.index]]
        c.wall_samples_ns = [float(w) for w in walls[c.index]]
        c.names = sorted(names[c.index])
    for rc in report.get("candidates", []):
        c = cands[int(rc["id"])]
        c.samples_ns = list(rc["samples_ns"])
        c.median_ns, c.mean_ns, c.mad_ns = rc["median_ns"], rc["mean_ns"], rc["mad_ns"]
        c.ci95_ns = tuple(rc["ci95_ns"])
    if repeats == "auto" and compiled and not all(
            cands[i].rel_precision <= rel_precision for i in compiled):
        warnings.append(f"precision target {100 * rel_precision:g}% not reached within "
                        f"max_time_s={max_time_s:g} / max_runs={max_runs}")
    if not compiled:
        warnings.append("no candidate compiled and ran")
    final = "wall" if mode == "wall" else "device"
    result = TimingResult(cands, report, final, rounds, time.perf_counter() - start,
                          rel_precision, warnings)
    if keep_executables:
        result._executables = compiled  # type: ignore[attr-defined]
    return result


def _restart(samples: Dict[int, List[int]], spans: Dict[int, List[int]],
             walls: Dict[int, List[int]], names: Dict[int, set], min_runs: int,
             repeats: Union[str, int]) -> int:
    for d in (samples, spans, walls, names):
        for i in d:
            d[i] = type(d[i])()
    return min_runs if repeats == "auto" else int(repeats)


def _precision(c: Optional[Dict[str, Any]]) -> float:
    if not c or not c["runs"] or not c["median_ns"]:
        return math.inf
    lo, hi = c["ci95_ns"]
    return (hi - lo) / 2.0 / c["median_ns"]


def _rank(samples: Dict[int, List[int]], spans: Dict[int, List[int]], mode: str,
          resamples: int) -> Dict[str, Any]:
    source = "wall clock" if mode == "wall" else "device events"
    cands = [(str(i), samples[i], spans[i]) for i in sorted(samples)]
    return json.loads(_core.rank_candidates_json(cands, PATTERN, source, resamples,
                                                 _core.AUTOTUNE_BOOTSTRAP_SEED))


def _run_round(compiled: Dict[int, Any], todo: List[int], runs: int, args: Tuple[Any, ...],
               kwargs: Dict[str, Any], rng: random.Random) -> Dict[int, List[int]]:
    """``runs`` runs of each candidate, in a fresh random order per repetition; wall ns each."""
    import jax

    walls: Dict[int, List[int]] = {i: [] for i in todo}
    order = list(todo)
    for _ in range(runs):
        rng.shuffle(order)
        for i in order:
            t0 = time.perf_counter_ns()
            jax.block_until_ready(compiled[i](*args, **kwargs))
            walls[i].append(time.perf_counter_ns() - t0)
    return walls


class _NoTrace(Exception):
    pass


def _device_round(compiled: Dict[int, Any], todo: List[int], runs: int, args: Tuple[Any, ...],
                  kwargs: Dict[str, Any], rng: random.Random, seed: int
                  ) -> Tuple[Dict[int, Tuple[List[int], List[int], List[str]]],
                             Dict[int, List[int]]]:
    from .._profile import load
    from ..capture import trace

    with tempfile.TemporaryDirectory(prefix="jaxprof_autotune_") as tmp:
        with contextlib.ExitStack() as stack:
            try:
                cap = stack.enter_context(trace(tmp, python_tracer=False))
            except Exception as e:  # JAX allows one trace at a time
                raise _NoTrace(f"could not start a profiler trace ({_first_line(e)})") from e
            walls = _run_round(compiled, todo, runs, args, kwargs, rng)
        prof = load(cap.path)
        # Warm-up ran before the trace: every traced execution is steady state.
        rep = json.loads(prof._core.autotune_report_json(PATTERN, True, 0, seed))
    got: Dict[int, Tuple[List[int], List[int], List[str]]] = {}
    for c in rep["candidates"]:
        i = int(c["id"])
        if i in walls:
            got[i] = (_ps(c["samples_ns"]), _ps(c["span_samples_ns"]), list(c["names"]))
    return got, walls


def _ps(ns: List[float]) -> List[int]:
    return [int(round(v * 1000)) for v in ns]
