"""Which profile the functions read: the one ``load_profiler_data`` loaded last, else the working
directory's (as nsys-jax reads the working directory)."""

from __future__ import annotations

import os
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Dict, Optional, Union

from ..._profile import Profile, load

PathLike = Union[str, "os.PathLike[str]"]

# The profiles loaded, by resolved path, and the latest one (what xla_module_metadata and
# calculate_collective_metrics read when given no path).
_loaded: Dict[str, Profile] = {}
_current: Optional[Profile] = None


def _is_unpacked_archive(path: Path) -> bool:
    return path.is_dir() and (path / "nvtx_gpu_proj_trace").is_dir()


def _zip_directory(path: Path) -> Path:
    # The core reads nsys-jax archives as .zip files: an unpacked one is stored (not compressed)
    # into a temporary .zip, which costs a copy of the files and no decompression.
    fd, name = tempfile.mkstemp(prefix="jaxprof_nsys_jax_", suffix=".zip")
    os.close(fd)
    with zipfile.ZipFile(name, "w", zipfile.ZIP_STORED) as z:
        for f in sorted(path.rglob("*")):
            if f.is_file() and "sources" not in f.relative_to(path).parts[:1]:
                z.write(f, f.relative_to(path).as_posix())
    return Path(name)


def profile_at(prefix: Optional[PathLike] = None) -> Profile:
    """The profile at ``prefix`` (default: the working directory), loaded once."""
    global _current
    path = Path(prefix if prefix is not None else ".").resolve()
    key = str(path)
    if key not in _loaded:
        if _is_unpacked_archive(path):
            packed = _zip_directory(path)
            try:
                _loaded[key] = load(packed)
                _loaded[key]._core.require_all()
            finally:
                packed.unlink()
        else:
            _loaded[key] = load(path)
    _current = _loaded[key]
    return _current


def current_profile(prefix: Optional[PathLike] = None) -> Profile:
    if prefix is not None or _current is None:
        return profile_at(prefix)
    return _current


_THREAD_ID = re.compile(r"\((\d+)\)\s*$|/(\d+)$|^(\d+)$")


def thread_id(name: Any, fallback: int) -> int:
    """The thread id in a thread's name ("main.py (215733)", "python3/12", "12"), else
    ``fallback``."""
    m = _THREAD_ID.search(str(name))
    if not m:
        return fallback
    return int(next(g for g in m.groups() if g is not None))


def thread_ids(names: Any) -> list:
    """``thread_id`` of each thread name, the same for every row of one thread: names without an
    id ("python3") are numbered after the largest id found."""
    found = {n: thread_id(n, -1) for n in set(map(str, names))}
    next_id = max(found.values(), default=-1) + 1
    for n in sorted(k for k, v in found.items() if v < 0):
        found[n] = next_id
        next_id += 1
    return [found[str(n)] for n in names]
