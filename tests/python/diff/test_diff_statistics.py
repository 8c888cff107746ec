"""What `diff` and `check` conclude from synthetic profiles of known effect sizes and noise: the
number shown is the statistic that was tested (the Hodges-Lehmann ratio with the Mann-Whitney
test's own interval), shares of a change never pass 100%, and `check` gives its three verdicts
(exit 0 ok, 3 regression, 4 inconclusive) where the samples support them.

Each profile is one XLA module on the CPU backend (synthetic_profiles.build_cpu_runs) whose runs
draw their op times from a log-normal distribution with a fixed seed."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import ops_check as oc
import synthetic_profiles as sp

MS = 1_000_000_000  # ps


def lognormal(rng, n: int, center_ps: float, noise: float) -> np.ndarray:
    return np.round(center_ps * np.exp(rng.normal(0, noise, n)))


def profile(tmp: Path, name: str, ops) -> Path:
    path = tmp / f"{name}.xplane.pb"
    sp.build_cpu_runs(path, ops)
    return path


def pair(tmp: Path, effect: float, noise: float, runs: int, seed: int, tag: str = ""):
    """BASE and NEW of a 2 ms step; NEW `effect` times slower, both with `noise` (log sd)."""
    rng = np.random.default_rng(seed)
    base = profile(tmp, f"base{tag}", {"dot.1": lognormal(rng, runs, 2 * MS, noise)})
    new = profile(tmp, f"new{tag}", {"dot.1": lognormal(rng, runs, 2 * MS * effect, noise)})
    return base, new


def check(binary, base, new, *args):
    proc = oc.run_cli(binary, ["check", str(base), str(new), "--format", "json", *args])
    assert proc.returncode in (0, 3, 4), proc.stderr.decode()
    v = json.loads(proc.stdout)
    assert v["exit_code"] == proc.returncode
    return v


def diff(binary, base, new, *args):
    proc = oc.run_cli(binary, ["diff", str(base), str(new), "--format", "json", *args])
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def pairwise_median_ratio(a, b) -> float:
    r = np.sort((np.asarray(b)[None, :] / np.asarray(a)[:, None]).ravel())
    n = len(r)
    return float(r[n // 2]) if n % 2 else math.sqrt(r[n // 2 - 1] * r[n // 2])


@pytest.mark.parametrize("effect,noise,runs,verdict", [
    (1.00, 0.05, 200, "ok"),            # no change, plenty of runs: shown within 5%
    (1.30, 0.05, 200, "regression"),    # 30% slower: shown over 5%
    (1.02, 0.02, 100, "ok"),            # 2% slower, tight: within 5%
    (1.10, 0.02, 100, "regression"),    # 10% slower, tight
    (1.08, 0.25, 15, "inconclusive"),   # 8% slower in 25% noise, 15 runs: cannot tell
    (1.05, 0.05, 60, "inconclusive"),   # exactly at the budget
    (3.00, 0.05, 3, "inconclusive"),    # 3x slower, but 3 runs a side cannot show anything
])
def test_check_verdicts_on_known_effects(jaxprof_bin, tmp_path, effect, noise, runs, verdict):
    base, new = pair(tmp_path, effect, noise, runs, seed=int(effect * 100) + runs)
    v = check(jaxprof_bin, base, new, "--metric", "module:jit_step")
    assert v["verdict"] == verdict, v["reason"]
    assert v["exit_code"] == {"ok": 0, "regression": 3, "inconclusive": 4}[verdict]
    low, high = v["ratio_ci"]
    limit = 1.05
    # The verdict reads the interval: regression above the limit, ok below it.
    if verdict == "regression":
        assert low > limit and v["p_value"] < 0.01
    elif verdict == "ok":
        assert high < limit and v["p_within"] < 0.01
    else:
        assert (low or 0) <= limit <= (high or math.inf)
        assert v["p_value"] >= 0.01 and v["p_within"] >= 0.01
        assert v["reason"].startswith("INCONCLUSIVE: module jit_step changed")
        assert v["more_samples"] is not None or effect == 1.05
    # The interval holds the true effect (these seeds; 98% intervals).
    assert (low or 0) <= effect <= (high or math.inf), v


def test_inconclusive_names_how_many_runs_would_decide(jaxprof_bin, tmp_path):
    base, new = pair(tmp_path, 1.15, 0.15, 12, seed=5)
    v = check(jaxprof_bin, base, new, "--metric", "module:jit_step")
    assert v["verdict"] == "inconclusive", v["reason"]
    more = v["more_samples"]
    assert more and not more["at_least"] and more["per_side"] > 0
    assert f"about {more['per_side']} more runs per side would decide" in v["reason"]
    # With that many more runs of the same programs, the test decides.
    runs = 12 + more["per_side"]
    base, new = pair(tmp_path, 1.15, 0.15, runs, seed=6, tag="more")
    assert check(jaxprof_bin, base, new, "--metric", "module:jit_step")["verdict"] == "regression"

    few_b, few_n = pair(tmp_path, 2.0, 0.05, 3, seed=7, tag="few")
    v = check(jaxprof_bin, few_b, few_n, "--metric", "module:jit_step")
    assert v["more_samples"] == {"per_side": 2, "at_least": True}, v
    assert "it needs at least 2 more runs per side" in v["reason"]
    assert v["ratio_ci"] == [None, None]


def test_inconclusive_exit_code_can_be_mapped(jaxprof_bin, tmp_path):
    base, new = pair(tmp_path, 1.08, 0.25, 15, seed=123)
    for flag, code in (("exit4", 4), ("pass", 0), ("fail", 3)):
        proc = oc.run_cli(jaxprof_bin, ["check", str(base), str(new), "--inconclusive", flag])
        assert proc.returncode == code, (flag, proc.stdout)
        assert proc.stdout.decode().startswith("INCONCLUSIVE: ")
    proc = oc.run_cli(jaxprof_bin, ["check", str(base), str(new), "--inconclusive", "maybe"])
    assert proc.returncode == 2


def test_check_numbers_are_the_tested_statistic(jaxprof_bin, tmp_path):
    """The ratio is the median of the pairwise ratios; the p-values are SciPy's Mann-Whitney
    test of NEW against BASE x 1.05, one-sided each way."""
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(42)
    a = lognormal(rng, 80, 2 * MS, 0.1)
    b = lognormal(rng, 80, 2.4 * MS, 0.1)
    base = profile(tmp_path, "a", {"dot.1": a})
    new = profile(tmp_path, "b", {"dot.1": b})
    v = check(jaxprof_bin, base, new, "--metric", "module:jit_step")
    assert v["ratio"] == pytest.approx(pairwise_median_ratio(a, b), rel=1e-9)
    scaled = a * 1.05
    assert v["p_value"] == pytest.approx(
        stats.mannwhitneyu(b, scaled, alternative="greater").pvalue, rel=1e-6, abs=1e-300)
    assert v["p_within"] == pytest.approx(
        stats.mannwhitneyu(b, scaled, alternative="less").pvalue, rel=1e-6)
    # The 98% interval's ends are where the one-sided tests at 1% start to reject.
    low, high = v["ratio_ci"]
    for factor, alt in ((low * 0.999, "greater"), (high * 1.001, "less")):
        assert stats.mannwhitneyu(b, a * factor, alternative=alt).pvalue < 0.01
    for factor, alt in ((low * 1.001, "greater"), (high * 0.999, "less")):
        assert stats.mannwhitneyu(b, a * factor, alternative=alt).pvalue >= 0.01


def test_diff_shows_the_tested_change_not_the_mean(jaxprof_bin, tmp_path):
    """An op whose mean grew 75% through a few outlier runs, while its typical run did not move:
    the table and JSON show the tested change (about 0%) next to the verdict, and the outliers'
    time in the contribution."""
    rng = np.random.default_rng(9)
    runs = 200
    base_op = lognormal(rng, runs, 1 * MS, 0.01)
    new_op = lognormal(rng, runs, 1 * MS, 0.01)
    new_op[::20] *= 16  # 10 runs of 200 take 16x: the mean grows by 75%
    other = lognormal(rng, runs, 2 * MS, 0.01)
    base = profile(tmp_path, "base", {"fusion.1": base_op, "dot.2": other})
    new = profile(tmp_path, "new", {"fusion.1": new_op, "dot.2": other})
    d = diff(jaxprof_bin, base, new)
    (op,) = [o for o in d["ops"] if o["name"] == "fusion.1"]
    assert op["new_mean_ns"] / op["base_mean_ns"] == pytest.approx(1.75, rel=0.01)
    assert op["ratio"] == pytest.approx(pairwise_median_ratio(base_op, new_op), rel=1e-9)
    assert abs(op["ratio"] - 1) < 0.01 and op["p_value"] > 0.01
    assert op["change"] == "same", op
    assert op["ratio_low"] <= op["ratio"] <= op["ratio_high"]
    assert op["contribution_ns"] == pytest.approx(
        (op["new_mean_ns"] - op["base_mean_ns"]) * op["weight"])
    text = oc.run_cli(jaxprof_bin, ["diff", str(base), str(new)]).stdout.decode()
    row = next(l for l in text.splitlines() if l.startswith("fusion.1 "))
    assert " same " in row and "+75" not in row, row


def test_shares_of_a_change_never_pass_the_whole(jaxprof_bin, tmp_path):
    """One op 100 us slower per run, one 80 us faster: the net change is +20 us per run (x 60 runs
    per device: +1.2 ms). Shares are of the op time that moved (180 us per run), never 500% of
    the net."""
    rng = np.random.default_rng(1)
    runs = 60
    ops_b = {"a.1": lognormal(rng, runs, 1 * MS, 0.001), "b.2": lognormal(rng, runs, 1 * MS, 0.001),
             "c.3": lognormal(rng, runs, 1 * MS, 0.001)}
    ops_n = {"a.1": ops_b["a.1"] + 100_000_000, "b.2": ops_b["b.2"] - 80_000_000,
             "c.3": ops_b["c.3"]}
    d = diff(jaxprof_bin, profile(tmp_path, "b", ops_b), profile(tmp_path, "n", ops_n))
    ch = d["ops_change"]
    assert ch["slower_ns"] == pytest.approx(100_000 * runs, rel=1e-6)
    assert ch["faster_ns"] == pytest.approx(-80_000 * runs, rel=1e-6)
    assert ch["net_ns"] == pytest.approx(20_000 * runs, rel=1e-6)
    shares = [op["cumulative_share"] for op in d["ops"]]
    assert shares == sorted(shares) and max(shares) <= 1
    assert shares[0] == pytest.approx(100 / 180, rel=1e-6)
    assert d["explained"]["share"] == pytest.approx(1)
    assert d["explained"]["slower_ns"] == pytest.approx(100_000 * runs, rel=1e-6)
    assert d["explained"]["faster_ns"] == pytest.approx(-80_000 * runs, rel=1e-6)
    assert [op["change"] for op in d["ops"][:2]] == ["slower", "faster"]
    text = oc.run_cli(jaxprof_bin, ["diff", str(tmp_path / "b.xplane.pb"),
                                    str(tmp_path / "n.xplane.pb")]).stdout.decode()
    assert "slower ops +6.000 ms, faster ops -4.800 ms, net +1.200 ms" in text, text
    percents = [float(p) for p in __import__("re").findall(r"(\d+(?:\.\d+)?)% of the op time", text)]
    assert percents and all(p <= 100 for p in percents)


def capture_steps(out: Path, extra_s: float, steps: int) -> None:
    """A real capture (JAX on the CPU) of `steps` marked training steps: a small jitted step and
    4 ms of host work, plus `extra_s` more: a change whose cost is known in advance."""
    import time

    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    f = jax.jit(lambda x: jnp.tanh(x @ x))
    x = jnp.ones((256, 256), jnp.float32) * 0.01
    f(x).block_until_ready()
    with jax.profiler.trace(str(out)):
        for i in range(steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                f(x).block_until_ready()
                time.sleep(0.004 + extra_s)


def test_real_captures_of_a_change_of_known_cost(jaxprof_bin, tmp_path):
    """+2 ms of host work per step: check calls it a regression, diff's step row puts the
    Hodges-Lehmann shift at the 2 ms the change costs; the same program is never a regression;
    four steps a side are too few for any verdict."""
    # Compiled before each trace: every captured step is a sample (no warm-up step).
    capture_steps(tmp_path / "base", 0, 40)
    capture_steps(tmp_path / "slow", 0.002, 40)
    capture_steps(tmp_path / "same", 0, 40)
    capture_steps(tmp_path / "few_base", 0, 4)
    capture_steps(tmp_path / "few", 0.002, 4)

    v = check(jaxprof_bin, tmp_path / "base", tmp_path / "slow")
    assert v["metric_source"] == "step-marks" and v["base_samples"] == 40, v
    assert v["verdict"] == "regression", v["reason"]
    d = diff(jaxprof_bin, tmp_path / "base", tmp_path / "slow")
    step = d["step"]
    assert step["change"] == "slower"
    # The tested shift is the known cost, within the sleep's overshoot on a loaded machine.
    assert 1.6e6 <= step["shift_ns"] <= 2.6e6, step
    assert step["ratio_low"] <= step["ratio"] <= step["ratio_high"]
    known = (step["base_median_ns"] + 2e6) / step["base_median_ns"]
    assert step["ratio_low"] * 0.95 <= known <= step["ratio_high"] * 1.05, step

    v = check(jaxprof_bin, tmp_path / "base", tmp_path / "same")
    assert v["verdict"] in ("ok", "inconclusive"), v["reason"]

    v = check(jaxprof_bin, tmp_path / "few_base", tmp_path / "few")
    assert v["verdict"] == "inconclusive" and v["new_samples"] == 4, v["reason"]
    assert v["more_samples"] == {"per_side": 1, "at_least": True}, v
