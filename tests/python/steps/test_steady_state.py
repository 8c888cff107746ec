"""Steady state first (docs/steady-state.md): XLA's compile-time autotuner, warm-up runs and
compile time stay out of the figures by default, are said apart, and come back with
--include-autotuning / --include-warmup; on nsys-jax archives and on XSpace profiles."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

import ops_check as oc
from xspace_builder import SpaceBuilder, U64

NSYS = oc.SHARED_FIXTURES / "nsys-jax"
PROC0 = NSYS / "pax_fsdp4_4proc_proc0.zip"
PROC1 = NSYS / "pax_fsdp4_4proc_proc1.zip"
ALL = ["--include-autotuning", "--include-warmup"]


def cli_json(binary, *args):
    proc = oc.run_cli(binary, [*map(str, args), "--format", "json"])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout, parse_float=Decimal)


def autotuner_modules(names):
    return [n for n in names if n.startswith("gemm_fusion") or n == "extracted"]


def test_autotuning_is_not_the_top_op(jaxprof_bin):
    oc.require_profile(PROC0)
    ops = cli_json(jaxprof_bin, "ops", PROC0, "--top", "5")
    (dev,) = ops["devices"]
    assert not autotuner_modules(g["module"] for g in dev["groups"])
    assert dev["groups"][0]["module"] == "pjit__wrapped_step_fn"
    apart = ops["set_apart"]["autotuning"]
    assert not apart["counted"]
    assert apart["executions"] == 290 and apart["op_events"] == 308
    assert "gemm_fusion_dot.411" in apart["modules"] and "extracted" in apart["modules"]
    assert dev["set_apart"] == 308 + ops["set_apart"]["warmup"]["op_events"]
    # Counted again, the autotuner's gemm is the largest op of the capture (33% of op time).
    everything = cli_json(jaxprof_bin, "ops", PROC0, "--top", "1", *ALL)
    top = everything["devices"][0]["groups"][0]
    assert top["name"] == "gemm_fusion_dot.411" and top["count"] == 18
    assert everything["set_apart"]["autotuning"]["counted"]


def test_modules_and_summary_tell_the_training_step(jaxprof_bin):
    oc.require_profile(PROC1)
    mods = cli_json(jaxprof_bin, "modules", PROC1)
    names = [m["name"] for m in mods["modules"]]
    assert not autotuner_modules(names)
    assert names[0] == "pjit__wrapped_step_fn"
    with_autotuning = cli_json(jaxprof_bin, "modules", PROC1, "--include-autotuning")
    assert autotuner_modules(m["name"] for m in with_autotuning["modules"])

    s = cli_json(jaxprof_bin, "summary", PROC1)
    # The first psum waits 2.65 s for the other processes to finish compiling: warm-up.
    assert s["modules"][0]["name"] == "pjit__wrapped_step_fn"
    assert all(c["exposed_ns"] < Decimal(1e9) for c in s["collectives"])
    d = s["device"]
    assert d["set_apart_ns"] > Decimal(60e9)  # compiling: 65.9 s on the host
    assert s["set_apart"]["compiling"]["compiles"] == 17
    parts = (d["compute_ns"] + d["comm_exposed_ns"] + d["memcpy_exposed_ns"] + d["idle_ns"]
             + d["set_apart_ns"])
    assert parts == d["span_ns"]
    # Everything counted: the story of the capture as a whole.
    whole = cli_json(jaxprof_bin, "summary", PROC1, *ALL)
    assert whole["device"]["set_apart_ns"] == 0
    assert whole["modules"][1]["name"] == "jit__psum"


def test_tables_say_what_was_set_apart(jaxprof_bin):
    oc.require_profile(PROC0)
    for command in ("ops", "modules", "timeline", "kernels", "collectives", "flame"):
        proc = oc.run_cli(jaxprof_bin, [command, str(PROC0)])
        assert proc.returncode == 0, (command, proc.stderr)
        err = proc.stderr.decode()
        assert "set apart from the steady state: autotuning 290 executions" in err, command
        assert "--include-autotuning" in err
    proc = oc.run_cli(jaxprof_bin, ["summary", str(PROC0)])
    assert "set apart from the steady state" in proc.stdout.decode()


@pytest.mark.parametrize("name,path", oc.profile_cases())
def test_timeline_parts_add_up_with_set_apart(jaxprof_bin, name, path):
    oc.require_profile(path)
    for extra in ([], ALL):
        tl = cli_json(jaxprof_bin, "timeline", path, *extra)
        for d in tl["devices"]:
            parts = (d["compute_ns"] + d["comm_exposed_ns"] + d["memcpy_exposed_ns"]
                     + d["idle_ns"] + d["set_apart_ns"])
            assert parts == d["span_ns"], (name, extra, d["device"])
            if extra:
                assert d["set_apart_ns"] == 0


def test_warmup_runs_leave_ops_and_return_with_the_flag(jaxprof_bin):
    # global_sse compiles inside the capture, in step 0 (tests/data/README.md): its first run on
    # each of the 8 devices is warm-up. train_step was compiled before the trace: none of its
    # runs is.
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_8dev")
    ops = cli_json(jaxprof_bin, "ops", path)
    everything = cli_json(jaxprof_bin, "ops", path, *ALL)
    assert ops["set_apart"]["warmup"]["executions"] == 8
    assert ops["set_apart"]["warmup"]["modules"] == ["jit_global_sse(2)"]
    for dev, dev_all in zip(ops["devices"], everything["devices"]):
        for groups, sse_runs in ((dev["groups"], 3), (dev_all["groups"], 4)):
            counts = {g["module"]: set() for g in groups}
            for g in groups:
                counts[g["module"]].add(g["count"])
            assert counts["jit_global_sse"] == {sse_runs}, dev["device"]
            assert counts["jit_train_step"] == {4}, dev["device"]


def test_first_runs_without_a_compile_in_the_capture_are_not_warmup(jaxprof_bin):
    # Five jit_dot programs, three runs each, on a GPU whose host threads record no compile:
    # compiled before the capture, so no run is set apart.
    path = oc.require_profile(oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb")
    ops = cli_json(jaxprof_bin, "ops", path)
    gemm = next(g for g in ops["devices"][0]["groups"] if g["name"] == "custom-call.1")
    assert gemm["count"] == 15
    assert ops["set_apart"]["warmup"]["executions"] == 0


def synthetic_gpu_with_autotuner(path):
    """A GPU stream: the autotuner's extracted gemm (module without a program id) timed four
    times while compiling, then three steps of jit_step (program 7)."""
    space = SpaceBuilder()
    gpu = space.plane("/device:GPU:0", plane_id=1)
    line = gpu.line(7, "Stream #7(Kernel)", timestamp_ns=1_700_000_000_000_000_000)
    tuned = gpu.event_md("gemm_kernel_candidate")
    step = gpu.event_md("step_kernel")
    t = 0
    for i in range(4):
        gpu.event(line, tuned, offset_ps=t, duration_ps=50_000_000,
                  stats={"hlo_module": "gemm_fusion_dot.3", "hlo_op": "gemm_fusion_dot.3",
                         "group_id": 100 + i, "correlation_id": 1 + i})
        t += 60_000_000
    for i in range(3):
        for k in range(2):
            gpu.event(line, step, offset_ps=t, duration_ps=1_000_000,
                      stats={"hlo_module": "jit_step", "program_id": U64(7),
                             "hlo_op": f"fusion.{k}", "group_id": i, "correlation_id": 10 + i})
            t += 1_500_000
        t += 5_000_000
    space.write(path)


def test_xspace_autotuner_executions_are_set_apart(jaxprof_bin, tmp_path):
    path = tmp_path / "gpu.xplane.pb"
    synthetic_gpu_with_autotuner(path)
    ops = cli_json(jaxprof_bin, "ops", path, "--group-by", "module")
    groups = {g["name"]: g for g in ops["devices"][0]["groups"]}
    assert "gemm_fusion_dot.3" not in groups
    assert groups["jit_step"]["count"] == 4  # 3 steps of 2 kernels, the first step warm-up
    assert ops["set_apart"]["autotuning"]["executions"] == 4
    assert ops["set_apart"]["autotuning"]["modules"] == ["gemm_fusion_dot.3"]
    everything = cli_json(jaxprof_bin, "ops", path, "--group-by", "module", *ALL)
    groups = {g["name"]: g for g in everything["devices"][0]["groups"]}
    assert groups["gemm_fusion_dot.3"]["count"] == 4 and groups["jit_step"]["count"] == 6


def test_python_load_options(tmp_path):
    jaxprof = pytest.importorskip("jaxprof")
    oc.require_profile(PROC0)
    p = jaxprof.load(PROC0)
    assert p.set_apart()["autotuning"]["executions"] == 290
    names = {g["module"] for g in p.ops().data["devices"][0]["groups"]}
    assert "gemm_fusion_dot.411" not in names
    q = jaxprof.load(PROC0, include_autotuning=True)
    names = {g["module"] for g in q.ops().data["devices"][0]["groups"]}
    assert "gemm_fusion_dot.411" in names
    assert p.input["hosts"][0]["path"] == str(PROC0)
