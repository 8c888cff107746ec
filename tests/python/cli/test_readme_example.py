"""The README's Python example runs as it stands, and what it prints and returns is right."""
from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

import pytest

import ops_check
import timeline_oracle

jax = pytest.importorskip("jax")
jaxprof = pytest.importorskip("jaxprof", reason="the jaxprof package is not installed (pip install .)")

LOG_DIR = "/tmp/jaxprof-logs"


def readme_training_example() -> str:
    text = (ops_check.ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    loops = [b for b in blocks if "StepProfiler" in b]
    assert len(loops) == 1, "the README has one training-loop example"
    return loops[0]


def test_readme_example_runs(tmp_path: Path, capsys) -> None:
    code = readme_training_example()
    assert LOG_DIR in code
    scope: dict = {}
    exec(compile(code.replace(LOG_DIR, str(tmp_path)), "README.md", "exec"), scope)

    # Two captures, of steps 10 and 60, in the TensorBoard layout, each summarised in one line.
    prof = scope["prof"]
    assert [c.first_step for c in prof.profiles] == [10, 60]
    runs = sorted((tmp_path / "plugins" / "profile").iterdir())
    assert len(runs) == 2 and all(list(r.glob("*.xplane.pb")) for r in runs)
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith("jaxprof")]
    assert len(lines) == 2, lines

    # Each capture holds its one step, not the steps queued before it, and its line gives that
    # step's device time: as an independent reading of the capture finds it, and as a stopwatch
    # around the same step outside any capture finds it.
    train_step, params, x, y = (scope[k] for k in ("train_step", "params", "x", "y"))
    watch = []
    for _ in range(15):
        t = time.perf_counter()
        jax.block_until_ready(train_step(params, x, y))
        watch.append(time.perf_counter() - t)
    for cap, line in zip(prof.profiles, lines):
        execs = [e for d in timeline_oracle.module_executions(str(cap.path)).values() for e in d
                 if e["name"] == "jit_train_step"]
        assert len(execs) == 1, (line, len(execs))
        m = re.search(r": step ([0-9.]+) ms on the device, ([0-9.]+) ms wall", line)
        assert m, line
        device_ms = float(m[1])
        assert abs(device_ms - (execs[0]["end"] - execs[0]["start"]) / 1e9) <= 0.0051, line
        # Coarse bounds (a capture of the queued steps would read several steps' time): a busy
        # machine slows the captured step or the stopwatch's alike, never by five times both ways.
        assert device_ms <= 5 * statistics.median(watch) * 1e3 + 2.0, (line, watch)
        assert device_ms >= 0.2 * min(watch) * 1e3, (line, watch)

    # The notebook cells: the newest capture (step 60) with the training step's ops.
    p = scope["p"]
    assert Path(p.files[0]).parent == runs[-1]
    summary = p.summary()
    assert "<table" in summary._repr_html_() and "jit_train_step" in str(summary)
    ops = p.ops(top=10)
    assert 0 < len(ops) <= 10 and "dot" in " ".join(r["name"] for r in ops.rows)
    events = p.events("/device:CPU:0").to_pandas()
    # The ops table's totals are the durations of the device's op events.
    total_ns = sum(r["total_ns"] for r in p.ops().rows if r["device"] == "/device:CPU:0")
    op_events = events[events["hlo_op"].notna()]
    assert len(op_events) > 0
    assert int(op_events["duration_ps"].sum()) / 1000 == pytest.approx(total_ns, rel=1e-12)
    flame = p.flame(by="op-name")
    assert flame.svg().startswith("<?xml") and "train_step" in flame.svg()
    assert "data:image/svg+xml;base64," in flame._repr_html_()


def install_line_extras() -> list:
    """The extras of the README's install line (`pip install ".[a,b]"`)."""
    text = (ops_check.ROOT / "README.md").read_text()
    section = text[text.index("## From Python"):]
    lines = re.findall(r'^pip install (?:--\S+ )*"\.(?:\[([a-z,]+)\])?"', section, flags=re.M)
    assert lines, "the README's Python section starts with its install line"
    return [e for e in lines[0].split(",") if e]


def test_readme_install_line_brings_what_the_example_needs() -> None:
    """The ModuleNotFoundError a newcomer met: the example calls to_pandas(), so the install line
    must bring pandas (and jax, which StepProfiler drives)."""
    import ast

    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ops_check.ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in install_line_extras():
        requirements += project["optional-dependencies"][extra]
    installed = {re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0].lower() for r in requirements}
    code = readme_training_example()
    needs = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            needs |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            needs.add(node.module.split(".")[0])
    needs.discard("jaxprof")
    if ".to_pandas()" in code:
        needs.add("pandas")
    if ".to_arrow()" in code:
        needs.add("pyarrow")
    assert needs >= {"jax", "pandas"}
    assert needs <= installed, f"the install line misses {sorted(needs - installed)}"


def test_to_pandas_without_pandas_says_what_to_install(monkeypatch) -> None:
    import sys

    p = jaxprof.load(ops_check.DATA_DIR / "jax_cpu_matmul.xplane.pb.gz")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ModuleNotFoundError, match=r"jaxprof\[dataframe\]"):
        p.ops().to_pandas()
