"""Captures a small data-parallel step on 8 CPU devices in several real variants, for the
critical-path prediction checks (test_critical_path.py). Run as a script in a fresh process (the
device count must be set before jax is imported):

    python3 critical_path_capture.py LOG_DIR VARIANT [VARIANT ...]

One capture (LOG_DIR, a log directory) holds ROUNDS rounds; each round runs one step of every
variant in turn, under StepTraceAnnotation(VARIANT) and ended by block_until_ready. The variants'
steps alternate, so that they see the same load on a shared machine; every variant is compiled
and run once before the capture.

The step (per device): h = tanh(x @ w1) with x (B, K) and w1 (K, N), the largest matmul; then an
all-reduce of h over the 8 devices (psum); then y = h @ w2, a smaller matmul. Variants:
  base         as above
  half_matmul  K halved: the largest matmul does half the work, nothing else changes
  no_psum      the all-reduce removed
  sleep10      a 10 ms host sleep (TraceAnnotation "host_sleep") in the step, before the call
  sleep20      the same, 20 ms
  half_w2      the second matmul with half its columns (N2 halved)
"""
from __future__ import annotations

import os
import sys
import time

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

B, K, N, N2 = 64, 512, 512, 256
ROUNDS = 10


def make_step(variant: str):
    """The variant's step function, its arguments and its host sleep (seconds)."""
    import functools

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ("data",))
    k = K // 2 if variant == "half_matmul" else K
    n2 = N2 // 2 if variant == "half_w2" else N2
    rng = np.random.default_rng(0)
    # Placed before the step, so that the step's program holds no slicing of its inputs.
    x = jax.device_put(rng.standard_normal((8 * B, k)).astype(np.float32),
                       NamedSharding(mesh, P("data")))
    w1, w2 = (jax.device_put((0.01 * rng.standard_normal(shape)).astype(np.float32),
                             NamedSharding(mesh, P())) for shape in ((k, N), (N, n2)))
    psum = variant != "no_psum"

    @jax.jit
    @functools.partial(jax.shard_map, mesh=mesh, in_specs=(P("data"), P(), P()),
                       out_specs=P("data"))
    def step(x, w1, w2):
        h = jnp.tanh(x @ w1)
        if psum:
            h = jax.lax.psum(h, "data")
        return h @ w2

    jax.block_until_ready(step(x, w1, w2))  # compiled before the capture
    return step, (x, w1, w2), {"sleep10": 0.010, "sleep20": 0.020}.get(variant, 0.0)


def capture(log_dir: str, variants) -> None:
    import jax

    steps = {v: make_step(v) for v in variants}
    with jax.profiler.trace(log_dir):
        for r in range(ROUNDS):
            for i, v in enumerate(variants):
                step, args, sleep_s = steps[v]
                with jax.profiler.StepTraceAnnotation(v, step_num=r * len(variants) + i):
                    if sleep_s:
                        with jax.profiler.TraceAnnotation("host_sleep"):
                            time.sleep(sleep_s)
                    jax.block_until_ready(step(*args))


if __name__ == "__main__":
    capture(sys.argv[1], sys.argv[2:])
