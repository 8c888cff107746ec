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
