"""docs/notebooks/nsys_jax_analysis.ipynb runs (nbclient, a real kernel) on the shared nsys-jax
archive and on a fresh JAX capture, and the figures it computes are jaxprof's commands' figures on
the same profile: module time per module, compile time, collective count."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
jaxprof = pytest.importorskip("jaxprof")

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = ROOT / "docs" / "notebooks" / "nsys_jax_analysis.ipynb"
MARK = "FIGURES "


def test_notebook_is_saved_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def run_notebook(profile: Path, out: Path):
    """The notebook executed with ``JAXPROF_PROFILE`` set to ``profile``: its cells' outputs."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    env = {"JAXPROF_PROFILE": str(profile), "JAXPROF_NOTEBOOK_OUTPUT": str(out),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    # The kernel imports the jaxprof this process imports (the source tree's or the installed).
    python = str(Path(jaxprof.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    env["PYTHONPATH"] = python + (os.pathsep + path if path else "")
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(out)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def figures_of(nb):
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.output_type == "stream":
                for line in o.text.splitlines():
                    if line.startswith(MARK):
                        return json.loads(line[len(MARK):])
    raise AssertionError("the notebook printed no FIGURES line")


def cli(binary: Path, command: str, profile: Path):
    proc = subprocess.run([str(binary), command, str(profile), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def check_against_commands(binary: Path, profile: Path, nb):
    figures = figures_of(nb)
    modules = cli(binary, "modules", profile)
    steady = {(m["name"], m["program_id"]): m for m in modules["modules"]
              if not m["autotuning"] and m["executions"] > m["warmup_executions"]}
    got = {(m["name"], m["program_id"]): m for m in figures["modules"]}
    assert set(got) == set(steady)
    for key, m in steady.items():
        assert got[key]["executions"] == m["executions"] - m["warmup_executions"], key
        assert got[key]["total_ns"] == pytest.approx(m["total_ns"], abs=1e-3), key
    assert figures["module_total_ns"] == pytest.approx(modules["total_ns"], abs=1e-3)
    compile_ = cli(binary, "compile", profile)
    assert figures["compile_total_ns"] == pytest.approx(compile_["wall_ns"], abs=1.0)
    collectives = cli(binary, "collectives", profile)
    assert figures["collectives"] == sum(d["executions"] for d in collectives["devices"])
    assert figures["collectives"] == sum(s["count"] for s in collectives["sizes"])
    return figures


def outputs_of(nb, kind):
    return [o for c in nb.cells for o in c.get("outputs", []) if kind in o.get("data", {})]


def test_notebook_on_nsys_jax_archive(jaxprof_bin, proc0, tmp_path):
    nb = run_notebook(proc0, tmp_path)
    figures = check_against_commands(jaxprof_bin, proc0, nb)
    # nsys-jax's own figures on this archive (docs/migrating.md): 69.39 s of compile,
    # 95 collectives, 4 step executions.
    assert f"{figures['compile_total_ns'] * 1e-9:.2f}" == "69.39"
    assert figures["collectives"] == 95
    step = [m for m in figures["modules"] if m["name"] == "pjit__wrapped_step_fn"]
    assert [m["executions"] for m in step] == [4]
    check_plots_and_flamegraphs(nb, tmp_path)


def test_notebook_on_fresh_capture(jaxprof_bin, fresh_8dev_capture, tmp_path):
    nb = run_notebook(fresh_8dev_capture, tmp_path)
    figures = check_against_commands(jaxprof_bin, fresh_8dev_capture, nb)
    # global_sse compiles inside the trace; its all-reduce and train_step's run on 8 devices.
    assert figures["compile_total_ns"] > 0
    assert figures["collectives"] > 0 and figures["collectives"] % 8 == 0
    assert {m["name"] for m in figures["modules"]} == {"jit_train_step", "jit_global_sse"}
    check_plots_and_flamegraphs(nb, tmp_path)
    text = "".join(o.text for c in nb.cells for o in c.get("outputs", [])
                   if o.output_type == "stream")
    # The compile summary names jaxprof compile's stages; the lookup prints the Python stack.
    assert "(compile)" in text and "lower_sharding_computation" in text
    assert "capture_cpu_profiles.py" in text


def check_plots_and_flamegraphs(nb, out: Path):
    for name, title in (("source_code.svg", "Source code flamegraph"),
                        ("op_name.svg", "op_name flamegraph")):
        svg = (out / name).read_text()
        assert title in svg and "[GPU active]" in svg
    assert len(outputs_of(nb, "image/svg+xml")) == 2
    if importlib.util.find_spec("matplotlib"):
        assert len(outputs_of(nb, "image/png")) == 2  # collectives, compute spread
