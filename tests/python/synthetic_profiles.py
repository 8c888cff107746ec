"""Hand-made XSpace profiles that exercise the parts of the `ops` definitions
the real captures do not (nesting and self time, tolerance, identical
intervals, split lines with one id, negative offsets, stat lookup order, ref
and uint64 stats, the CPU-backend fallback). Their expected numbers are worked
out by hand in test_oracle_selfcheck.py.

Times below are picoseconds relative to T (the timestamp of the main lines).
"""
from __future__ import annotations

from xspace_builder import Ref, SpaceBuilder, U64

# Epoch-like line timestamps: (timestamp_ns * 1000) overflows int64, so only
# times relative to the earliest line with events are safe.
T_NS = 1_700_000_000_000_000_000
BIG_PROGRAM_ID = 2**64 - 5


def build_gpu_tpu(path, compress: bool = False) -> None:
    """Devices: /device:GPU:0 (two streams, nesting) and /device:TPU:0."""
    sb = SpaceBuilder()

    # A host plane first, with hlo_op events: ignored (devices have events).
    host = sb.plane("/host:CPU")
    launch = host.event_md("cudaLaunchKernel", stats={"hlo_op": "fusion.1",
                                                      "hlo_module": "jit_a"})
    hl = host.line(99, "Host Threads/99", T_NS - 7)
    host.event(hl, launch, 0, 500_000)

    gpu = sb.plane("/device:GPU:0", plane_id=1)
    parent = gpu.event_md("parent_kernel", stats={"hlo_module": "jit_a",
                                                  "program_id": U64(BIG_PROGRAM_ID)})
    child = gpu.event_md("child_kernel", display_name="child",
                         stats={"hlo_op": "meta_op", "hlo_module": Ref("jit_a"),
                                "program_id": 3})
    tail = gpu.event_md("tail_kernel")
    dup = gpu.event_md("dup_kernel", display_name="dup",
                       stats={"hlo_module": "jit_b", "program_id": 7})
    marker = gpu.event_md("marker")
    memcpy = gpu.event_md("MemcpyH2D")
    tfop = gpu.event_md("tf_op_everything")

    s1 = gpu.line(1, "Stream #1(Kernel)", T_NS)
    gpu.event(s1, tail, 9_800, 1_700)                                   # C4
    gpu.event(s1, parent, 0, 10_000, {"hlo_op": Ref("fusion.1")})      # P
    gpu.event(s1, child, 1_000, 2_000, {"hlo_op": "dot.2"})            # C1
    gpu.event(s1, child, 2_500, 1_500)                                  # C2
    gpu.event(s1, tail, 9_500, 1_300)                                   # C3
    gpu.event(s1, dup, 20_000, 5_000)                                   # Da (first in file)
    gpu.event(s1, dup, 20_000, 5_000)                                   # Db
    gpu.event(s1, marker, 22_000, 0)                                    # Z
    gpu.event(s1, parent, 1_000_000, 100_000, {"hlo_op": Ref("fusion.1")})  # Q
    # The same line id again, 1000 ns later: one timeline with the line above.
    s1b = gpu.line(1, "Stream #1(Kernel)", T_NS + 1_000)
    gpu.event(s1b, child, 10_000, 20_000, {"hlo_op": "dot.2"})         # E: in Q
    gpu.event(s1b, tail, -500_000, 1_000)                               # N
    s2 = gpu.line(2, "Stream #2(MemcpyH2D)", T_NS)
    gpu.event(s2, memcpy, 5_000, 10_000)                                # M
    # Not counted: other line names; an empty stream line with timestamp 0.
    ops = gpu.line(3, "TensorFlow Ops", T_NS - 5_000)
    gpu.event(ops, tfop, 0, 10**12)
    gpu.line(4, "Stream #4(Kernel)", 0)

    tpu = sb.plane("/device:TPU:0", plane_id=2)
    module = tpu.event_md("jit_step(42)")
    while1 = tpu.event_md("%while.1 = (f32[8]) while(...)", display_name="while.1",
                          stats={"program_id": U64(42)})
    fus = tpu.event_md("%fusion.3 = f32[8] fusion(...)", display_name="fusion.3",
                       stats={"program_id": U64(42)})
    jit_j = tpu.event_md("%copy.4 = f32[8] copy(...)", display_name="copy.4")
    jit_k = tpu.event_md("%copy.5 = f32[8] copy(...)", display_name="copy.5")
    ml = tpu.line(2, "XLA Modules", T_NS + 2_000)
    tpu.event(ml, module, 0, 200_000)
    xl = tpu.line(3, "XLA Ops", T_NS + 2_000)
    tpu.event(xl, while1, 0, 50_000)                                    # W
    tpu.event(xl, fus, 1_000, 10_000)                                   # F1
    tpu.event(xl, fus, 11_000, 10_000)                                  # F2
    tpu.event(xl, jit_j, 100_000, 10_000)                               # J
    tpu.event(xl, jit_k, 99_500, 5_500)                                 # K: starts 500 before J

    # A device plane with no counted line: not a device.
    other = sb.plane("/device:GPU:1", plane_id=3)
    o = other.event_md("async_thing")
    ol = other.line(9, "stream #9 (lower case)", T_NS)
    other.event(ol, o, 0, 1_000)

    sb.write(path, compress=compress)


