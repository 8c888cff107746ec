"""Programs that share a module name (one function jitted for two shapes): merged by default,
one row per program with --by-program, and no HLO lookup ever borrows another program's
instructions. Rows whose names collide in a table say what tells them apart."""
from __future__ import annotations

import json
import subprocess

import pytest

import xplane_oracle as xo
from xspace_builder import SpaceBuilder, U64

US = 1_000_000


def hlo_proto(module, instructions):
    proto = xo.HloProto()
    proto.hlo_module.name = module
    comp = proto.hlo_module.computations.add()
    comp.name = "main"
    for name, opcode in instructions:
        i = comp.instructions.add()
        i.name = name
        i.opcode = opcode
    return proto.SerializeToString()


@pytest.fixture(scope="module")
def two_programs(tmp_path_factory):
    space = SpaceBuilder()
    meta = space.plane("/host:metadata")
    # Only program 1's HLO is in the profile.
    meta.event_md("jit_matmul(1)", stats={
        "Hlo Proto": hlo_proto("jit_matmul", [("custom-call.1", "custom-call")]),
        "program_id": U64(1)})
    gpu = space.plane("/device:GPU:0")
    k = gpu.event_md("gemm_kernel")
    line = gpu.line(1, "Stream #1(Kernel)")
    t = 0
    for program, dur in ((1, 4), (2, 6), (1, 4), (2, 6)):
        gpu.event(line, k, t * US, dur * US,
                  stats={"hlo_op": "custom-call.1", "hlo_module": "jit_matmul",
                         "program_id": U64(program)})
        t += 10
    path = tmp_path_factory.mktemp("programs") / "programs.xplane.pb"
    space.write(path)
    return path


def ops(binary, path, *args, fmt="json"):
    # Every execution counts here: the first run of each program is warm-up (docs/steady-state.md)
    # and would otherwise be set apart; these tests are about grouping, not the steady state.
    proc = subprocess.run([str(binary), "ops", str(path), "--include-warmup", *args,
                           "--format", fmt],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if fmt == "json" else proc.stdout


def test_merged_by_default(jaxprof_bin, two_programs):
    (g,) = ops(jaxprof_bin, two_programs)["devices"][0]["groups"]
    assert g["name"] == "custom-call.1" and g["count"] == 4 and g["total_ns"] == 20_000
    assert g["program_ids"] == [1, 2]
    # The programs do not agree on what the op is (program 2's HLO is unknown): no opcode.
    assert g["opcode"] == ""


def test_split_by_program(jaxprof_bin, two_programs):
    groups = ops(jaxprof_bin, two_programs, "--by-program")["devices"][0]["groups"]
    by = {tuple(g["program_ids"]): g for g in groups}
    assert set(by) == {(1,), (2,)}
    assert by[(1,)]["count"] == 2 and by[(1,)]["total_ns"] == 8_000
    assert by[(2,)]["count"] == 2 and by[(2,)]["total_ns"] == 12_000
    # Program 1's HLO describes program 1 only.
    assert by[(1,)]["opcode"] == "custom-call"
    assert by[(2,)]["opcode"] == ""


def test_split_rows_tell_programs_apart_in_tables(jaxprof_bin, two_programs):
    text = ops(jaxprof_bin, two_programs, "--by-program", fmt="table")
    assert "custom-call.1 [program 1]" in text
    assert "custom-call.1 [program 2]" in text
    merged = ops(jaxprof_bin, two_programs, fmt="table")
    assert "[program" not in merged


def test_python_by_program(two_programs):
    jaxprof = pytest.importorskip("jaxprof")
    prof = jaxprof.load(str(two_programs))
    rows = prof.ops(by_program=True).data["devices"][0]["groups"]
    assert len(rows) == 2
