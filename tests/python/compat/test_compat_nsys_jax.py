"""jaxprof.compat.nsys_jax: the nsys-jax notebook's code, with only its imports changed, on the
shared nsys-jax archive (unpacked, as nsys-jax reads it, and as a .zip) and on the bundled xplane
capture. The archive's reference figures are those of nsys-jax's own loader."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")
jaxprof = pytest.importorskip("jaxprof")

from jaxprof.compat.nsys_jax import (  # noqa: E402  (the notebook's import, renamed)
    calculate_collective_metrics,
    compile_protos,
    display_flamegraph,
    generate_compilation_statistics,
    load_profiler_data,
    remove_child_ranges,
    xla_module_metadata,
)

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "jax_cpu_8dev"


@pytest.fixture(scope="module")
def unpacked(shared_fixtures, tmp_path_factory):
    archive = shared_fixtures / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip"
    if not archive.is_file():
        pytest.skip(f"no archive {archive}")
    d = tmp_path_factory.mktemp("proc0")
    with zipfile.ZipFile(archive) as z:
        z.extractall(d)
    return d


def notebook_frames(workdir):
    """The notebook's first cells, run in the archive's directory as nsys-jax's users do."""
    old = os.getcwd()
    os.chdir(workdir)
    try:
        proto_dir, compiled_proto_dir = "protos", "compiled_protos"
        if not os.path.isdir(compiled_proto_dir):
            compile_protos(proto_dir=proto_dir, output_dir=compiled_proto_dir)
        all_data = load_profiler_data(
            frames={"thunk", "module", "compile"}, warmup_removal_heuristics=True)
    finally:
        os.chdir(old)
    return all_data


def test_archive_frames_equal_nsys_jax_figures(unpacked):
    all_data = notebook_frames(unpacked)
    thunk_df, module_df, compile_df = all_data["thunk"], all_data["module"], all_data["compile"]
    # nsys-jax's index and dtypes.
    for df in (thunk_df, module_df, compile_df):
        assert df.index.name == "RangeId" and df.index.dtype == np.int32
    assert module_df["ProgramId"].dtype == np.int32
    assert thunk_df["ModuleExecution"].dtype == np.int32
    for col in ("Name", "ProgramId", "ModuleId", "ModuleExecution", "ProjStartNs", "ProjDurNs",
                "ProjDurHiddenNs", "Communication", "TID"):
        assert col in thunk_df.columns
    for col in ("Name", "DurNonChildNs", "DurChildNs", "NumChild", "RangeStack", "TID"):
        assert col in compile_df.columns
    # 290 autotuner modules.
    assert int((module_df["ProgramId"] == -1).sum()) == 290
    module_df = module_df[module_df["ProgramId"] >= 0]
    thunk_df = thunk_df[thunk_df["ProgramId"] >= 0]
    # 4 step executions (the first, compiled in the profile, left out) of 2,610 thunks each.
    step = module_df[module_df["Name"] == "pjit__wrapped_step_fn"]
    assert list(step["ModuleExecution"]) == [1, 2, 3, 4]
    assert [int((thunk_df["ModuleId"] == i).sum()) for i in step.index] == [2610] * 4
    # The notebook's compile summary: 69.39 s.
    compile_df = remove_child_ranges(
        compile_df, compile_df["Name"].str.startswith("XlaAutotunerMeasurement"))
    compile_df = remove_child_ranges(compile_df, compile_df["Name"] == "XlaAutotunerCompilation")
    compile_time_ns = generate_compilation_statistics(compile_df)
    assert f"{compile_time_ns['DurNonChildNs'].sum() * 1e-9:.2f}" == "69.39"
    # 95 collectives.
    comm_df = calculate_collective_metrics(thunk_df)
    assert len(comm_df) == 95
    assert set(comm_df["Collective"]) <= {"all-gather", "all-reduce", "reduce-scatter"}
    assert (comm_df["MessageSize"] > 0).all() and (comm_df["BusBandwidthGBPerSec"] > 0).all()


