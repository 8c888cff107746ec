"""``jaxprof.view``: a Perfetto trace next to the capture, how to open it, and an optional
loopback server for ui.perfetto.dev (the Python side of ``jaxprof view``)."""

from __future__ import annotations

import http.server
import os
import shlex
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterable, List, Optional, Union

from . import _core
from ._profile import PathLike, load

__all__ = ["view", "Viewer", "ExternalViewer"]

PERFETTO_PORT = 9001  # the only port ui.perfetto.dev fetches ?url= traces from


def _default_output(read: dict) -> Path:
    """``<host or session>.perfetto.json.gz`` in the current directory (as ``jaxprof view``):
    never inside the capture, which may be a run directory or an nsys-jax archive."""
    hosts = read.get("hosts") or []
    stem = "jaxprof"
    if len(hosts) == 1:
        name = Path(hosts[0]["path"]).name
        for suffix in (".xplane.pb.gz", ".xplane.pb", ".trace.json.gz", ".trace.json"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        else:
            name = name.split(".")[0] if not name.startswith(".") else name
        stem = name
    elif read.get("session"):
        stem = read["session"]
    if stem in ("", ".", ".."):
        stem = "jaxprof"
    return Path.cwd() / f"{stem}.perfetto.json.gz"


def _log_dir(capture_dir: Path) -> "tuple[str, bool]":
    d = capture_dir.resolve()
    layout = d.parent.name == "profile" and d.parent.parent.name == "plugins"
    return (str(d.parent.parent.parent) if layout else str(d)), layout


def _perfetto_url(port: int, name: str) -> str:
    return f"https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{name}"


class Viewer:
    """What :func:`view` did: ``trace_path`` (the written trace), ``instructions`` (how to open
    it), and while serving ``port``, ``url`` (the ui.perfetto.dev link) and ``stop()``."""

    def __init__(self, trace_path: Path, instructions: str, written: dict) -> None:
        self.trace_path = trace_path
        self.instructions = instructions
        self.written = written
        self.port: Optional[int] = None
        self.url: Optional[str] = None
        self.downloads = 0
        self._server: Optional[http.server.ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self._timer: Optional[threading.Timer] = None
        self._done = threading.Event()

    @property
    def serving(self) -> bool:
        return self._server is not None and not self._done.is_set()

    def _serve(self, port: int, serve_for: float, keep_serving: bool) -> None:
        body = self.trace_path.read_bytes()
        name = self.trace_path.name
        viewer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _cors(self) -> None:
                self.send_header("Access-Control-Allow-Origin", "https://ui.perfetto.dev")
                self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", "*")
                self.send_header("Access-Control-Allow-Private-Network", "true")

            def do_OPTIONS(self) -> None:  # noqa: N802 (http.server's naming)
                self.send_response(204)
                self._cors()
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _answer(self, with_body: bool) -> None:
                if self.path.split("?", 1)[0] != "/" + name:
                    self.send_response(404)
                    self._cors()
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self._cors()
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if with_body:
                    self.wfile.write(body)
                    viewer.downloads += 1
                    if not keep_serving:
                        threading.Thread(target=viewer.stop, daemon=True).start()

            def do_GET(self) -> None:  # noqa: N802
                self._answer(True)

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(False)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        # Loopback only: never another interface.
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        self._server = server
        self.port = int(server.server_address[1])
        self.url = _perfetto_url(self.port, name)
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="jaxprof-view", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(serve_for, self.stop)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        """Stops serving (idempotent)."""
        if self._done.is_set() or self._server is None:
            self._done.set()
            return
        self._done.set()
        if self._timer is not None:
            self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until serving stopped (download, time limit or ``stop()``); False on timeout."""
        return self._done.wait(timeout)

    def __enter__(self) -> "Viewer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f" serving on 127.0.0.1:{self.port}" if self.serving else ""
        return f"<jaxprof.Viewer {self.trace_path}{state}>"


class ExternalViewer:
    """The viewer :func:`view` started with ``ui="tensorboard"`` or ``"xprof"``: ``command``
    (its argv), ``log_dir``, ``url``, and ``process`` (None with ``print_command``); ``stop()``
    ends it, ``wait()`` waits for it."""

    def __init__(self, ui: str, command: List[str], log_dir: str, url: str,
                 process: "Optional[subprocess.Popen[bytes]]") -> None:
        self.ui, self.command, self.log_dir, self.url, self.process = (ui, command, log_dir, url,
                                                                       process)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def wait(self, timeout: Optional[float] = None) -> Optional[int]:
        return None if self.process is None else self.process.wait(timeout)

    def __enter__(self) -> "ExternalViewer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "" if self.process is None else f" pid {self.process.pid}"
        return f"<jaxprof.ExternalViewer {shlex.join(self.command)}{state}>"


def _external(ui: str, path: PathLike, session: Optional[str], port: Optional[int],
              print_command: bool, quiet: bool) -> ExternalViewer:
    """``jaxprof view --ui tensorboard|xprof``: the same command line (from the C++ core)."""
    argv, log_dir, url, missing = _core.viewer_command(ui, os.fspath(path), session or "",
                                                       int(port or 0))
    if print_command:
        if not quiet:
            print(shlex.join(argv), flush=True)
        return ExternalViewer(ui, argv, log_dir, url, None)
    exe = shutil.which(argv[0])
    if exe is None:
        raise RuntimeError(missing)
    if not quiet:
        print(f"starting {ui} on {log_dir}: {shlex.join(argv)}\nopen {url} (viewer.stop() ends "
              "it)", flush=True)
    return ExternalViewer(ui, argv, log_dir, url, subprocess.Popen([exe] + argv[1:]))


def view(path: PathLike, serve: bool = False, *, block: bool = False,
         port: Optional[int] = None, serve_for: float = 300.0, keep_serving: bool = False,
         output: Optional[PathLike] = None, session: Optional[str] = None,
         hosts: Optional[Iterable[str]] = None, quiet: bool = False, ui: str = "perfetto",
         print_command: bool = False, align: bool = True) -> Union[Viewer, ExternalViewer]:
    """Writes a Perfetto-loadable trace and prints how to open it; or, with ``ui="tensorboard"``
    or ``"xprof"``, starts that viewer on the capture's log directory.

    The trace is what ``jaxprof export --perfetto`` writes (the same C++ code), by default
    ``<host or session>.perfetto.json.gz`` in the current directory (never inside the capture
    unless ``output`` says so).

    Args:
        path: a profile file, run directory or log directory (as for :func:`load`).
        serve: also serve the trace on ``127.0.0.1:port`` (loopback only, CORS for
            ui.perfetto.dev) in a background thread; it stops after the first download (unless
            ``keep_serving``) or after ``serve_for`` seconds.
        block: with ``serve``, wait until serving stopped before returning.
        port: ui.perfetto.dev only fetches ``?url=`` traces from port 9001; 0 picks any port.
        output: where to write the trace instead.
        quiet: do not print the instructions (they are in ``Viewer.instructions``).
        ui: ``"perfetto"`` (the trace, as above), ``"tensorboard"`` (``tensorboard --logdir
            LOGDIR --port 6006``) or ``"xprof"`` (``xprof server --logdir LOGDIR --port
            8791``), run on the directory above ``plugins/profile/<session>/`` and returned as
            an :class:`ExternalViewer`; ``port`` overrides theirs. Raises RuntimeError saying
            how to install it when its command is not on PATH (``jaxprof view --ui``: exit 2).
        print_command: with ``ui="tensorboard"|"xprof"``, only print (and return) the command.
        align: put several hosts on one clock (the offsets ``jaxprof hosts`` estimates);
            ``False`` keeps their recorded clocks (``--no-align``).
    """
    if ui not in ("perfetto", "tensorboard", "xprof"):
        raise ValueError(f"ui={ui!r}: expected 'perfetto', 'tensorboard' or 'xprof'")
    if ui != "perfetto":
        return _external(ui, path, session, port, print_command, quiet)
    if print_command:
        raise ValueError("print_command goes with ui='tensorboard' or ui='xprof'")
    port = PERFETTO_PORT if port is None else port
    profile = load(path, session=session, hosts=hosts)
    read = profile.input
    files = profile.files
    first = files[0] if files else "jaxprof"
    out = Path(output) if output is not None else _default_output(read)
    written = profile.export_perfetto(out, align=align)
    capture_dir = Path(read["session_dir"]) if read.get("session_dir") else Path(first).parent
    log_dir, layout = _log_dir(capture_dir)
    text = (
        f"wrote {out}: {written['devices']} devices, {written['op_events']} op events, "
        f"{written['segments']} category segments, {written['executions']} module executions\n\n"
        f"Perfetto UI:  open https://ui.perfetto.dev, click \"Open trace file\", pick {out}\n"
        f"              (or jaxprof.view(..., serve=True) and open "
        f"{_perfetto_url(PERFETTO_PORT, out.name)})\n"
        f"XProf:        xprof server --logdir {log_dir} --port 8791   then http://localhost:8791\n"
        f"TensorBoard:  tensorboard --logdir {log_dir}   then the Profile tab\n")
    if not layout:
        text += ("              (XProf and TensorBoard read "
                 f"<logdir>/plugins/profile/<session>/*.xplane.pb; {capture_dir} is not in that "
                 "layout)\n")
    v = Viewer(out, text, written)
    if serve:
        v._serve(int(port), float(serve_for), keep_serving)
        v.instructions += (f"serving {out} on http://127.0.0.1:{v.port}/{out.name} "
                           f"(127.0.0.1 only) for at most {serve_for:g} s\nopen: {v.url}\n")
    if not quiet:
        print(v.instructions, end="", flush=True)
    if serve and block:
        try:
            v.wait()
        finally:
            v.stop()
    return v


