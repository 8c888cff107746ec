"""``jaxprof.sessions``: the sessions (captures) of a log directory, newest first, with their
hosts and every file's size and time: the C++ listing ``jaxprof sessions`` prints
(``io/session_list.h``), as a list of dicts."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _core

__all__ = ["sessions", "extract_session"]

PathLike = Union[str, "os.PathLike[str]"]


def sessions(logdir: PathLike) -> List[Dict[str, Any]]:
    """Every directory at or under ``logdir`` holding profile files (``<host>.xplane.pb[.gz]``,
    ``<host>.trace.json[.gz]``), newest first (by its newest file). Each is a dict: ``name``
    (its path under ``logdir``), ``path``, ``log_dir`` (the TensorBoard/XProf log directory, or
    None outside ``plugins/profile/<session>/``), ``hosts``, ``bytes``, ``mtime`` (seconds since
    the epoch), ``modified`` (local time), and ``files``: per file ``name``, ``path``, ``host``
    (None for other files), ``bytes``, ``mtime``, ``modified``. Raises ProfileNotFoundError
    when ``logdir`` is not a directory; an empty list: no captures there."""
    return json.loads(_core.sessions_json(os.fspath(os.path.expanduser(logdir))))["sessions"]


def extract_session(logdir: PathLike, dest: PathLike, session: Optional[str] = None) -> str:
    """Copies a session's raw files into ``dest/<its directory>/`` (``jaxprof sessions LOGDIR
    --extract DEST --session S``) and returns that directory. ``session`` is its path under
    ``logdir``, its directory's name, its first folder or the end of its directory's name;
    None: the newest."""
    return _core.extract_session(os.fspath(os.path.expanduser(logdir)), session or "",
                                 os.fspath(dest))
