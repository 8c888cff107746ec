"""Many hosts on a Dask cluster: each worker reads its hosts' profiles where it runs (local paths,
or ``gs://``, ``s3://``, ``file://`` URLs through fsspec) and turns each into its partial summary
(a few hundred KB at most, see docs/multihost.md); the partials are merged in a tree and the
driver renders the result, equal to ``jaxprof summary`` on the same hosts.

    from jaxprof.distributed import summarize
    text = summarize("s3://bucket/logs/plugins/profile/run1/")          # a LocalCluster
    data = summarize(paths, client=Client("tcp://scheduler:8786"), format="json")

Command line: ``jaxprof-dask PATH... [--scheduler ADDRESS] [--format table|json|csv]`` or
``python -m jaxprof.distributed``. Dask (``dask[distributed]``) and, for URLs, fsspec and the
filesystem's package (s3fs, gcsfs) are needed only here.
"""
from __future__ import annotations

import argparse
import os
import posixpath
import shutil
import sys
import time
import uuid
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from . import _core
from .errors import InvalidOptionError, ProfileError

__all__ = ["summarize", "hosts", "partials", "list_hosts", "export_parquet", "main"]

_XSPACE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")
_PARTIAL_SUFFIXES = (".partial", ".partial.gz")


def _is_url(path: str) -> bool:
    return "://" in path


def _host_of(path: str) -> str:
    name = posixpath.basename(path.rstrip("/"))
    for suffix in _XSPACE_SUFFIXES + _PARTIAL_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name.split(".", 1)[0] or name


def _fs(url: str, storage_options: Optional[dict]):
    import fsspec

    fs, root = fsspec.core.url_to_fs(url, **(storage_options or {}))
    return fs, root


def list_hosts(paths_or_logdir, session: Optional[str] = None,
               storage_options: Optional[dict] = None) -> List[str]:
    """The host files behind a log directory, a run directory, or a list of files (local paths
    or URLs), as jaxprof finds them: ``plugins/profile/<session>/<host>.xplane.pb[.gz]`` (the
    newest session unless ``session`` is given), and ``*.partial`` files as they are."""
    return _discover(paths_or_logdir, session, storage_options)[0]


def _discover(paths_or_logdir, session: Optional[str],
              storage_options: Optional[dict]) -> Tuple[List[str], dict]:
    """The host files, and what was read as the command line describes it (the fields of its
    JSON "input" member but the hosts, which the partials name)."""
    if isinstance(paths_or_logdir, (str, os.PathLike)):
        paths_or_logdir = [os.fspath(paths_or_logdir)]
    given = [os.fspath(p) for p in paths_or_logdir]
    out: List[str] = []
    read = {"path": given[0] if given else "", "layout": "file", "session": "",
            "session_dir": "", "sessions": [], "newest_by_default": False}
    for path in given:
        if path.endswith(_XSPACE_SUFFIXES + _PARTIAL_SUFFIXES):
            out.append(path)
            continue
        found, where = _hosts_in_dir(path, session, storage_options)
        out.extend(found)
        if len(given) == 1:
            read.update(where)
    if not out:
        raise FileNotFoundError(f"no *.xplane.pb or *.partial files in {given}")
    return out, read


