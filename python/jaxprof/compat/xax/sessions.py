"""Finding the captures under a profiles folder, in any of the layouts JAX writes.

A session is a directory holding at least one profile file (``<host>.xplane.pb[.gz]``,
``<host>.trace.json[.gz]``). jaxprof's captures sit at ``<profiles>/plugins/profile/<session>/``;
XAX wrote one log directory per capture (``<profiles>/<name>_step_<N>/plugins/profile/
<session>/``). Both, and a session or ``plugins/profile`` directory given directly, are found by
``jaxprof.sessions`` (the listing of ``jaxprof sessions``, in C++), which this module wraps.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Union

from ..._sessions import sessions as _list
from ...errors import ProfileNotFoundError

__all__ = ["ProfileSession", "list_sessions", "find_session", "human_size"]

PathLike = Union[str, "os.PathLike[str]"]
HOST_SUFFIXES = (".xplane.pb", ".xplane.pb.gz", ".trace.json", ".trace.json.gz")


@dataclass
class ProfileSession:
    """One capture: its directory, its host files and every file it holds."""

    path: Path
    name: str  # the path relative to the folder searched (posix), or the directory's name
    hosts: List[Path] = field(default_factory=list)
    files: List[Path] = field(default_factory=list)  # every plain file, hosts included
    mtime: float = 0.0  # the newest file's modification time

    @property
    def size(self) -> int:
        return sum(f.stat().st_size for f in self.files)

    @property
    def host_names(self) -> List[str]:
        names = []
        for h in self.hosts:
            for suffix in HOST_SUFFIXES[::-1]:  # the longer suffix first
                if h.name.endswith(suffix):
                    names.append(h.name[: -len(suffix)])
                    break
        return names

    @property
    def log_dir(self) -> Optional[Path]:
        """The TensorBoard/XProf log directory (``<log_dir>/plugins/profile/<session>``), or
        None when the session is not in that layout."""
        p = self.path
        if p.parent.name == "profile" and p.parent.parent.name == "plugins":
            return p.parent.parent.parent
        return None


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover - the loop always returns


def list_sessions(profile_dir: PathLike) -> List[ProfileSession]:
    """Every session under ``profile_dir``, oldest first (by their newest file, then name).

    Raises ProfileNotFoundError when ``profile_dir`` is not a directory; an empty list means
    a directory without captures.
    """
    root = Path(profile_dir).expanduser()
    if not root.is_dir():
        reason = "no such directory" if not root.exists() else "not a directory"
        raise ProfileNotFoundError(f"{root}: {reason}", str(root), reason)
    sessions = []
    for d in reversed(_list(root)):  # newest first there
        s = ProfileSession(Path(d["path"]), d["name"],
                           [Path(f["path"]) for f in d["files"] if f["host"] is not None],
                           [Path(f["path"]) for f in d["files"]], d["mtime"])
        sessions.append(s)
    return sessions


def find_session(sessions: List[ProfileSession], wanted: Optional[str]) -> ProfileSession:
    """The session named ``wanted``, else the newest. ``wanted`` is its relative path, its
    directory's name, the first folder of its path (XAX's ``<name>_step_<N>``) or the end of
    its directory's name (``train_step_step_300`` for ``<time>_train_step_step_300``).
    Raises ProfileNotFoundError naming what there is."""
    if not sessions:
        raise ProfileNotFoundError("no captures", None, "no captures")
    if wanted is None:
        return sessions[-1]
    wanted = wanted.strip("/")
    hits: List[ProfileSession] = []
    for match in (lambda s: s.name == wanted, lambda s: s.path.name == wanted,
                  lambda s: s.name.split("/")[0] == wanted,
                  lambda s: s.path.name.endswith("_" + wanted)):
        hits = [s for s in sessions if match(s)]
        if hits:
            break
    if len(hits) == 1:
        return hits[0]
    names = ", ".join(s.name for s in sessions)
    reason = (f"session {wanted!r} is ambiguous: {', '.join(s.name for s in hits)}" if hits
              else f"no session {wanted!r}; there are: {names}")
    raise ProfileNotFoundError(reason, None, reason)
