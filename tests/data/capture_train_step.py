#!/usr/bin/env python3
"""Capture one small training run with whatever JAX the interpreter has, for the JAX version
compatibility matrix (bench/jax_versions.py) and its CI check (tests/python/formats/
test_compatibility_matrix.py).

Usage: python capture_train_step.py [LOG_DIR] [--info INFO.json]

A 2-layer MLP, data-parallel over 8 forced host (CPU) devices: the batch is sharded over a
"data" mesh axis and the parameters replicated, so the gradient of the jitted training step
is an all-reduce across the 8 devices. A shard_map with lax.psum computes a global error in
every step: an explicit all-reduce. STEPS steps run inside jax.profiler.trace(LOG_DIR), each
under StepTraceAnnotation("train", step_num=i). train_step is compiled before the trace and
the error program inside step 0, so the trace holds one compile.

Only APIs that JAX has offered since 0.4.30 are used (shard_map is looked up where each
version keeps it). --info writes the versions the capture ran with as JSON (without LOG_DIR:
only that).
"""
from __future__ import annotations

import os

# Before jax is imported.
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import argparse
import functools
import json
import sys

STEPS = 4
DEVICES = 8


def _shard_map():
    import jax

    if hasattr(jax, "shard_map"):
        return jax.shard_map, {}
    from jax.experimental.shard_map import shard_map  # JAX before 0.6

    return shard_map, {"check_rep": False}


def capture(log_dir: str) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devices = jax.devices()
    assert len(devices) == DEVICES, devices
    mesh = Mesh(np.array(devices), ("data",))
    replicated = NamedSharding(mesh, P())
    batch_sharded = NamedSharding(mesh, P("data"))

    d_in, d_hidden, d_out, batch = 32, 64, 16, 64  # 8 rows per device
    # Inputs from numpy: no extra XLA programs (jax.random, jnp.zeros) in the capture.
    rng = np.random.default_rng(0)
    params = {
        "w1": (0.1 * rng.standard_normal((d_in, d_hidden))).astype(np.float32),
        "b1": np.zeros((d_hidden,), np.float32),
        "w2": (0.1 * rng.standard_normal((d_hidden, d_out))).astype(np.float32),
        "b2": np.zeros((d_out,), np.float32),
    }
    params = jax.device_put(params, replicated)
    x = jax.device_put(rng.standard_normal((batch, d_in)).astype(np.float32), batch_sharded)
    y = jax.device_put(rng.standard_normal((batch, d_out)).astype(np.float32), batch_sharded)

    def predict(p, x):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return h @ p["w2"] + p["b2"]

    def loss_fn(p, x, y):
        return jnp.mean((predict(p, x) - y) ** 2)

    @functools.partial(jax.jit, out_shardings=(replicated, replicated))
    def train_step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads), loss

    shard_map, extra = _shard_map()

    def local_sse(p, x, y):
        return jax.lax.psum(jnp.sum((predict(p, x) - y) ** 2), "data")

    global_sse = jax.jit(shard_map(local_sse, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                                   out_specs=P(), **extra))

    jax.block_until_ready(train_step(params, x, y))  # compiled before the trace
    with jax.profiler.trace(log_dir):
        for i in range(STEPS):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                params, loss = train_step(params, x, y)
                sse = global_sse(params, x, y)  # compiles in step 0
                jax.block_until_ready((params, loss, sse))


def versions() -> dict:
    import jax
    import jaxlib

    info = {"python": sys.version.split()[0], "jax": jax.__version__,
            "jaxlib": getattr(jaxlib, "__version__", None) or jax.lib.__version__}
    # The C++ extension's API number: xla_extension_version until jaxlib 0.5, then
    # jaxlib_extension_version.
    from jax._src import lib

    number = getattr(lib, "jaxlib_extension_version", None)
    if number is None:
        number = getattr(lib, "xla_extension_version", None)
    info["extension_version"] = None if number is None else int(number)
    try:
        import numpy

        info["numpy"] = numpy.__version__
    except ImportError:
        pass
    return info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log_dir", nargs="?")
    ap.add_argument("--info", help="write the versions used as JSON to this file")
    args = ap.parse_args(argv)
    if args.log_dir is None and not args.info:
        ap.error("give a log dir to capture into, --info, or both")
    if args.log_dir is not None:
        capture(args.log_dir)
    if args.info:
        with open(args.info, "w") as f:
            json.dump(versions(), f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
