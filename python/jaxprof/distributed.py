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
import sys
import time
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from . import _core
from .errors import ProfileError

__all__ = ["summarize", "hosts", "partials", "list_hosts", "main"]

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
    if isinstance(paths_or_logdir, (str, os.PathLike)):
        paths_or_logdir = [os.fspath(paths_or_logdir)]
    out: List[str] = []
    for path in paths_or_logdir:
        path = os.fspath(path)
        if path.endswith(_XSPACE_SUFFIXES + _PARTIAL_SUFFIXES):
            out.append(path)
            continue
        out.extend(_hosts_in_dir(path, session, storage_options))
    if not out:
        raise FileNotFoundError(f"no *.xplane.pb or *.partial files in {list(paths_or_logdir)}")
    return out


def _hosts_in_dir(path: str, session: Optional[str],
                  storage_options: Optional[dict]) -> List[str]:
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
        return [join(p) for p in found]
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
    return [join(p) for p in files(chosen)]


def _partial_of(path: str, parts: str = "summary",
                storage_options: Optional[dict] = None) -> bytes:
    """One host's partial, computed where this runs. Local files are memory-mapped; URLs are read
    through fsspec."""
    if path.endswith(_PARTIAL_SUFFIXES):
        if _is_url(path):
            import fsspec

            with fsspec.open(path, "rb", compression="infer", **(storage_options or {})) as f:
                return f.read()
        with open(path, "rb") as f:
            data = f.read()
        return data if not path.endswith(".gz") else _gunzip(data)
    if not _is_url(path) or path.startswith("file://"):
        local = path[len("file://"):] if path.startswith("file://") else path
        data, skipped = _core.partials_of_paths([local], "", [], 1, False, parts)
        return data
    import fsspec

    with fsspec.open(path, "rb", **(storage_options or {})) as f:
        data = f.read()
    return _core.partial_of_bytes(data, _host_of(path), path, parts)


def _gunzip(data: bytes) -> bytes:
    import gzip

    return gzip.decompress(data)


def _merge(*files: bytes) -> bytes:
    return _core.merge_partials(list(files))


def partials(paths_or_logdir, client=None, session: Optional[str] = None,
             parts: str = "summary", fan_in: int = 8,
             progress: Optional[Callable[[int, int, float], None]] = None,
             storage_options: Optional[dict] = None) -> bytes:
    """The partials of every host, computed on the cluster's workers and merged in a tree of
    ``fan_in`` partials per merge; one partial file's bytes (write them to ``*.partial`` for the
    CLI). ``client``: a ``dask.distributed.Client`` (default: a LocalCluster sized to the
    machine, closed afterwards). ``progress(done, total, seconds)`` is called as hosts finish.
    ``storage_options`` go to fsspec (e.g. ``{"endpoint_url": ...}`` for an S3-compatible
    server)."""
    from dask.distributed import Client, LocalCluster, as_completed

    files = list_hosts(paths_or_logdir, session, storage_options)
    own = client is None
    cluster = None
    if own:
        cluster = LocalCluster(processes=True, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    try:
        start = time.monotonic()
        futures = [client.submit(_partial_of, f, parts, storage_options,
                                 key=f"jaxprof-partial-{i}", pure=False)
                   for i, f in enumerate(files)]
        level: List = []
        pending: List = []
        done = 0
        # Merge as hosts finish, fan_in at a time, on the workers; then the merges' merges.
        for future in as_completed(futures):
            done += 1
            if progress is not None:
                progress(done, len(files), time.monotonic() - start)
            pending.append(future)
            if len(pending) == fan_in:
                level.append(client.submit(_merge, *pending, pure=False))
                pending = []
        level.extend(pending)
        while len(level) > 1:
            level = [client.submit(_merge, *level[i:i + fan_in], pure=False) if
                     len(level[i:i + fan_in]) > 1 else level[i]
                     for i in range(0, len(level), fan_in)]
        result = level[0].result()
        # One host: its partial as it came; the same file as a merge of one.
        merged = _core.merge_partials([result])
        # Hosts found in one directory must be one capture's, as the CLI requires.
        given = [os.fspath(paths_or_logdir)] if isinstance(
            paths_or_logdir, (str, os.PathLike)) else [os.fspath(p) for p in paths_or_logdir]
        from_directory = any(not p.endswith(_XSPACE_SUFFIXES + _PARTIAL_SUFFIXES) for p in given)
        for w in _core.check_partial_capture(merged, given[0], from_directory):
            sys.stderr.write(f"jaxprof: warning: {w}\n")
        return merged
    finally:
        if own:
            client.close()
            cluster.close()


def summarize(paths_or_logdir, client=None, format: str = "table", top: int = 5,
              observations: int = 3, session: Optional[str] = None,
              progress: Optional[Callable[[int, int, float], None]] = None,
              storage_options: Optional[dict] = None):
    """``jaxprof summary`` of many hosts, computed on a Dask cluster: the text of the table or
    CSV, or the JSON as a dict (``format="json"``)."""
    merged = partials(paths_or_logdir, client=client, session=session, progress=progress,
                      storage_options=storage_options)
    out = _core.render_partials([merged], "summary", format, top, observations)
    if format == "json":
        import json

        return json.loads(out)
    return out


def hosts(paths_or_logdir, client=None, format: str = "table", top: int = 20,
          session: Optional[str] = None,
          progress: Optional[Callable[[int, int, float], None]] = None,
          storage_options: Optional[dict] = None):
    """``jaxprof hosts`` (stragglers, step-time outliers, idle, clock offsets) on a Dask cluster."""
    merged = partials(paths_or_logdir, client=client, session=session, progress=progress,
                      storage_options=storage_options)
    out = _core.render_partials([merged], "hosts", format, top, 0)
    if format == "json":
        import json

        return json.loads(out)
    return out


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
    parser.add_argument("--format", choices=["table", "json", "csv"], default="table")
    parser.add_argument("--top", type=int, default=None,
                        help="rows per section (summary: 5; hosts: 20)")
    parser.add_argument("--observations", type=int, default=3)
    parser.add_argument("--session", help="session to read from a log directory (default: "
                                          "newest)")
    parser.add_argument("-o", "--output-partial",
                        help="also write the merged partials to this *.partial file")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an fsspec storage option for URLs (repeat), e.g. "
                             "endpoint_url=http://127.0.0.1:9000")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
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
    client = Client(args.scheduler) if args.scheduler else None
    try:
        merged = partials(args.paths, client=client, session=args.session,
                          parts="all" if args.output_partial else "summary",
                          progress=None if args.quiet else _stderr_progress,
                          storage_options=storage)
        if args.output_partial:
            with open(args.output_partial, "wb") as f:
                f.write(merged)
        top = args.top if args.top is not None else (5 if args.command == "summary" else 20)
        sys.stdout.write(_core.render_partials([merged], args.command, args.format, top,
                                               args.observations))
    except (FileNotFoundError, ValueError, ProfileError) as e:
        sys.stderr.write(f"jaxprof-dask: {e}\n")
        return 2
    finally:
        if client is not None:
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
