"""`jaxprof diff` and `jaxprof check` on real JAX captures made during the test.

Three programs are profiled on the CPU backend: the same jitted step twice, and once with an extra
matmul. On a shared, noisy machine the load changes from one second to the next, so captures that
are compared run at the same time: two processes capture side by side (started together through a
barrier file) on the same core, each with one XLA thread, and see the same load. Then two captures of the same
program must pass `check` at the default 5% budget, and the slower program must fail it (exit 3)
with `diff` naming the added matmul.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ops_check as oc

jax = pytest.importorskip("jax", reason="jax is needed to capture profiles (pip install jax)")

RUNS = 80

CAPTURE = r'''
import os, sys, time
from pathlib import Path
# Both captures of a pair share one core (inherited by every thread): they then share its load
# too, where on different cores one may meet a busy neighbour and the other not.
os.sched_setaffinity(0, {int(sys.argv[5])})
import jax, jax.numpy as jnp, numpy as np

out, variant, runs, barrier = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
EXTRA = variant == "slow"


def step(x, w1, w2):
    h = jnp.tanh(x @ w1)
    if EXTRA:
        h = jnp.tanh(h @ w1)  # the extra matmul of the slow variant
    return h @ w2


f = jax.jit(step)
rng = np.random.default_rng(0)
x = jnp.asarray(rng.standard_normal((256, 512), np.float32))
w1 = jnp.asarray(rng.standard_normal((512, 512), np.float32) * 0.05)
w2 = jnp.asarray(rng.standard_normal((512, 512), np.float32) * 0.05)
for _ in range(3):
    f(x, w1, w2).block_until_ready()  # compile and warm up before tracing
(barrier.parent / ("ready-" + variant + "-" + Path(out).name)).touch()
deadline = time.time() + 120
while not barrier.exists() and time.time() < deadline:
    time.sleep(0.005)
with jax.profiler.trace(out):
    for _ in range(runs):
        f(x, w1, w2).block_until_ready()
'''


def capture_pair(tmp: Path, first: tuple, second: tuple) -> None:
    """Captures two programs side by side: (out_dir_name, variant) each."""
    script = tmp / "capture.py"
    script.write_text(CAPTURE)
    sync = tmp / f"sync-{first[0]}-{second[0]}"
    sync.mkdir()
    barrier = sync / "go"
    cpu = min(os.sched_getaffinity(0))
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp / name), variant, str(RUNS),
                               str(barrier), str(cpu)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for name, variant in (first, second)]
    deadline = time.time() + 300
    while len(list(sync.glob("ready-*"))) < 2 and time.time() < deadline:
        if any(p.poll() not in (None, 0) for p in procs):
            break
        time.sleep(0.01)
    barrier.touch()
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("diffcap")
    capture_pair(tmp, ("base", "base"), ("same", "base"))
    capture_pair(tmp, ("base2", "base"), ("slow", "slow"))
    return tmp


def run(binary, *args):
    return oc.run_cli(binary, [*map(str, args)], timeout=120)


def diff_json(binary, a, b):
    proc = run(binary, "diff", a, b, "--format", "json")
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def test_same_program_passes_check(jaxprof_bin, captures):
    proc = run(jaxprof_bin, "check", captures / "base", captures / "same")
    line = proc.stdout.decode()
    assert proc.returncode == 0, line + proc.stderr.decode()
    assert line.startswith("ok: step (module jit_step)") and line.count("\n") == 1, line


def test_same_program_diff_has_no_added_or_removed_ops(jaxprof_bin, captures):
    d = diff_json(jaxprof_bin, captures / "base", captures / "same")
    (module,) = d["modules"]
    assert module["name"] == "jit_step"
    # The first run in each profile is its warm-up (docs/modules.md), left out.
    assert module["base_executions"] == module["new_executions"] == RUNS - 1
    assert all(op["change"] not in ("added", "removed") for op in d["ops"]), d["ops"]
    assert all(op["matched_by"] == "name" for op in d["ops"])
    # The step itself is not flagged as slower beyond noise and 5%.
    assert not (module["change"] == "slower" and module["ratio"] > 1.05), module


def test_slower_program_fails_check_with_a_reason(jaxprof_bin, captures):
    proc = run(jaxprof_bin, "check", captures / "base2", captures / "slow", "--max-regression",
               "5%")
    line = proc.stdout.decode()
    assert proc.returncode == 3, line + proc.stderr.decode()
    assert line.startswith("REGRESSION: step (module jit_step) is +"), line
    assert "Mann-Whitney" in line and line.count("\n") == 1
    # The same gate on the module by name, and on the op that survived the renumbering.
    assert run(jaxprof_bin, "check", captures / "base2", captures / "slow", "--metric",
               "module:jit_step").returncode == 3


def test_diff_flags_the_added_matmul(jaxprof_bin, captures):
    d = diff_json(jaxprof_bin, captures / "base2", captures / "slow")
    (module,) = d["modules"]
    assert module["change"] == "slower" and module["ratio"] > 1.1, module
    assert module["p_value"] < 0.01
    added = [op for op in d["ops"] if op["change"] == "added"]
    gemm = [op for op in added if op["category"] == "gemm"]
    assert len(gemm) == 1, added
    assert gemm[0]["op_name"] == "jit(step)/dot_general"
    # The extra matmul sits on its own source line: the op that kept the last matmul's line was
    # matched to it even where XLA renumbered it.
    assert gemm[0]["source"] != ""
    base_sources = {op["source"] for op in d["ops"] if op["change"] != "added"
                    and op["category"] == "gemm"}
    assert gemm[0]["source"] not in base_sources
    assert all(op["matched_by"] in ("name", "opcode+op_name+source")
               for op in d["ops"] if op["change"] not in ("added", "removed"))
    assert not [op for op in d["ops"] if op["change"] == "removed"], d["ops"]
    # Contributions add up to the total change; the top ones explain it.
    total = sum(op["contribution_ns"] for op in d["ops"])
    ops_share = total / d["delta_ns"]
    assert 0.5 < ops_share <= 1.5
    assert d["explained"]["share"] is not None


def test_diff_table_and_csv(jaxprof_bin, captures):
    proc = run(jaxprof_bin, "diff", captures / "base2", captures / "slow")
    assert proc.returncode == 0
    text = proc.stdout.decode()
    assert "added" in text and "jit_step" in text and "explain" in text
    proc = run(jaxprof_bin, "diff", captures / "base2", captures / "slow", "--format", "csv")
    rows = proc.stdout.decode().splitlines()
    assert rows[0].startswith("kind,module,name,new_name,matched_by")
    kinds = {r.split(",", 1)[0] for r in rows[1:]}
    assert kinds == {"module", "op", "category"}


def test_check_usage_errors(jaxprof_bin, captures):
    for args in (["--metric", "module:nope"], ["--metric", "op:nope"], ["--metric", "bogus"],
                 ["--max-regression", "five"]):
        proc = run(jaxprof_bin, "check", captures / "base", captures / "same", *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.decode().count("\n") == 1
    proc = run(jaxprof_bin, "check", captures / "base", captures / "missing")
    assert proc.returncode == 2