def _hosts_in_dir(path: str, session: Optional[str],
                  storage_options: Optional[dict]) -> Tuple[List[str], dict]:
    if _is_url(path):
        fs, root = _fs(path, storage_options)
        protocol = path.split("://", 1)[0]
        join = lambda p: f"{protocol}://{p}"  # noqa: E731
        listdir = lambda d: [e.rstrip("/") for e in fs.ls(d, detail=False)]  # noqa: E731
        isdir = fs.isdir
    else:
        root = path
        join = lambda p: p  # noqa: E731
        listdir = lambda d: [os.path.join(d, e) for e in os.listdir(d)]  # noqa: E731
        isdir = os.path.isdir
    if not isdir(root):
        raise FileNotFoundError(f"{path}: no such directory")

    def files(d):
        return sorted(p for p in listdir(d) if p.endswith(_XSPACE_SUFFIXES + _PARTIAL_SUFFIXES))

    found = files(root)
    if found:
        name = posixpath.basename(root.rstrip("/")) or posixpath.basename(
            posixpath.dirname(root.rstrip("/")))
        return [join(p) for p in found], {"layout": "run-dir", "session": name,
                                          "session_dir": path, "sessions": [name]}
    sessions_dir = posixpath.join(root, "plugins", "profile") if isdir(
        posixpath.join(root, "plugins", "profile")) else root
    sessions = sorted(p for p in listdir(sessions_dir) if isdir(p) and files(p))
    if not sessions:
        raise FileNotFoundError(f"{path}: no profile (expected plugins/profile/<session>/"
                                f"<host>.xplane.pb)")
    if session is None:
        chosen = sessions[-1]
    else:
        named = [s for s in sessions if posixpath.basename(s) == session]
        if not named:
            raise FileNotFoundError(
                f"{path}: no session {session!r}; sessions: "
                f"{', '.join(posixpath.basename(s) for s in sessions)}")
        chosen = named[0]
    names = [posixpath.basename(s) for s in sessions]
    return [join(p) for p in files(chosen)], {
        "layout": "log-dir", "session": posixpath.basename(chosen),
        "session_dir": join(chosen), "sessions": names,
        "newest_by_default": session is None and len(sessions) > 1}


def _partial_of_url(path: str, parts: str, storage_options: Optional[dict]) -> bytes:
    """One host's partial from a URL, read through fsspec where this runs."""
    import fsspec

    if path.endswith(_PARTIAL_SUFFIXES):
        with fsspec.open(path, "rb", compression="infer", **(storage_options or {})) as f:
            data = f.read()
        # Checked here, where its URL is known: a damaged file is named in the message.
        return _core.merge_partials([data], [path])
    with fsspec.open(path, "rb", **(storage_options or {})) as f:
        data = f.read()
    return _core.partial_of_bytes(data, _host_of(path), path, parts)


def _partials_of_hosts(paths: List[str], parts: str = "summary",
                       storage_options: Optional[dict] = None,
                       keep_going: bool = False) -> Tuple[bytes, List[Tuple[str, str, str]]]:
    """The partials of a batch of hosts, computed where this runs, as one partial file; and the
    hosts skipped with ``keep_going`` as (host, path, reason). Local files go to the C++ loader
    in one call (memory-mapped, host by host, one encoded partial kept per host); URLs are read
    through fsspec one at a time."""
    local = [p[len("file://"):] if p.startswith("file://") else p
             for p in paths if not _is_url(p) or p.startswith("file://")]
    urls = [p for p in paths if _is_url(p) and not p.startswith("file://")]
    files: List[bytes] = []
    skipped: List[Tuple[str, str, str]] = []
    if local:
        try:
            data, local_skipped = _core.partials_of_paths(local, "", [], 1, keep_going, parts)
            files.append(data)
            skipped.extend(local_skipped)
        except ProfileError:
            if not keep_going:
                raise
            # No host of the batch could be read: each one's own reason.
            for path in local:
                try:
                    files.append(_core.partials_of_paths([path], "", [], 1, False, parts)[0])
                except ProfileError as e:
                    skipped.append((_host_of(path), path, str(e)))
    for url in urls:
        try:
            files.append(_partial_of_url(url, parts, storage_options))
        except (OSError, ProfileError) as e:
            if not keep_going:
                raise
            skipped.append((_host_of(url), url, str(e)))
    return (files[0] if len(files) == 1 else _core.merge_partials(files)), skipped


def _merge(*results: Tuple[bytes, list]) -> Tuple[bytes, list]:
    """Batches' (partials, skipped hosts) as one."""
    return (_core.merge_partials([r[0] for r in results]),
            [s for r in results for s in r[1]])


def _merge_one_capture(where: str, *results: Tuple[bytes, list]) -> Tuple[bytes, list]:
    """:func:`_merge` for hosts found in one directory: refuses them as soon as the hosts merged
    so far cannot be one capture's, rather than after every host was read."""
    merged = _merge(*results)
    _core.check_partial_capture(merged[0], where, True)
    return merged


