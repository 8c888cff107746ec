"""The functions of ``xax.utils.profiling``: ``annotate``, ``trace_function`` and
``open_latest_profile``, on top of :mod:`jaxprof.capture` and :func:`jaxprof.view`."""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional, TypeVar, Union

from ... import capture as _capture
from ...errors import ProfileNotFoundError
from .sessions import ProfileSession, list_sessions

__all__ = ["annotate", "trace_function", "open_latest_profile", "ProfileDirError",
           "tensorboard_command", "TENSORBOARD_INSTALL"]

log = logging.getLogger("jaxprof")
F = TypeVar("F", bound=Callable[..., Any])
PathLike = Union[str, "os.PathLike[str]"]

# jaxprof.annotate is already both a decorator and a context manager.
annotate = _capture.annotate

TENSORBOARD_INSTALL = "pip install tensorboard xprof   (xprof provides TensorBoard's Profile tab)"


class ProfileDirError(ProfileNotFoundError, ValueError):
    """No usable profile directory. Also a ValueError, which is what XAX raised."""


def trace_function(fn: F, name: Optional[str] = None) -> F:
    """Returns ``fn`` wrapped so that every call is a range named ``name`` (default: the
    function's ``__name__``, as XAX named it) on the profile's host timeline."""
    label = name or getattr(fn, "__name__", None) or "function"
    return _capture.trace_function(fn, name=label)


def tensorboard_command() -> Optional[List[str]]:
    """How to start TensorBoard here (its script, else ``python -m tensorboard.main``), or None
    when it is not installed."""
    exe = shutil.which("tensorboard")
    if exe:
        return [exe]
    if importlib.util.find_spec("tensorboard") is not None:
        return [sys.executable, "-m", "tensorboard.main"]
    return None


def has_profile_plugin() -> bool:
    return any(importlib.util.find_spec(m) is not None
               for m in ("tensorboard_plugin_profile", "xprof"))


def tensorboard_log_dir(profile_dir: Path, session: ProfileSession) -> Path:
    """The ``--logdir`` that shows ``session`` (and its neighbours): ``profile_dir`` when the
    session sits in a ``plugins/profile`` layout at or under it, else the session's own log
    directory; TensorBoard finds runs below its log directory."""
    log_dir = session.log_dir
    if log_dir is None:
        return session.path
    root = profile_dir.resolve()
    try:
        log_dir.resolve().relative_to(root)
        return profile_dir
    except ValueError:  # profile_dir is plugins/profile or the session itself
        return log_dir


def _resolve_dir(profile_dir: Optional[PathLike]) -> Path:
    if profile_dir is None:
        env = os.environ.get("XAX_PROFILE_DIR") or os.environ.get("JAXPROF_PROFILE_DIR")
        if not env:
            raise ProfileDirError("no profile directory given, and neither XAX_PROFILE_DIR nor "
                                  "JAXPROF_PROFILE_DIR is set", None, "no profile directory")
        profile_dir = env
    return Path(profile_dir).expanduser()


def open_latest_profile(profile_dir: Optional[PathLike] = None, ui: str = "auto", *,
                        serve: bool = True, port: int = 9001, serve_for: float = 300.0,
                        output: Optional[PathLike] = None) -> Any:
    """Opens the newest capture under ``profile_dir``.

    ``profile_dir`` defaults to ``$XAX_PROFILE_DIR`` (then ``$JAXPROF_PROFILE_DIR``). ``ui``:

    - ``"tensorboard"``: runs ``tensorboard --logdir ...`` until it is stopped (Ctrl-C), as XAX
      did; raises RuntimeError saying how to install it when it is not installed.
    - ``"perfetto"``: :func:`jaxprof.view` on the capture: writes a Perfetto trace (``output``,
      by default in the current directory), prints how to open it and, with ``serve``, serves
      it to ui.perfetto.dev from 127.0.0.1 until it was downloaded or ``serve_for`` seconds
      passed. Returns the :class:`jaxprof.Viewer`. Nothing to install.
    - ``"auto"`` (default): TensorBoard when installed, else Perfetto.

    Raises ProfileDirError (a ValueError) when the directory is missing or holds no capture.
    """
    if ui not in ("auto", "tensorboard", "perfetto"):
        raise ValueError(f"ui={ui!r}: expected 'auto', 'tensorboard' or 'perfetto'")
    root = _resolve_dir(profile_dir)
    try:
        sessions = list_sessions(root)
    except ProfileNotFoundError as e:
        raise ProfileDirError(f"profile directory {root}: {e.reason}", str(root), e.reason) from e
    if not sessions:
        raise ProfileDirError(f"no captures under {root} (expected "
                              "<dir>/plugins/profile/<session>/<host>.xplane.pb)", str(root),
                              "no captures")
    latest = sessions[-1]
    tb = tensorboard_command() if ui in ("auto", "tensorboard") else None
    if ui == "tensorboard" and tb is None:
        raise RuntimeError(f"TensorBoard is not installed: {TENSORBOARD_INSTALL}; or use "
                           "ui='perfetto', which needs nothing installed")
    if tb is not None:
        if not has_profile_plugin():
            log.warning("jaxprof: TensorBoard shows captures in its Profile tab, which needs "
                        "`pip install xprof` (or tensorboard-plugin-profile)")
        log_dir = tensorboard_log_dir(root, latest)
        print(f"latest capture: {latest.path}\nstarting TensorBoard on {log_dir} "
              f"(Profile tab); Ctrl-C stops it", flush=True)
        subprocess.run(tb + ["--logdir", str(log_dir)], check=False)
        return None
    from ...view import view

    return view(latest.path, serve=serve, block=serve, port=port, serve_for=serve_for,
                output=output)
