#!/usr/bin/env python3
"""Capture small, real JAX profiles on the CPU backend for jaxprof's tests.

Usage (from the repository root):

    python3 tests/data/capture_cpu_profiles.py [--out DIR]

Writes, under DIR (default: tests/data next to this script):

  jax_cpu_8dev/                  TensorBoard-style log dir from jax.profiler.trace around
                                 4 steps of a small MLP training step, data-parallel over
                                 8 forced host (CPU) devices with NamedSharding (gradient
                                 all-reduce), plus a shard_map + lax.psum metric, with
                                 StepTraceAnnotation("train", step_num=i) and
                                 TraceAnnotation("my_region").
  jax_cpu_matmul/                one jitted function with a 256x256 and a 512x512 matmul,
                                 run 10 times on a single device.
  jax_cpu_matmul.xplane.pb.gz    gzip copy of the xplane.pb in jax_cpu_matmul/.

Each log dir has the layout plugins/profile/<session>/<host>.xplane.pb (and the
<host>.trace.json.gz that the XLA exporter writes next to it). The session name is fixed
(SESSION below) through ProfileOptions.session_id; <host> is the machine's host name
(gethostname(), chosen by XLA; it cannot be set from JAX).

Every capture runs in its own fresh Python process so that the /host:metadata plane
(one entry per compiled program in the process) holds only that capture's programs.
The script is idempotent: it removes and recreates its outputs. Timings vary from run
to run; the structure (planes, lines, event and stat names, event counts of the XLA ops)
does not, for a given JAX version.
"""

from __future__ import annotations

import os

# Must be set before jax is imported (the child processes import jax).
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import argparse
import gzip
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
SESSION = "session"  # fixed name of plugins/profile/<session>/
CAPTURES = ("jax_cpu_8dev", "jax_cpu_matmul")
GZ_NAME = "jax_cpu_matmul.xplane.pb.gz"

MLP_STEPS = 4
MATMUL_RUNS = 10


def _profile_options():
    import jax

    opts = jax.profiler.ProfileOptions()
    opts.session_id = SESSION
    return opts


def capture_8dev(log_dir: pathlib.Path) -> None:
    """Data-parallel MLP training over 8 CPU devices."""
    import functools

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devices = jax.devices()
    assert len(devices) == 8, devices
    mesh = Mesh(np.array(devices), ("data",))
    replicated = NamedSharding(mesh, P())
    batch_sharded = NamedSharding(mesh, P("data"))

    d_in, d_hidden, d_out, batch = 32, 64, 16, 64  # 8 rows per device
    # Inputs come from numpy so that no extra XLA programs (jax.random, jnp.zeros)
    # are compiled: /host:metadata then lists only the programs of interest.
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

    # GSPMD: replicated params, batch sharded over "data" -> the gradient needs an
    # all-reduce across the 8 devices.
    @functools.partial(jax.jit, out_shardings=(replicated, replicated))
    def train_step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        new_p = jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)
        return new_p, loss

    # Explicit collective: per-shard sum of squared errors, psum over "data".
    @jax.jit
    @functools.partial(
        jax.shard_map,
        mesh=mesh,
        in_specs=(P(), P("data"), P("data")),
        out_specs=P(),
    )
    def global_sse(p, x, y):
        local = jnp.sum((predict(p, x) - y) ** 2)
        return jax.lax.psum(local, "data")

    # Warm-up: compile train_step before tracing. global_sse is deliberately left
    # uncompiled so that its compilation happens inside the trace (step 0).
    jax.block_until_ready(train_step(params, x, y))

    with jax.profiler.trace(str(log_dir), profiler_options=_profile_options()):
        for i in range(MLP_STEPS):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                params, loss = train_step(params, x, y)
                with jax.profiler.TraceAnnotation("my_region"):
                    sse = global_sse(params, x, y)
                jax.block_until_ready((params, loss, sse))


def capture_matmul(log_dir: pathlib.Path) -> None:
    """One jitted function with two differently sized matmuls, on one device."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    @jax.jit
    def two_matmuls(a, b):
        # Returned separately so XLA keeps them as two ops (not one fusion).
        return jnp.dot(a, a), jnp.dot(b, b)

    dev = jax.devices()[0]
    rng = np.random.default_rng(0)
    a = jax.device_put(rng.standard_normal((256, 256)).astype(np.float32), dev)
    b = jax.device_put(rng.standard_normal((512, 512)).astype(np.float32), dev)
    jax.block_until_ready(two_matmuls(a, b))  # warm-up / compile

    with jax.profiler.trace(str(log_dir), profiler_options=_profile_options()):
        for _ in range(MATMUL_RUNS):
            jax.block_until_ready(two_matmuls(a, b))


def _xplane_files(log_dir: pathlib.Path) -> list[pathlib.Path]:
    return sorted((log_dir / "plugins" / "profile").glob("*/*.xplane.pb"))


def _run_child(name: str, out: pathlib.Path) -> None:
    log_dir = out / name
    if log_dir.exists():
        shutil.rmtree(log_dir)
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--out", str(out),
           "--only", name]
    subprocess.run(cmd, check=True, env=os.environ.copy())
    files = _xplane_files(log_dir)
    if len(files) != 1:
        raise SystemExit(f"{name}: expected one xplane.pb, found {files}")
    print(f"{files[0]}  ({files[0].stat().st_size} bytes)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=HERE,
                    help="output directory (default: %(default)s)")
    ap.add_argument("--only", choices=CAPTURES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    out = args.out.resolve()

    if args.only:  # child process: one capture into a fresh directory
        log_dir = out / args.only
        log_dir.mkdir(parents=True, exist_ok=False)
        {"jax_cpu_8dev": capture_8dev, "jax_cpu_matmul": capture_matmul}[args.only](log_dir)
        return 0

    out.mkdir(parents=True, exist_ok=True)
    gz = out / GZ_NAME
    if gz.exists():
        gz.unlink()
    for name in CAPTURES:
        _run_child(name, out)

    (src,) = _xplane_files(out / "jax_cpu_matmul")
    # mtime=0 and no file name in the header: the .gz depends only on the content.
    gz.write_bytes(gzip.compress(src.read_bytes(), compresslevel=9, mtime=0))
    print(f"{gz}  ({gz.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