def build_cpu_backend(path, compress: bool = False) -> None:
    """No /device: plane has counted events: /host:CPU is the device."""
    sb = SpaceBuilder()
    gpu = sb.plane("/device:GPU:0")
    g = gpu.event_md("not_a_stream_event")
    gpu.line(1, "Stream #1(Kernel)", T_NS)                # no events
    gl = gpu.line(2, "Other", T_NS)
    gpu.event(gl, g, 0, 5_000)

    cpu = sb.plane("/host:CPU")
    thunk = cpu.event_md("ThunkExecutor::Execute")
    while3 = cpu.event_md("while.3", stats={"hlo_module": Ref("jit_cpu"), "program_id": 0})
    fus7 = cpu.event_md("fusion.7", stats={"hlo_op": "fusion.7", "hlo_module": Ref("jit_cpu"),
                                           "program_id": 0})
    fus8 = cpu.event_md("fusion.8", stats={"hlo_module": Ref("jit_cpu"), "program_id": 0})
    eigen = cpu.event_md("eigen_work")
    py = cpu.event_md("PjitFunction(step)")

    t10 = cpu.line(10, "tf_pool/10", T_NS)
    cpu.event(t10, thunk, 0, 100_000)                                   # X (not counted)
    cpu.event(t10, while3, 10_000, 50_000, {"hlo_op": Ref("while.3")})  # A
    cpu.event(t10, fus7, 20_000, 10_000)                                # B
    cpu.event(t10, eigen, 35_000, 10_000)                               # G (not counted)
    cpu.event(t10, fus8, 55_000, 5_500, {"hlo_op": "fusion.8"})         # C
    t10b = cpu.line(10, "tf_pool/10", T_NS + 1)
    cpu.event(t10b, fus7, 69_000, 10_000)                               # D: [70000, 80000)
    t11 = cpu.line(11, "tf_pool/11", T_NS)
    cpu.event(t11, fus7, 15_000, 10_000)                                # E
    main = cpu.line(12, "python3", T_NS - 3)
    cpu.event(main, py, 0, 200_000)

    sb.write(path, compress=compress)


def build_cpu_runs(path, ops, module: str = "jit_step", program_id: int = 1,
                   gap_ps: int = 1_000_000) -> None:
    """One XLA module run on the CPU backend, as the real captures record it: `ops` maps op name
    to its duration (ps) in each run; every run holds each op once, back to back on one thread,
    with the same run_id, and runs follow each other `gap_ps` apart. The program's compile
    (XLA's compile entry on a compiler thread) and a warm-up run (the first run's durations)
    come first, as jaxprof leaves a program's first execution after its compile out."""
    runs = len(next(iter(ops.values())))
    assert all(len(v) == runs for v in ops.values())
    sb = SpaceBuilder()
    cpu = sb.plane("/host:CPU")
    compile_md = cpu.event_md("PjRtCpuClient::Compile", stats={"hlo_module": module})
    compiler = cpu.line(20, "tf_PjRtCompilerThreadPool/20", T_NS - 10)
    cpu.event(compiler, compile_md, 0, 5_000)
    md = {name: cpu.event_md(name, stats={"hlo_module": module, "program_id": program_id})
          for name in ops}
    line = cpu.line(10, "tf_pool/10", T_NS)
    t = 0
    for run in range(runs + 1):
        k = max(run - 1, 0)
        for name, durations in ops.items():
            d = int(durations[k])
            cpu.event(line, md[name], t, d, {"hlo_op": name, "run_id": run + 1})
            t += d
        t += gap_ps
    sb.write(path)
