"""The Perfetto export keeps the story: `jaxprof summary` of `jaxprof export --perfetto`'s trace
equals `jaxprof summary` of the profile itself (its critical path too: the step annotations
read back as steps), on every shared fixture and on the project's CPU
captures (docs/export.md). And `jaxprof view` never writes into the capture: on an nsys-jax
archive the trace lands in the current directory."""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

import ops_check as oc

NSYS = oc.SHARED_FIXTURES / "nsys-jax"
CASES = [(p.name.split(".", 1)[0], p) for p in oc.fixture_profiles()]
CASES += [(p.stem, p) for p in sorted(NSYS.glob("*.zip"))]
CASES += [("data-" + n, oc.DATA_DIR / n) for n in ("jax_cpu_8dev", "jax_cpu_matmul")]


def summary(binary, path, *extra):
    proc = oc.run_cli(binary, ["summary", str(path), "--format", "json", *extra])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    data = json.loads(proc.stdout, parse_float=Decimal)
    data.pop("input")  # which file was read: the export, not the profile
    return data


@pytest.mark.parametrize("name,path", CASES, ids=[c[0] for c in CASES])
def test_summary_of_the_export_is_the_summary(jaxprof_bin, tmp_path, name, path):
    oc.require_profile(path)
    trace = tmp_path / "trace.json.gz"
    proc = oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(trace)])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    for extra in ([], ["--include-autotuning", "--include-warmup"]):
        want = summary(jaxprof_bin, path, *extra)
        got = summary(jaxprof_bin, trace, *extra)
        for key in want:
            assert got[key] == want[key], (name, extra, key)
        assert got == want


def test_two_processes_export_as_two_hosts(jaxprof_bin, tmp_path):
    archives = sorted(NSYS.glob("*.zip"))
    if len(archives) < 2:
        pytest.skip("nsys-jax fixtures not available")
    trace = tmp_path / "both.json"
    proc = oc.run_cli(jaxprof_bin, ["export", *map(str, archives), "--perfetto", str(trace)])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    want = summary(jaxprof_bin, archives[0], archives[1])
    got = summary(jaxprof_bin, trace)
    assert got["hosts"] == want["hosts"] == [a.stem for a in archives]
    assert got == want


def test_view_on_an_archive_writes_to_the_current_directory(jaxprof_bin, tmp_path):
    archive = NSYS / "pax_fsdp4_4proc_proc1.zip"
    oc.require_profile(archive)
    proc = oc.run_cli(jaxprof_bin, ["view", str(archive)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    trace = tmp_path / "pax_fsdp4_4proc_proc1.perfetto.json.gz"
    assert trace.is_file()
    assert f"wrote {trace.name}" in proc.stdout.decode()
    # -o puts it anywhere, the capture's folder included when asked.
    out = tmp_path / "sub" / "t.json"
    out.parent.mkdir()
    proc = oc.run_cli(jaxprof_bin, ["view", str(archive), "-o", str(out)], cwd=tmp_path)
    assert proc.returncode == 0 and out.is_file()


def test_view_leaves_the_run_directory_alone(jaxprof_bin, tmp_path):
    logs = oc.require_profile(oc.DATA_DIR / "jax_cpu_matmul")
    before = sorted(p.name for p in logs.rglob("*"))
    proc = oc.run_cli(jaxprof_bin, ["view", str(logs)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert sorted(p.name for p in logs.rglob("*")) == before
    assert (tmp_path / "vm.perfetto.json.gz").is_file()
    assert "xprof server --logdir" in proc.stdout.decode()


def test_derived_tracks_are_marked_and_dropped(jaxprof_bin, tmp_path):
    path = oc.require_profile(oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb")
    trace = tmp_path / "t.json"
    assert oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(trace)]).returncode == 0
    events = json.loads(trace.read_text())["traceEvents"]
    derived = {(e["pid"], e["tid"]) for e in events
               if e["ph"] == "M" and e["name"] == "thread_name" and e["args"].get("jaxprof_derived")}
    assert derived, "the category track is marked"
    assert any(e["ph"] == "M" and e["name"] == "jaxprof_hlo_proto" for e in events)
    info = json.loads(oc.run_cli(jaxprof_bin, ["info", str(trace), "--all-lines", "--format",
                                               "json"]).stdout)
    lines = {line["name"] for plane in info["planes"] for line in plane["lines"]}
    assert "category" not in lines and "XLA Modules" in lines


def test_steps_of_the_export_are_the_steps(jaxprof_bin, tmp_path):
    """The StepTraceAnnotation ranges come back as steps: the critical path of every step of the
    export read back is that of the profile (a Chrome trace declares no stats up front, so its
    host lines are searched for `step_num`)."""
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_8dev")
    trace = tmp_path / "trace.json.gz"
    assert oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(trace)]).returncode == 0

    def steps(p):
        proc = oc.run_cli(jaxprof_bin, ["critical-path", str(p), "--format", "json"])
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        data = json.loads(proc.stdout, parse_float=Decimal)
        return data["step_source"], [(s["step_ns"], s["critical_ns"], len(s["path"]))
                                     for s in data["steps"]]

    want = steps(path)
    assert want[0] == "host-annotation" and len(want[1]) == 4
    assert steps(trace) == want