def command(jaxprof_bin, name, path):
    return json.loads(subprocess.run([str(jaxprof_bin), name, str(path), "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout)


def test_process_1_frames_equal_jaxprof_commands(jaxprof_bin, archives):
    """The other shared archive: the notebook's figures from the frames, and the same figures
    from `jaxprof modules`, `compile` and `collectives`."""
    proc1 = archives[1]
    all_data = load_profiler_data(proc1, frames={"thunk", "module", "compile"},
                                  warmup_removal_heuristics=True)
    thunk_df, module_df, compile_df = all_data["thunk"], all_data["module"], all_data["compile"]
    assert int((module_df["ProgramId"] == -1).sum()) == 290
    module_df = module_df[module_df["ProgramId"] >= 0]
    thunk_df = thunk_df[thunk_df["ProgramId"] >= 0]
    step = module_df[module_df["Name"] == "pjit__wrapped_step_fn"]
    assert list(step["ModuleExecution"]) == [1, 2, 3, 4]
    assert [int((thunk_df["ModuleId"] == i).sum()) for i in step.index] == [2610] * 4
    assert list(step["ProjDurNs"]) == [140165378, 126058073, 125548221, 126346007]
    compile_df = remove_child_ranges(
        compile_df, compile_df["Name"].str.startswith("XlaAutotunerMeasurement"))
    compile_df = remove_child_ranges(compile_df, compile_df["Name"] == "XlaAutotunerCompilation")
    compile_ns = generate_compilation_statistics(compile_df)["DurNonChildNs"].sum()
    assert f"{compile_ns * 1e-9:.2f}" == "65.86"
    comm_df = calculate_collective_metrics(thunk_df)
    assert comm_df.groupby("Collective").size().to_dict() == {
        "all-gather": 40, "all-reduce": 39, "reduce-scatter": 16}

    modules = command(jaxprof_bin, "modules", proc1)
    steady = {(m["name"], m["program_id"]): (m["executions"] - m["warmup_executions"],
                                             m["total_ns"])
              for m in modules["modules"] if m["executions"] > m["warmup_executions"]}
    frames = module_df.groupby(["Name", "ProgramId"])["ProjDurNs"].agg(["size", "sum"])
    assert {k: (int(n), float(t)) for k, (n, t) in frames.iterrows()} == steady
    assert command(jaxprof_bin, "compile", proc1)["wall_ns"] == pytest.approx(compile_ns,
                                                                               abs=1.0)
    collectives = command(jaxprof_bin, "collectives", proc1)
    assert len(comm_df) == sum(d["executions"] for d in collectives["devices"]) == 95


def test_mid_2024_archive_has_a_tid_per_gpu(archives, tmp_path):
    """The mid-2024 layout (no thread metadata) with two GPUs driven by one process: each
    launching thread is a GPU, as nsys-jax took it, so each TID's rows are exactly those of the
    process whose ranges that thread holds."""
    from test_nsys_jax_older_layout import METADATA, TRACE, rewrite, two_gpu_trace

    proc0, proc1 = archives
    two = rewrite(proc0, tmp_path / "two_gpus.zip", drop=METADATA,
                  replace={TRACE: two_gpu_trace(proc0, proc1)})
    # Everything kept: set-apart warm-up follows the host ranges, and only process 0's are here.
    frames = load_profiler_data(two, frames={"thunk", "module"},
                                warmup_removal_heuristics=False)
    assert sorted(frames["module"]["TID"].unique()) == [0, 1]
    assert sorted(frames["thunk"]["TID"].unique()) == [0, 1]
    columns = {"thunk": ["Name", "ProgramId", "ModuleExecution", "ThunkExecution",
                         "ProjStartNs", "ProjDurNs", "ProjDurHiddenNs", "Communication"],
               "module": ["Name", "ProgramId", "ModuleExecution", "ProjStartNs", "ProjDurNs"]}
    for tid, archive in enumerate(archives):
        alone = load_profiler_data(archive, frames={"thunk", "module"},
                                   warmup_removal_heuristics=False)
        for name, cols in columns.items():
            got = frames[name][frames[name]["TID"] == tid][cols].reset_index(drop=True)
            want = alone[name][cols].reset_index(drop=True)
            pd.testing.assert_frame_equal(got, want, obj=f"{name} frame of TID {tid}")
    thunk_df = frames["thunk"][frames["thunk"]["ProgramId"] >= 0]
    comm = calculate_collective_metrics(thunk_df)
    assert comm.groupby("TID").size().to_dict() == {0: 120, 1: 120}


def test_frames_sum_to_jaxprof_figures(shared_fixtures):
    archive = shared_fixtures / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip"
    for path in (archive, BUNDLED):
        frames = load_profiler_data(path, frames={"thunk", "module", "compile"})
        p = jaxprof.load(path)
        ops = p.table("device_ops").to_pandas()
        ops = ops[ops["execution"].notna()]
        # The steady state, as every jaxprof table and command reports it: no autotuner runs.
        thunk = frames["thunk"][frames["thunk"]["ProgramId"] >= 0]
        module = frames["module"][frames["module"]["ProgramId"] >= 0]
        # Hidden communication time is split off ProjDurNs: together they are `ops`' total.
        total_ns = (thunk["ProjDurNs"] + thunk["ProjDurHiddenNs"]).sum()
        assert total_ns * 1000 == pytest.approx(int(ops["duration_ps"].sum()), abs=1)
        me = p.table("module_executions").to_pandas()
        assert module["ProjDurNs"].sum() * 1000 == pytest.approx(
            int(me["duration_ps"].sum()), abs=1)
        assert int(thunk["Communication"].sum()) == len(p.table("collectives"))
        if path == archive:  # the compile frame's roots are the compiles' wall time
            stats = generate_compilation_statistics(frames["compile"])
            wall = p.table("compiles").to_pandas()["wall_ps"].sum()
            assert stats["DurNonChildNs"].sum() * 1000 == pytest.approx(int(wall), abs=100)


def test_notebook_lookups_and_flamegraph(unpacked, tmp_path):
    thunk_df = notebook_frames(unpacked)["thunk"]
    thunk_df = thunk_df[thunk_df["ProgramId"] >= 0]
    summary = thunk_df.groupby(["ProgramId", "Name"]).agg({"ProjDurNs": "sum"})
    src_runtime = defaultdict(float)
    op_runtime = defaultdict(float)
    for row in summary.sort_values("ProjDurNs", ascending=False).head(50).itertuples():
        program_id, thunk_name = row.Index
        hlo_module = xla_module_metadata(program_id)
        hlo_comp, hlo_inst = hlo_module.find_instruction(thunk_name)
        assert hlo_inst.name == thunk_name and hlo_inst in hlo_comp.instructions
        op_runtime[hlo_inst.opcode] += row.ProjDurNs
        called = [i for c in hlo_inst.called_computation_ids
                  for i in hlo_module.find_computation(c).instructions]
        for inst in [hlo_inst] + called:
            frames = hlo_module.get_stack_frames(inst.metadata.stack_frame_id)
            if frames:
                src_runtime[tuple(["[GPU active]"] + frames)] += row.ProjDurNs
                break
    assert op_runtime and src_runtime
    out = tmp_path / "source_code.svg"
    display_flamegraph(data=src_runtime, title="Source code flamegraph", filename=str(out),
                       width=1250)
    svg = out.read_text()
    assert svg.startswith("<svg") or svg.startswith("<?xml")
    assert "Source code flamegraph" in svg and "[GPU active]" in svg


def test_xplane_capture_frames():
    frames = load_profiler_data(BUNDLED, frames={"thunk", "module"},
                                warmup_removal_heuristics=True)
    module_df, thunk_df = frames["module"], frames["thunk"]
    assert set(module_df["Name"]) == {"jit_train_step", "jit_global_sse"}
    assert module_df["TID"].nunique() == 8  # a TID per device
    counts = thunk_df.groupby("ModuleId").size()
    train = module_df[module_df["Name"] == "jit_train_step"].index
    assert (counts.reindex(train) == 17).all()
    comm = calculate_collective_metrics(thunk_df)
    assert len(comm) > 0 and (comm["Collective"] == "all-reduce").all()
    _, inst = xla_module_metadata(int(comm["ProgramId"].iloc[0])).find_instruction(
        comm["Name"].iloc[0])
    assert inst.opcode == "all-reduce"


def test_fresh_capture_compile_frame_is_jaxprof_compile(jaxprof_bin, fresh_8dev_capture):
    """On an xplane capture the compile frame holds the compile events `jaxprof compile` counts
    (JAX's stages, XLA's passes and code generation on the worker threads) under one range per
    compile, so that the notebook's statistics add up to the command's compile time."""
    import json
    import subprocess

    frame = load_profiler_data(fresh_8dev_capture, frames={"compile"})["compile"]
    for col in ("Name", "DurNonChildNs", "DurChildNs", "NumChild", "RangeStack", "TID",
                "ParentId", "ProgramName"):
        assert col in frame.columns
    got = json.loads(subprocess.run(
        [str(jaxprof_bin), "compile", str(fresh_8dev_capture), "--format", "json"],
        capture_output=True, text=True, check=True).stdout)
    (compile_,) = got["events"]  # global_sse compiles inside the trace
    stats = generate_compilation_statistics(frame)
    assert stats["DurNonChildNs"].sum() == pytest.approx(got["wall_ns"], abs=1e-3)
    # Every compile event is a range of the frame, once: as many per name as the command counts.
    root = frame[frame["ParentId"].isna()]
    assert list(root["Name"]) == ["(compile)"]
    assert list(root["ProgramName"]) == [compile_["module"]] == ["jit_global_sse"]
    counts = frame[frame["ParentId"].notna()].groupby("Name").size().to_dict()
    assert counts == {s["name"]: s["count"] for s in compile_["steps"] if s["count"]}
    # The root's own time is the launching thread's time outside the stages; the stages and the
    # passes are its descendants, the worker threads' ranges under the launching thread's.
    between = {s["name"]: s["wall_ns"] for s in compile_["steps"]}.get("(between stages)", 0.0)
    assert float(root["DurNonChildNs"].iloc[0]) == pytest.approx(between, abs=1e-3)
    assert frame["RangeStack"].str.startswith(f":{root.index[0]}").all()
    main_tid = int(root["TID"].iloc[0])
    workers = frame[frame["TID"] != main_tid]
    assert workers["TID"].nunique() == compile_["worker_threads"]
    assert "JitCompiler::Compile" in set(workers["Name"])
    assert "lower_sharding_computation" in set(frame.loc[frame["TID"] == main_tid, "Name"])
    assert (stats["DurNonChildNs"] >= 0).all()


def test_nested_worker_threads_are_shared_out_once(xplane_fixtures):
    """The TPU capture's compiler threads launch threads of their own: each launching-thread
    range shares out only the region of the workers it launched, so no name's own time goes
    negative and the names add up to the compiles' wall time."""
    path = xplane_fixtures / "tpu_4chip_inference.xplane.pb"
    frame = load_profiler_data(path, frames={"compile"})["compile"]
    stats = generate_compilation_statistics(frame)
    wall = jaxprof.load(path).table("compiles").to_pandas()["wall_ps"].sum()
    assert len(frame[frame["Name"] == "(compile)"]) == 4
    assert stats["DurNonChildNs"].sum() * 1000 == pytest.approx(int(wall), abs=100)
    assert (stats["DurNonChildNs"] >= 0).all()


def test_seed_figures_from_jaxprof_rows():
    """docs/migrating.md, "Where jaxprof's defaults differ": the notebook's fastest-device
    bandwidth and its percentages of summed time, from jaxprof's rows, equal the notebook's
    computation on the frames (the CPU backend hides no communication)."""
    p = jaxprof.load(BUNDLED)
    thunk_df = load_profiler_data(BUNDLED, frames={"thunk"})["thunk"]
    thunk_df = thunk_df[thunk_df["ProgramId"] >= 0]

    # Bandwidth: the notebook keeps each instance's fastest device.
    comm_df = calculate_collective_metrics(thunk_df)
    seed = comm_df.groupby(["ProgramId", "Name", "ModuleExecution"])["BusBandwidthGBPerSec"].max()
    data = p.collectives(instances=True).data
    ops = {(o["module"], o["name"]): o for o in data["ops"]}
    fastest = [ops[(i["module"], i["name"])] | {"fastest_ns": i["fastest_ns"]}
               for i in data["instances"]]
    got = [o["size_correction"] * o["message_bytes"] / o["fastest_ns"] * o["bus_factor"]
           for o in fastest]
    assert len(got) == len(seed) == 7
    np.testing.assert_allclose(sorted(got), sorted(seed), rtol=1e-12)

    # Percentages: summed op time over every device, not each device's busy time.
    rows = p.ops(by_program=True).to_pandas()
    share = rows.groupby(["module", "name"])["total_ns"].sum() / rows["total_ns"].sum()
    thunks = thunk_df.groupby("Name")["ProjDurNs"].sum() / thunk_df["ProjDurNs"].sum()
    top = thunks.idxmax()
    assert share[("jit_train_step", top)] == pytest.approx(thunks[top], rel=1e-12)
    # `ops`' own share is of each device's busy time: a different figure on every device.
    assert not np.isclose(rows.loc[rows["name"] == top, "share"], thunks[top]).any()
    by_opcode = p.ops("opcode").to_pandas().groupby("name")["total_ns"].sum()
    module_ns = p.modules().data["total_ns"]
    op_runtime = defaultdict(float)
    per_thunk = thunk_df.groupby(["ProgramId", "Name"])["ProjDurNs"].sum()
    for (program_id, name), ns in per_thunk.items():
        _, inst = xla_module_metadata(program_id).find_instruction(name)
        op_runtime[inst.opcode] += ns
    for opcode, ns in op_runtime.items():
        assert by_opcode[opcode] / module_ns == pytest.approx(ns / module_ns, rel=1e-12), opcode
