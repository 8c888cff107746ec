"""Every table of every host written as Hive-partitioned Parquet, a host per thread at a time.

    DIR/<table>/host=<host>/part.parquet

A host's profile is loaded, each of its tables (docs/tables.md) built and written, and the profile
dropped before its thread reads the next host, so memory stays near one host's per thread whatever
the number of hosts. With a Dask client each host is one task: the worker that loads the host
writes its files (DIR must be one path every worker sees). Every way writes the same bytes per
host, since a host's files depend on its profile alone.

The ``host`` column is the partition key, so it lives in the directory name and not in the files
(Arrow and Dask refuse a column that is in both). Times are on each host's own clock, relative to
its earliest event; the ``hosts`` table gives each host's ``base_ns`` to put them on one timeline.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import quote

from ._optional import require
from .errors import InvalidOptionError, ProfileError

__all__ = ["export_parquet", "host_inputs", "HOSTS_TABLE"]

# The export's own table: what each host's times are relative to, and which file it came from.
HOSTS_TABLE = "hosts"
_HLO_SUFFIXES = (".hlo.pb", ".hlo_proto.pb")
_PARTIAL_SUFFIXES = (".partial", ".partial.gz")


def host_inputs(paths: Union[str, "os.PathLike[str]", Sequence[Any]],
                session: Optional[str] = None,
                hosts: Optional[Iterable[str]] = None) -> List[Tuple[str, str]]:
    """The hosts to export as (host, file): a directory gives its session's host files (the
    newest session unless ``session``), a file is one host; ``hosts`` keeps those named."""
    from .distributed import _host_of, list_hosts

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: List[Tuple[str, str]] = []
    for p in (os.fspath(p) for p in paths):
        if p.endswith(_HLO_SUFFIXES):
            continue
        files = list_hosts(p, session) if os.path.isdir(p) else [p]
        for f in files:
            if f.endswith(_PARTIAL_SUFFIXES):
                raise InvalidOptionError(f"{f}: a partial summary holds no events; export "
                                         "reads the hosts' profiles", f, "a partial summary")
        # Absolute: a Dask worker opens them from its own working directory.
        found.extend((_host_of(f), os.path.abspath(f)) for f in files)
    if not found:
        raise ProfileError(f"no profile among {list(map(os.fspath, paths))}", None,
                           "no profile")
    if hosts is not None:
        wanted = set(hosts)
        missing = sorted(wanted - {h for h, _ in found})
        if missing:
            raise ProfileError(f"no host {', '.join(missing)} among the files given", None,
                               "no host")
        found = [(h, f) for h, f in found if h in wanted]
    seen: Dict[str, str] = {}
    for host, f in found:
        if host in seen:
            raise InvalidOptionError(f"{seen[host]} and {f} are both host {host}: each host is "
                                     "one partition; give one of them", f, "duplicate host")
        seen[host] = f
    return found


def _partition(directory: str, table: str, host: str) -> str:
    # Hive's escaping: characters that would end the directory name or the key are %XX.
    return os.path.join(directory, table, "host=" + quote(host, safe=" -._~+@,:"))


def _encodings(table: Any) -> Dict[str, Any]:
    """How each column is encoded (docs/tables.md). Strings come as Arrow dictionaries and are
    written as Parquet dictionaries; booleans and doubles plain; integers (times, ids, counts: mostly rising or small steps)
    as DELTA_BINARY_PACKED, which packs them in a third of the bytes that dictionary plus snappy
    took and costs a fifth of the CPU that hashing every value into a dictionary did (host_ranges:
    287k rows, 96% of an export's bytes). Min/max statistics are kept for the columns that are
    not strings: over dictionary strings Arrow computes them from the decoded values, which cost
    as much as writing the column."""
    pa = require("pyarrow", "export_parquet()")
    strings, integers = [], []
    for field in table.schema:
        if pa.types.is_dictionary(field.type) or pa.types.is_string(field.type):
            strings.append(field.name)
        elif pa.types.is_integer(field.type):
            integers.append(field.name)
    return {"use_dictionary": strings,
            "column_encoding": {name: "DELTA_BINARY_PACKED" for name in integers} or None,
            "write_statistics": [f.name for f in table.schema if f.name not in strings]}


def _write(table: Any, path: str) -> int:
    """Writes one file whole or not at all (readers never see half of it)."""
    pq = require("pyarrow.parquet", "export_parquet()")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        pq.write_table(table, tmp, **_encodings(table))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return table.num_rows


def _hosts_row(profile: Any, path: str) -> Any:
    pa = require("pyarrow", "export_parquet()")
    fields = [
        pa.field("file", pa.string(), metadata={"unit": "", "meaning": "the file the host was "
                                                "read from"}),
        pa.field("base_ns", pa.int64(), metadata={
            "unit": "ns", "meaning": "the host's time zero: every *_ps time of its tables is "
                                     "relative to it"}),
        pa.field("devices", pa.int64(), metadata={"unit": "", "meaning": "its devices"}),
        pa.field("events", pa.int64(), metadata={"unit": "", "meaning": "its events"}),
    ]
    return pa.Table.from_arrays(
        [pa.array([path]), pa.array([profile.base_ns], pa.int64()),
         pa.array([len(profile.devices)], pa.int64()),
         pa.array([profile.num_events], pa.int64())], schema=pa.schema(fields))


def export_host(path: str, directory: str, hlo: Sequence[str] = ()) -> Dict[str, Any]:
    """Loads one host's file, writes each of its tables under ``directory`` and drops the
    profile; returns the host and the rows written per table. What a Dask worker runs."""
    from ._profile import load

    profile = load([path, *hlo] if hlo else path)
    loaded = profile.hosts
    if len(loaded) != 1:
        raise ProfileError(f"{path}: holds {len(loaded)} hosts ({', '.join(loaded)}); export "
                           "writes one host per file", path, "several hosts")
    host = loaded[0]  # as the tables' host column names it
    rows: Dict[str, int] = {}
    for name in profile.tables():
        table = profile.table(name, include_warmup=True)
        if "host" in table.column_names:
            table = table.drop_columns(["host"])
        rows[name] = _write(table, os.path.join(_partition(directory, name, host),
                                                "part.parquet"))
        del table
    rows[HOSTS_TABLE] = _write(_hosts_row(profile, path),
                               os.path.join(_partition(directory, HOSTS_TABLE, host),
                                            "part.parquet"))
    return {"host": host, "file": path, "rows": rows}


def _prepare(directory: Union[str, "os.PathLike[str]"]) -> str:
    directory = os.fspath(directory)
    if "://" in directory:
        raise InvalidOptionError(f"{directory}: export writes to a local (or mounted) "
                                 "directory", directory, "not a local directory")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise InvalidOptionError(f"{directory}: not a directory", directory, "not a directory")
    if os.path.isdir(directory) and os.listdir(directory):
        raise InvalidOptionError(
            f"{directory}: not empty (an export's hosts would mix with what it holds); give a "
            "new or empty directory", directory, "not empty")
    os.makedirs(directory, exist_ok=True)
    return directory


def export_parquet(paths: Union[str, "os.PathLike[str]", Sequence[Any]],
                   directory: Union[str, "os.PathLike[str]"], client: Any = None, *,
                   session: Optional[str] = None, hosts: Optional[Iterable[str]] = None,
                   progress: Any = None, threads: Optional[int] = None) -> Dict[str, Any]:
    """Writes every table of every host as ``directory/<table>/host=<host>/part.parquet``.

    ``paths``: host files (``*.xplane.pb[.gz]``, Chrome trace JSON, nsys-jax archives), run or
    log directories (``session`` picks one), and ``*.hlo.pb`` files that every host is loaded
    with. ``hosts`` keeps the hosts named. Without ``client`` the hosts are read here one after
    the other, ``threads`` hosts at a time (default: one per core this process may run on);
    with a ``dask.distributed.Client`` each host is a task on its workers.
    ``progress(done, total)`` is called as hosts finish. ``directory`` must be new or empty.

    Returns ``{"directory", "hosts": [names], "rows": {table: rows over all hosts}}``. A host
    that cannot be read raises its ProfileError (naming the file); the hosts written before it
    stay written.
    """
    inputs = host_inputs(paths, session, hosts)
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    hlo = [os.path.abspath(p) for p in given if os.fspath(p).endswith(_HLO_SUFFIXES)]
    directory = os.path.abspath(_prepare(directory))
    if client is None:
        done = _on_threads(inputs, directory, hlo, progress, threads)
    else:
        done = _on_dask(client, inputs, directory, hlo, progress)
        _check_unique(done)
    order = {f: i for i, (_, f) in enumerate(inputs)}
    done.sort(key=lambda r: order[r["file"]])
    rows: Dict[str, int] = {}
    for r in done:
        for name, n in r["rows"].items():
            rows[name] = rows.get(name, 0) + n
    return {"directory": directory, "hosts": [r["host"] for r in done], "rows": rows}


def _on_threads(inputs: List[Tuple[str, str]], directory: str, hlo: List[str], progress: Any,
                threads: Optional[int]) -> List[Dict[str, Any]]:
    """Hosts exported on a pool of threads, a few at a time: loading, building the tables (C++)
    and writing them (Arrow) release the GIL, so the hosts run side by side, and memory holds
    one host per thread whatever the number of hosts."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    if threads is None:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    if threads < 1:
        raise InvalidOptionError(f"threads must be 1 or more, not {threads}")
    threads = max(1, min(threads, len(inputs)))
    done, running = [], set()
    pending = iter(inputs)
    with ThreadPoolExecutor(threads, thread_name_prefix="jaxprof-export") as pool:
        try:
            while True:
                # Only `threads` hosts submitted at once: a host's error stops the others early.
                for _, path in pending:
                    running.add(pool.submit(export_host, path, directory, hlo))
                    if len(running) == threads:
                        break
                if not running:
                    break
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    done.append(future.result())  # a host's error stops the run, naming its file
                    _check_unique(done)
                    if progress is not None:
                        progress(len(done), len(inputs))
        except BaseException:
            for future in running:
                future.cancel()
            raise
    return done


def _check_unique(done: List[Dict[str, Any]]) -> None:
    # Files named apart whose profiles name the same host: the later one's partitions replaced
    # the earlier one's.
    seen: Dict[str, str] = {}
    for r in done:
        if r["host"] in seen:
            raise InvalidOptionError(
                f"{seen[r['host']]} and {r['file']} are both host {r['host']}: each host is one "
                "partition; give one of them", r["file"], "duplicate host")
        seen[r["host"]] = r["file"]


def _on_dask(client: Any, inputs: List[Tuple[str, str]], directory: str, hlo: List[str],
             progress: Any) -> List[Dict[str, Any]]:
    from dask.distributed import as_completed

    # Keys unique to this run: the scheduler would hand back an earlier run's result for a key
    # it still holds.
    run = uuid.uuid4().hex[:12]
    futures = [client.submit(export_host, path, directory, hlo,
                             key=f"jaxprof-parquet-{run}-{i}", pure=False)
               for i, (_, path) in enumerate(inputs)]
    done = []
    try:
        for future in as_completed(futures):
            done.append(future.result())  # a host's error stops the run, naming its file
            if progress is not None:
                progress(len(done), len(inputs))
    except BaseException:
        client.cancel(futures)
        raise
    return done


def dask_export_parquet(paths: Any, directory: Any, client: Any = None, **kwargs: Any
                        ) -> Dict[str, Any]:
    """:func:`export_parquet` on a Dask cluster: ``client``, or a LocalCluster sized to the
    machine (worker processes, one thread each) for the run."""
    if client is not None:
        return export_parquet(paths, directory, client, **kwargs)
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(processes=True, threads_per_worker=1, dashboard_address=None)
    own = Client(cluster)
    try:
        return export_parquet(paths, directory, own, **kwargs)
    finally:
        own.close()
        cluster.close()



def _say_progress(done: int, total: int) -> None:
    import sys

    sys.stderr.write(f"\rjaxprof: export: {done}/{total} hosts{'' if done < total else chr(10)}")
    sys.stderr.flush()


def _reuse_freed_memory() -> None:
    """Keeps the memory a host's tables and columns free in the heap for the next host (glibc):
    by default each buffer of more than a few MB is a mapping of its own and returned when freed,
    so every host's pages were mapped and zeroed afresh by the kernel (a tenth of the export's
    CPU). For the command's own process only: a library call leaves the caller's allocator
    alone."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(m_mmap_threshold, 32 << 20)  # glibc's largest
    mallopt(m_trim_threshold, 128 << 20)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``jaxprof export --parquet DIR PATH...`` (the command runs this in Python: Arrow and
    Parquet are Python packages here, as DuckDB is for ``jaxprof sql``)."""
    import argparse
    import sys

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # one line, exit 2, as the command's errors
            raise InvalidOptionError(f"export: {message}")

    p = Parser(prog="jaxprof export")
    p.add_argument("--parquet", required=True, metavar="DIR")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--session")
    p.add_argument("--host", action="append", default=None)
    p.add_argument("--threads", type=int, metavar="N")
    p.add_argument("--dask", action="store_true")
    p.add_argument("--scheduler", metavar="ADDRESS")
    p.add_argument("--quiet", action="store_true")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["export"]:  # as the command hands it over: its name first
        argv = argv[1:]
    try:
        args = p.parse_args(argv)
        for module in ("pyarrow", "pyarrow.parquet"):
            require(module, "jaxprof export --parquet")
        _reuse_freed_memory()
        hosts = [h for item in args.host for h in item.split(",") if h] if args.host else None
        progress = None if args.quiet or not sys.stderr.isatty() else _say_progress
        if args.dask or args.scheduler:
            from dask.distributed import Client

            client = Client(args.scheduler) if args.scheduler else None
            try:
                out = dask_export_parquet(args.paths, args.parquet, client, session=args.session,
                                          hosts=hosts, progress=progress)
            finally:
                if client is not None:
                    client.close()
        else:
            out = export_parquet(args.paths, args.parquet, session=args.session, hosts=hosts,
                                 progress=progress, threads=args.threads)
    except (ProfileError, OSError, ModuleNotFoundError) as e:
        sys.stderr.write(f"jaxprof: {e}\n")
        return 2
    counts = ", ".join(f"{name} {n:,}" for name, n in out["rows"].items())
    n = len(out["hosts"])
    sys.stderr.write(f"jaxprof: wrote {out['directory']}: {len(out['rows'])} tables of {n} "
                     f"host{'s' if n != 1 else ''} as Parquet, DIR/<table>/host=<host>/"
                     f"part.parquet (rows: {counts})\n")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