def _batches(files: List[str], workers: int, batch: Optional[int]) -> List[List[str]]:
    """Hosts per task: a task costs the scheduler and the worker a few round trips and the
    merge tree one more partial, which on a loaded machine weighed more than a host's reading
    (docs/multihost.md); a few batches per worker still balance the load and show progress."""
    if batch is None:
        batch = max(1, min(64, -(-len(files) // (8 * max(1, workers)))))
    return [files[i:i + batch] for i in range(0, len(files), batch)]


def partials(paths_or_logdir, client=None, session: Optional[str] = None,
             parts: str = "summary", fan_in: int = 8,
             progress: Optional[Callable[[int, int, float], None]] = None,
             storage_options: Optional[dict] = None, keep_going: bool = False,
             skipped: Optional[List[Tuple[str, str, str]]] = None,
             batch: Optional[int] = None) -> bytes:
    """The partials of every host, computed on the cluster's workers in batches of ``batch``
    hosts (default: about eight batches per worker, at most 64 hosts each) and merged in a tree
    of ``fan_in`` partials per merge; one partial file's bytes (write them to ``*.partial`` for
    the CLI). ``client``: a ``dask.distributed.Client`` (default: a LocalCluster sized to the
    machine, closed afterwards). ``progress(done, total, seconds)`` is called as hosts finish.
    ``storage_options`` go to fsspec (e.g. ``{"endpoint_url": ...}`` for an S3-compatible
    server). ``keep_going``: a host that cannot be read is left out and appended to ``skipped``
    as (host, path, reason) instead of failing the run."""
    return _merged_partials(paths_or_logdir, client, session, parts, fan_in, progress,
                            storage_options, keep_going, skipped, batch)[0]


def _merged_partials(paths_or_logdir, client, session, parts, fan_in, progress,
                     storage_options, keep_going, skipped, batch) -> Tuple[bytes, str, str]:
    """:func:`partials`, with what was read as the command line says it: its stderr line and
    its JSON "input" member."""
    from dask.distributed import Client, LocalCluster, as_completed

    files, read = _discover(paths_or_logdir, session, storage_options)
    own = client is None
    cluster = None
    if own:
        cluster = LocalCluster(processes=True, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    try:
        start = time.monotonic()
        workers = sum(client.nthreads().values()) or 1
        batches = _batches(files, workers, batch)
        # Hosts found in one directory must be one capture's, as the CLI requires: checked at
        # every merge on the workers (a run stops at the first merge that shows unrelated
        # hosts), and on the whole set below.
        given = [os.fspath(paths_or_logdir)] if isinstance(
            paths_or_logdir, (str, os.PathLike)) else [os.fspath(p) for p in paths_or_logdir]
        from_directory = any(not p.endswith(_XSPACE_SUFFIXES + _PARTIAL_SUFFIXES) for p in given)
        # Named as the CLI names it: the directory that holds the hosts (the session's run
        # directory), so that its "Read one of them (jaxprof DIR/FILE)" names a real file.
        where = posixpath.dirname(files[0]) if from_directory and files else given[0]

        def merge(*parts):
            if from_directory:
                return client.submit(_merge_one_capture, where, *parts, pure=False)
            return client.submit(_merge, *parts, pure=False)

        # Keys unique to this call: a key the scheduler still holds (an earlier call's failed
        # batch) would be handed back instead of run again.
        run = uuid.uuid4().hex[:12]
        futures = {client.submit(_partials_of_hosts, b, parts, storage_options, keep_going,
                                 key=f"jaxprof-partials-{run}-{i}", pure=False): len(b)
                   for i, b in enumerate(batches)}
        level: List = []
        pending: List = []
        done = 0
        # Merge as batches finish, fan_in at a time, on the workers; then the merges' merges.
        for future in as_completed(futures):
            done += futures[future]
            if progress is not None:
                progress(done, len(files), time.monotonic() - start)
            pending.append(future)
            if len(pending) == fan_in:
                level.append(merge(*pending))
                pending = []
            for m in level:
                if m.status == "error":  # unrelated hosts: stop now, not after every host
                    client.cancel(list(futures) + level)
                    m.result()
        level.extend(pending)
        while len(level) > 1:
            level = [merge(*level[i:i + fan_in]) if
                     len(level[i:i + fan_in]) > 1 else level[i]
                     for i in range(0, len(level), fan_in)]
        result, result_skipped = level[0].result()
        result_skipped.sort()
        if skipped is not None:
            skipped.extend(result_skipped)
        if result_skipped and not _core.partial_hosts(result):
            host, path, reason = result_skipped[0]
            raise ProfileError(f"no host could be read; the first: {reason}", path)
        # One batch: its partials as they came; the same file as a merge of one.
        merged = _core.merge_partials([result])
        for w in _core.check_partial_capture(merged, where, from_directory):
            sys.stderr.write(f"jaxprof: warning: {w}\n")
        # The hosts in the order of their files, as the command line lists them.
        order = {f: i for i, f in enumerate(files)}
        hosts = sorted(((h, p) for h, p, _ in _core.partial_hosts(merged)),
                       key=lambda hp: order.get(hp[1], len(order)))
        line, described = _core.describe_input(
            read["path"], read["layout"], read["session"], read["session_dir"],
            read["sessions"], read["newest_by_default"], hosts)
        return merged, line, described
    finally:
        if own:
            client.close()
            cluster.close()


def summarize(paths_or_logdir, client=None, format: str = "table", top: int = 5,
              observations: int = 3, session: Optional[str] = None,
              progress: Optional[Callable[[int, int, float], None]] = None,
              storage_options: Optional[dict] = None, keep_going: bool = False,
              skipped: Optional[List[Tuple[str, str, str]]] = None,
              batch: Optional[int] = None):
    """``jaxprof summary`` of many hosts, computed on a Dask cluster: the text of the table, or
    the JSON as a dict (``format="json"``); one screen has no single table shape for CSV.
    ``keep_going``, ``skipped``, ``batch``: as in :func:`partials`."""
    if format not in ("table", "json"):
        raise InvalidOptionError(f"format={format!r}: expected 'table' or 'json'", None,
                                 "expected 'table' or 'json'")
    merged, _, described = _merged_partials(paths_or_logdir, client, session, "summary", 8,
                                            progress, storage_options, keep_going, skipped,
                                            batch)
    out = _core.render_partials([merged], "summary", format, top, observations)
    if format == "json":
        import json

        return json.loads(_with_input(out, described))
    return out


def hosts(paths_or_logdir, client=None, format: str = "table", top: int = 20,
          session: Optional[str] = None,
          progress: Optional[Callable[[int, int, float], None]] = None,
          storage_options: Optional[dict] = None, keep_going: bool = False,
          skipped: Optional[List[Tuple[str, str, str]]] = None, batch: Optional[int] = None):
    """``jaxprof hosts`` (stragglers, step-time outliers, idle, clock offsets) on a Dask cluster:
    the text of the table or CSV, or the JSON as a dict (``format="json"``)."""
    if format not in ("table", "json", "csv"):
        raise InvalidOptionError(f"format={format!r}: expected 'table', 'json' or 'csv'", None,
                                 "expected 'table', 'json' or 'csv'")
    merged, _, described = _merged_partials(paths_or_logdir, client, session, "summary", 8,
                                            progress, storage_options, keep_going, skipped,
                                            batch)
    out = _core.render_partials([merged], "hosts", format, top, 0)
    if format == "json":
        import json

        return json.loads(_with_input(out, described))
    return out


def export_parquet(paths_or_logdir, directory, client=None, session: Optional[str] = None,
                   hosts: Optional[Iterable[str]] = None,
                   progress: Optional[Callable[[int, int], None]] = None) -> dict:
    """Every table of every host as Parquet (``jaxprof.export_parquet``), one Dask task per
    host: the worker that loads a host writes its files, so ``directory`` must be a path every
    worker sees. ``client``: as in :func:`partials` (default: a LocalCluster for the run)."""
    from .parquet_export import dask_export_parquet

    return dask_export_parquet(paths_or_logdir, directory, client, session=session,
                               hosts=hosts, progress=progress)


def _with_input(out: str, described: str) -> str:
    """A command's JSON object with the "input" member first, as the command line writes it."""
    rest = out.lstrip()[1:].lstrip()  # after the object's "{"
    return '{"input": ' + described + (", " if rest != "}" else "") + rest


def _stderr_progress(done: int, total: int, seconds: float) -> None:
    rate = done / seconds if seconds > 0 else 0.0
    end = "\n" if done == total else ""
    sys.stderr.write(f"\rjaxprof-dask: {done}/{total} hosts, {rate:.1f} hosts/s{end}")
    sys.stderr.flush()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="jaxprof-dask",
        description="jaxprof summary (or hosts) of many hosts on a Dask cluster: partial "
                    "summaries computed on the workers, merged in a tree. Output equals "
                    "`jaxprof summary` on the same hosts.")
    parser.add_argument("paths", nargs="+",
                        help="log directory, run directory, *.xplane.pb[.gz] or *.partial files; "
                             "local paths or fsspec URLs (s3://, gs://, file://)")
    parser.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster "
                                            "sized to this machine)")
    parser.add_argument("--command", choices=["summary", "hosts"], default="summary")
    parser.add_argument("--format", choices=["table", "json", "csv"], default="table",
                        help="table or json; hosts also csv (summary has no single table shape)")
    parser.add_argument("--top", type=int, default=None,
                        help="summary: rows per section (default 5); hosts: hosts in the table "
                             "(0 = all; default: all, or 20 on a terminal)")
    parser.add_argument("--wide", action="store_true", help="never cut table cells")
    parser.add_argument("--observations", type=int, default=3)
    parser.add_argument("--session", help="session to read from a log directory (default: "
                                          "newest)")
    parser.add_argument("-o", "--output-partial",
                        help="also write the merged partials to this *.partial file")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an fsspec storage option for URLs (repeat), e.g. "
                             "endpoint_url=http://127.0.0.1:9000")
    parser.add_argument("--keep-going", action="store_true",
                        help="skip a host whose file cannot be read (reported on stderr) "
                             "instead of stopping")
    parser.add_argument("--batch", type=int, default=None, metavar="N",
                        help="hosts per Dask task (default: about eight tasks per worker, at "
                             "most 64 hosts each)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    if args.command == "summary" and args.format == "csv":
        parser.error("argument --format: summary prints table or json (csv: use --command hosts)")
    terminal = sys.stdout.isatty()
    _core.set_table_layout(wide=args.wide,
                           line_width=shutil.get_terminal_size().columns if terminal else 0,
                           python=False)
    storage = {}
    for item in args.storage_option:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--storage-option {item}: expected KEY=VALUE")
        storage[key] = value
    try:
        from dask.distributed import Client
    except ImportError:
        sys.stderr.write("jaxprof-dask: needs Dask: pip install 'dask[distributed]'\n")
        return 2
    if args.batch is not None and args.batch < 1:
        parser.error("--batch must be at least 1")
    client = Client(args.scheduler) if args.scheduler else None
    try:
        skipped: List[Tuple[str, str, str]] = []
        merged, line, described = _merged_partials(
            args.paths, client, args.session, "all" if args.output_partial else "summary", 8,
            None if args.quiet else _stderr_progress, storage, args.keep_going, skipped,
            args.batch)
        for host, path, reason in skipped:
            sys.stderr.write(f"jaxprof-dask: skipped host {host}: {reason}\n")
        if skipped:
            read = len(_core.partial_hosts(merged))
            sys.stderr.write(f"jaxprof-dask: read {read} hosts, skipped {len(skipped)}\n")
        if args.output_partial:
            with open(args.output_partial, "wb") as f:
                f.write(merged)
            sys.stderr.write(f"jaxprof-dask: wrote {args.output_partial} "
                             f"({_core.format_bytes(len(merged))}): merged partial summary\n")
        if args.top is not None:
            top = args.top
        elif args.command == "summary":
            top = 5
        else:
            top = 20 if terminal and args.format == "table" else 0
        out = _core.render_partials([merged], args.command, args.format, top,
                                    args.observations)
        if args.format == "json":
            out = _with_input(out, described)
        else:
            sys.stderr.write(f"jaxprof-dask: {line}\n")
        sys.stdout.write(out)
    except (FileNotFoundError, ValueError, ProfileError) as e:
        sys.stderr.write(f"jaxprof-dask: {e}\n")
        return 2
    finally:
        if client is not None:
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
