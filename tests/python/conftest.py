"""pytest fixtures for the jaxprof Python tests.

Environment:
  JAXPROF_BIN               the jaxprof binary (default: <root>/build/jaxprof)
  JAXPROF_SHARED_FIXTURES   the shared fixtures dir (default: <root>/../shared/fixtures)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Tests are grouped by feature in sub-folders; some share fixtures across groups by importing
# another test module (test_partial uses test_by_program's): every group can be imported.
for _group in sorted(Path(__file__).resolve().parent.iterdir()):
    if _group.is_dir() and not _group.name.startswith((".", "_")):
        sys.path.insert(1, str(_group))
# The protobuf wire codec shared with the benchmarks and the fuzz seed builder.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))

import ops_check  # noqa: E402


@pytest.fixture(scope="session")
def project_root() -> Path:
    return ops_check.ROOT


@pytest.fixture(scope="session")
def jaxprof_bin() -> Path:
    path = ops_check.default_binary()
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.skip(f"jaxprof binary not found at {path}: build it first "
                    f"(cmake -S . -B build && cmake --build build) or set JAXPROF_BIN")
    return path


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    d = ops_check.SHARED_FIXTURES
    if not d.is_dir():
        pytest.skip(f"shared fixtures not found at {d} (set JAXPROF_SHARED_FIXTURES)")
    return d


@pytest.fixture(scope="session")
def xplane_fixtures(shared_fixtures) -> Path:
    d = shared_fixtures / "xplane"
    if not d.is_dir():
        pytest.skip(f"no xplane fixtures at {d}")
    return d


# The two nsys-jax archives of the shared fixtures (processes 0 and 1 of a 4-process FSDP run).
@pytest.fixture(scope="session")
def archives(shared_fixtures):
    d = shared_fixtures / "nsys-jax"
    paths = [d / f"pax_fsdp4_4proc_proc{i}.zip" for i in (0, 1)]
    if not all(p.is_file() for p in paths):
        pytest.skip(f"no nsys-jax archives in {d}")
    return paths


@pytest.fixture(scope="session")
def proc0(archives):
    return archives[0]


# A new capture with real JAX (tests/data/capture_cpu_profiles.py's 8-device MLP, whose global_sse
# compiles inside the trace), made once per test run for the tests that need a fresh one.
@pytest.fixture(scope="session")
def fresh_8dev_capture(tmp_path_factory) -> Path:
    pytest.importorskip("jax", reason="jax is needed to capture profiles (pip install jax)")
    import subprocess

    out = tmp_path_factory.mktemp("fresh_8dev")
    script = ops_check.ROOT / "tests" / "data" / "capture_cpu_profiles.py"
    proc = subprocess.run([sys.executable, str(script), "--out", str(out), "--only",
                           "jax_cpu_8dev"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / "jax_cpu_8dev"
