"""``python -m jaxprof.compat.xax.view_profile``: list, copy out and open the captures of a
profiles folder (XAX's ``view_profile`` with the same options)."""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from ...errors import ProfileError
from .sessions import ProfileSession, find_session, human_size, list_sessions

PROG = "python -m jaxprof.compat.xax.view_profile"

DESCRIPTION = """\
List, copy out and open the captures (profiling sessions) under a profiles folder.

A capture is a directory holding one <host>.xplane.pb per host, as JAX writes them:
ProfilerMixin puts them in <profiles>/plugins/profile/<time>_<name>_step_<N>/; XAX's layout
(<profiles>/<name>_step_<N>/plugins/profile/<time>/) and a folder below or above a capture
work too. Without --list-only, the newest capture (or --session) is opened: --ui=both (the
default) starts TensorBoard when it is installed and serves the capture to the Perfetto UI."""

EPILOG = f"""\
examples:
  {PROG} --profile-dir=runs/exp1/profiles --list-only
      every capture with its host files, sizes and times; the newest is marked
  {PROG} --profile-dir=runs/exp1/profiles --ui=perfetto
      writes <host>.perfetto.json.gz here and serves it to https://ui.perfetto.dev from
      127.0.0.1:9001 until it was downloaded (nothing to install)
  {PROG} --profile-dir=runs/exp1/profiles --ui=tensorboard
      tensorboard --logdir on the folder; its Profile tab needs `pip install tensorboard xprof`
  {PROG} --profile-dir=runs/exp1/profiles --extract copies/ --session=train_step_step_300
      copies that capture's raw files to copies/<session>/ (--all: every capture)

Without --profile-dir: $XAX_PROFILE_DIR, $JAXPROF_PROFILE_DIR, else the one of ./profiles and
./*/profiles holding the newest capture.

The captures are also what the jaxprof command and jaxprof.load() read, e.g.
  jaxprof summary <capture dir>
  python -c "import jaxprof; print(jaxprof.load('<capture dir>').ops())"

exit status: 0 done, 2 bad usage or nothing to show (no such folder, no capture, no such
session, TensorBoard not installed for --ui=tensorboard, an extract destination in the way)."""


