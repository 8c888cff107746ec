#!/usr/bin/env python3
"""Run XProf's own op statistics on one .xplane.pb file, cold, for benchmarks.

usage: peer_xprof.py [MODE] FILE.xplane.pb [--out OUT] [-- CLI_FLAGS...]

MODE (default hlo_stats):
  hlo_stats, op_profile, framework_op_stats, ...
      the XProf converter through its Python entry point
      xprof.convert.raw_to_tool_data.xspace_to_tool_data([FILE], TOOL,
      {"use_saved_result": False}): XSpace -> OpStats -> the tool's JSON.
  cli:COMMAND  (for example cli:get_hlo_stats, cli:aggregate_xplane_events)
      XProf's command-line tool `xprof COMMAND FILE --bypass_cache`, run in
      this process (the same as the `xprof` console script). Flags after `--` go to
      the command (for example --plane_regex=^/host:CPU$ --event_regex=^train$).

Each run is cold: the file is linked into a fresh temporary directory (XProf
treats the file's directory as a session, reads every *.xplane.pb beside it
as another host, and writes cache files and HLO protos there), TMPDIR points
into it (the CLI keeps a result cache there), and the directory is removed at
the end. Exit status 0 only when XProf produced a non-empty result without an
error status; the result is written to OUT when asked, and a one-line summary
goes to stdout.
"""

import json
import os
import shutil
import sys
import tempfile


def fail(msg):
    print(f"peer_xprof: {msg}", file=sys.stderr)
    sys.exit(1)


def summarize(data):
    """A short description of a tool result (JSON text or bytes)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    try:
        obj = json.loads(data)
    except ValueError:
        return f"{len(data)} chars (not JSON)", None
    if isinstance(obj, dict) and str(obj.get("status", "")).upper() in ("ERROR", "NO_DATA"):
        return None, obj.get("error") or obj.get("reason") or obj.get("message") or "error status"
    if isinstance(obj, dict) and "rows" in obj:  # gviz DataTable (hlo_stats)
        return f"{len(obj['rows'])} rows", None
    if isinstance(obj, list) and obj and isinstance(obj[0], dict) and "rows" in obj[0]:
        return f"{sum(len(t.get('rows', [])) for t in obj)} rows in {len(obj)} tables", None
    for key in ("records", "aggregates"):  # xprof CLI results
        if isinstance(obj, dict) and isinstance(obj.get(key), list):
            return f"{len(obj[key])} {key}", None
    return f"{len(data)} chars of JSON", None


def run_tool(link, tool):
    from xprof.convert import raw_to_tool_data  # pylint: disable=import-outside-toplevel

    data, _ = raw_to_tool_data.xspace_to_tool_data([link], tool, {"use_saved_result": False})
    return data


def run_cli(link, command, flags=()):
    import contextlib  # pylint: disable=import-outside-toplevel
    import io  # pylint: disable=import-outside-toplevel

    from xprof.cli import xprof_cli  # pylint: disable=import-outside-toplevel

    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out):
        try:
            xprof_cli.main(["xprof", command, link, "--bypass_cache", *flags])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    text = out.getvalue()
    if code != 0:
        fail(f"xprof {command} exited with {code}: {text.strip()[:500]}")
    return text


def main(argv):
    args = [a for a in argv[1:]]
    flags = []
    if "--" in args:
        i = args.index("--")
        args, flags = args[:i], args[i + 1:]
    out_path = None
    if "--out" in args:
        i = args.index("--out")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        out_path = args[i + 1]
        del args[i:i + 2]
    if len(args) == 1:
        mode, path = "hlo_stats", args[0]
    elif len(args) == 2:
        mode, path = args
    else:
        sys.exit(__doc__)
    if not os.path.isfile(path):
        fail(f"no such file: {path}")

    work = tempfile.mkdtemp(prefix="peer_xprof_")
    try:
        base = os.path.basename(path)
        if not base.endswith(".xplane.pb"):
            base += ".xplane.pb"
        link = os.path.join(work, "session", base)
        os.makedirs(os.path.dirname(link))
        os.symlink(os.path.abspath(path), link)
        os.environ["TMPDIR"] = work
        tempfile.tempdir = None  # pick up the new TMPDIR

        if mode.startswith("cli:"):
            data = run_cli(link, mode[len("cli:"):], flags)
        else:
            data = run_tool(link, mode)
        if not data:
            fail(f"xprof {mode} returned no data for {path}")
        summary, error = summarize(data)
        if error is not None:
            fail(f"xprof {mode} failed on {path}: {str(error)[:500]}")
        if out_path:
            with open(out_path, "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode())
        print(f"xprof {mode}: {summary}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