class _Usage(Exception):
    """A problem with what was asked for: reported on stderr with exit status 2."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profile-dir", metavar="DIR",
                   help="the profiles folder (e.g. <exp_dir>/profiles), a log directory, or "
                        "one capture's directory (default: see below)")
    p.add_argument("--list-only", action="store_true",
                   help="list the captures and their host files, then exit")
    p.add_argument("--extract", nargs="?", const="extracted_profiles", metavar="DEST",
                   help="copy the capture's raw files to DEST/<session>/ (default DEST: "
                        "./extracted_profiles), then exit unless --ui is given")
    p.add_argument("--ui", choices=("both", "perfetto", "tensorboard"), default=None,
                   help="perfetto: serve the capture to ui.perfetto.dev from 127.0.0.1; "
                        "tensorboard: run TensorBoard on the folder; both (default): "
                        "TensorBoard when installed, and Perfetto")
    p.add_argument("--session", metavar="NAME",
                   help="which capture (its directory's name or its path as listed); default "
                        "the newest")
    p.add_argument("--all", action="store_true", help="with --extract: every capture")
    p.add_argument("--port", type=int, default=6006, metavar="N",
                   help="TensorBoard's port (default 6006)")
    p.add_argument("--bind-all", action="store_true",
                   help="TensorBoard: serve on every network interface (Perfetto's trace is "
                        "served on 127.0.0.1 only)")
    p.add_argument("--perfetto-port", type=int, default=9001, metavar="N",
                   help="port to serve the Perfetto trace on (default 9001, the only port "
                        "ui.perfetto.dev fetches from; 0 picks a free one)")
    p.add_argument("--serve-for", type=float, default=300.0, metavar="SECONDS",
                   help="perfetto: stop serving after this long if nothing downloaded the "
                        "trace (default 300)")
    p.add_argument("--output", metavar="FILE",
                   help="perfetto: where to write the trace (default "
                        "./<host>.perfetto.json.gz)")
    return p


def _default_dir() -> Path:
    """$XAX_PROFILE_DIR, $JAXPROF_PROFILE_DIR, else the profiles folder here (``./profiles``
    or ``./*/profiles``) holding the newest capture."""
    for var in ("XAX_PROFILE_DIR", "JAXPROF_PROFILE_DIR"):
        if os.environ.get(var):
            return Path(os.environ[var])
    found = []
    for d in [Path("profiles")] + sorted(Path(".").glob("*/profiles")):
        if d.is_dir():
            sessions = list_sessions(d)
            if sessions:
                found.append((sessions[-1].mtime, str(d), d))
    if not found:
        raise _Usage("no --profile-dir given, XAX_PROFILE_DIR is not set and there is no "
                     "./profiles or ./*/profiles with captures here")
    return max(found)[2]


def _when(t: float) -> str:
    return datetime.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def _listing(root: Path, sessions: List[ProfileSession]) -> str:
    lines = [f"{len(sessions)} capture(s) under {root}, oldest first:", ""]
    for i, s in enumerate(sessions):
        latest = "   (newest)" if i == len(sessions) - 1 else ""
        hosts = len(s.hosts)
        lines.append(f"  {s.name}{latest}")
        lines.append(f"      {_when(s.mtime)}   {hosts} host{'s' if hosts != 1 else ''}, "
                     f"{human_size(s.size)}")
        for f in s.files:
            st = f.stat()
            kind = "host" if f in s.hosts else "file"
            lines.append(f"      {kind} {f.name:<40} {human_size(st.st_size):>10}   "
                         f"{_when(st.st_mtime)}")
    lines += ["", f"open the newest: {PROG} --profile-dir={root} --ui=perfetto",
              f"analyse one:     jaxprof summary {sessions[-1].path}"]
    return "\n".join(lines)


def _extract(sessions: List[ProfileSession], dest: Path) -> List[Path]:
    if dest.exists() and not dest.is_dir():
        raise _Usage(f"--extract {dest}: exists and is not a directory")
    names = [s.path.name for s in sessions]
    if len(set(names)) != len(names):  # XAX's layout: every capture's directory is a timestamp
        names = [s.name.replace("/", "__") for s in sessions]
    targets = [dest / n for n in names]
    for t in targets:
        if t.exists() and any(t.iterdir()):
            raise _Usage(f"--extract {dest}: {t} already exists and is not empty; choose "
                         "another destination or remove it")
    written = []
    for s, t in zip(sessions, targets):
        t.mkdir(parents=True, exist_ok=True)
        for f in s.files:
            shutil.copy2(f, t / f.name)
            written.append(t / f.name)
        print(f"copied {s.name} -> {t} ({len(s.files)} file(s), {human_size(s.size)})")
    return written


def _perfetto(session: ProfileSession, args: argparse.Namespace) -> int:
    from ...view import view

    print(f"capture: {session.path}", flush=True)
    v = view(session.path, serve=True, port=args.perfetto_port, serve_for=args.serve_for,
             output=args.output)
    try:
        v.wait()
    except KeyboardInterrupt:
        pass
    finally:
        v.stop()
    print("served" if v.downloads else "stopped serving (nothing downloaded the trace); "
          f"the trace stays at {v.trace_path}", flush=True)
    return 0


def _start_tensorboard(root: Path, session: ProfileSession, tb: List[str],
                       args: argparse.Namespace) -> "subprocess.Popen[bytes]":
    from .profiling import has_profile_plugin, tensorboard_log_dir

    if not has_profile_plugin():
        print("note: captures show in TensorBoard's Profile tab, which needs "
              "`pip install xprof` (or tensorboard-plugin-profile)", file=sys.stderr)
    cmd = tb + ["--logdir", str(tensorboard_log_dir(root, session)), "--port", str(args.port)]
    if args.bind_all:
        cmd.append("--bind_all")
    print(f"running: {' '.join(cmd)}\n  then http://localhost:{args.port} (Profile tab); "
          "Ctrl-C stops it", flush=True)
    return subprocess.Popen(cmd)


def _wait(proc: "subprocess.Popen[bytes]") -> int:
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        return 0


def run(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.all and args.extract is None:
        parser.error("--all goes with --extract")
    if args.all and args.session:
        parser.error("--all and --session exclude each other")
    for flag, port in (("--port", args.port), ("--perfetto-port", args.perfetto_port)):
        if not 0 <= port <= 65535:
            parser.error(f"{flag} {port}: expected 0 to 65535")
    if not args.serve_for > 0:
        parser.error(f"--serve-for {args.serve_for:g}: expected a positive number of seconds")
    try:
        root = Path(args.profile_dir).expanduser() if args.profile_dir else _default_dir()
        sessions = list_sessions(root)
        if not sessions:
            raise _Usage(f"--profile-dir {root}: no captures found (a capture is a directory "
                         "holding <host>.xplane.pb files, e.g. <dir>/plugins/profile/<session>/)")
        if args.list_only:
            print(_listing(root, sessions))
            return 0
        if args.extract is not None:
            chosen = sessions if args.all else [find_session(sessions, args.session)]
            _extract(chosen, Path(args.extract).expanduser())
            if args.ui is None:
                return 0
        session = find_session(sessions, args.session)
        ui = args.ui or "both"
        from .profiling import TENSORBOARD_INSTALL, tensorboard_command

        tb = tensorboard_command() if ui in ("both", "tensorboard") else None
        if tb is None and ui != "perfetto":
            install = f"TensorBoard is not installed. Install it with\n    {TENSORBOARD_INSTALL}"
            if ui == "tensorboard":
                raise _Usage(f"{install}\nor open the capture in the Perfetto UI, which needs "
                             f"nothing more:\n    {PROG} --profile-dir={root} --ui=perfetto")
            print(f"{install}\nOpening the capture in the Perfetto UI only.", flush=True)
        proc = _start_tensorboard(root, session, tb, args) if tb is not None else None
        status = 0
        if ui != "tensorboard":
            if args.bind_all:
                print("note: the Perfetto trace is served on 127.0.0.1 only", file=sys.stderr)
            try:
                status = _perfetto(session, args)
            except BaseException:
                if proc is not None:
                    proc.terminate()
                raise
        return _wait(proc) if proc is not None else status
    except (_Usage, ProfileError, OSError) as e:  # OSError: a port in use, an unwritable DEST
        print(f"view_profile: error: {e}", file=sys.stderr)
        return 2


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
