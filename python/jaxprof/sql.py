"""``jaxprof sql`` and ``jaxprof tables``: SQL (DuckDB) over a profile's tables, and the tables'
names, row counts and schemas. The ``jaxprof`` command runs this module (``python3 -m
jaxprof.sql``): DuckDB comes as a Python wheel (``pip install duckdb``) while its C++ library is
in no Debian package. ``sql`` runs in the command itself through the C API the wheel's module
exports where the command finds it, and here otherwise, for Parquet and for results of types only
this module writes (the same output either way); ``tables`` always runs here (docs/tables.md).

    python -m jaxprof.sql sql PATH... QUERY [--format table|csv|json|parquet] [-o FILE]
    python -m jaxprof.sql tables PATH... [--format table|json]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any, Dict, List, Optional, Tuple

from . import _sql_output

EXIT_BAD_INPUT = 2


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit 2 with one line, as the command does
        raise _Usage(f"{self.prog}: {message}")


def _fail(message: str) -> int:
    sys.stderr.write(f"jaxprof: {message}\n")
    return EXIT_BAD_INPUT


def _need(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise _Usage(f"jaxprof sql and tables need the Python package {module}: "
                     f"pip install 'jaxprof[sql]' (or pip install {module})") from None


def _plain(table: Any) -> Any:
    """The table with dictionary columns decoded (for CSV and the text table)."""
    pa = _need("pyarrow")
    fields = [pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
              for f in table.schema]
    return table.cast(pa.schema(fields))


def _write(result: Any, fmt: str, output: Optional[str]) -> None:
    """An Arrow table (pyarrow) in the format asked for."""
    if fmt == "parquet":
        _need("pyarrow.parquet").write_table(result, output)
        return
    if fmt == "json":
        text = json.dumps(result.to_pylist(), default=_sql_output.json_value) + "\n"
    elif fmt == "csv":
        import io

        buf = io.BytesIO()
        _need("pyarrow.csv").write_csv(_plain(result), buf)
        text = buf.getvalue().decode("utf-8")
    else:
        names = result.column_names
        rows = [[r[n] for n in names] for r in _plain(result).to_pylist()]
        text = _sql_output.text_table(names, rows)
    _emit(text, output)


def _emit(text: str, output: Optional[str]) -> None:
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def _load(paths: List[str]) -> Any:
    import jaxprof

    return jaxprof.load(paths if len(paths) > 1 else paths[0])


class _TablesBuilt:
    """Reads the profile and builds the tables a query names, on a thread: the C++ work releases
    the GIL, so it runs on another core while DuckDB imports and opens its database (about as
    long, and most of the command's time besides)."""

    def __init__(self, paths: List[str], names: List[str]) -> None:
        self._tables: Dict[str, Any] = {}
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._build, args=(paths, names), daemon=True)
        self._thread.start()

    def _build(self, paths: List[str], names: List[str]) -> None:
        try:
            # The C++ profile alone, as jaxprof.load reads it: the tables need none of the
            # Python API (which is not even imported on this path).
            from . import _core, _tables

            core = _core.load(paths, "", [])
            self._tables = {name: _tables.arrow_table(core, name) for name in names}
        except BaseException as e:  # handed to the main thread by result()
            self._error = e

    def result(self) -> Dict[str, Any]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._tables


def _fetch(relation: Any, fmt: str) -> Tuple[str, Any]:
    """The query's result: ("rows", (names, type ids, rows)) from DuckDB itself where its types
    print without pyarrow, else ("arrow", a pyarrow.Table)."""
    type_ids = [str(getattr(t, "id", "")) for t in relation.types] if relation is not None else []
    if relation is None or fmt == "parquet" or \
            not all(t in _sql_output.ROW_TYPES for t in type_ids):
        _need("pyarrow")
        from . import _tables

        return "arrow", _tables.arrow_result(relation)
    return "rows", (list(relation.columns), type_ids, relation.fetchall())


def _write_rows(names: List[str], type_ids: List[str], rows: List[Any], fmt: str,
                output: Optional[str]) -> None:
    if fmt == "json":
        text = _sql_output.json_text(names, rows)
    elif fmt == "csv":
        text = _sql_output.csv_text(names, type_ids, rows)
    else:
        text = _sql_output.text_table(names, rows)
    _emit(text, output)


def _sql(args: argparse.Namespace) -> int:
    if len(args.args) < 2:
        raise _Usage("jaxprof sql: give a profile PATH and a QUERY")
    if args.format == "parquet" and not args.output:
        raise _Usage("jaxprof sql: --format parquet needs -o FILE")
    import importlib.util

    if importlib.util.find_spec("duckdb") is None:
        _need("duckdb")  # says what to install
    from . import _tables

    query = args.args[-1]
    built = _TablesBuilt(args.args[:-1], _tables.named_tables(query))
    duckdb = _need("duckdb")
    con = duckdb.connect(":memory:")
    try:
        _tables.register(con, built.result())
        try:
            kind, result = _fetch(con.sql(query), args.format)
        except duckdb.Error as e:
            return _fail(f"sql: {e}")
        if kind == "rows":
            _write_rows(*result, args.format, args.output)
        else:
            _write(result, args.format, args.output)
        return 0
    finally:
        con.close()


def _tables(args: argparse.Namespace) -> int:
    _need("pyarrow")
    profile = _load(args.paths)
    listing = []
    for name in profile.tables():
        t = profile.table(name, include_warmup=True)
        columns = []
        for f in t.schema:
            meta = f.metadata or {}
            kind = f.type.value_type if _need("pyarrow").types.is_dictionary(f.type) else f.type
            columns.append({"name": f.name, "type": str(kind).replace("large_", ""),
                            "unit": meta.get(b"unit", b"").decode(),
                            "meaning": meta.get(b"meaning", b"").decode()})
        listing.append({"name": name, "rows": t.num_rows, "columns": columns})
    if args.format == "json":
        sys.stdout.write(json.dumps(listing) + "\n")
        return 0
    for t in listing:
        sys.stdout.write(f"{t['name']}: {t['rows']} rows\n")
        for c in t["columns"]:
            unit = f" [{c['unit']}]" if c["unit"] else ""
            sys.stdout.write(f"  {c['name']:<22} {c['type']:<7} {c['meaning']}{unit}\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="jaxprof", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sql", help="run a SQL query over the profile's tables")
    s.add_argument("args", nargs="+", metavar="PATH... QUERY")
    s.add_argument("--format", choices=["table", "csv", "json", "parquet"], default="table")
    s.add_argument("-o", "--output", metavar="FILE")
    t = sub.add_parser("tables", help="the tables, their row counts and columns")
    t.add_argument("paths", nargs="+", metavar="PATH")
    t.add_argument("--format", choices=["table", "json"], default="table")
    for q in (s, t):
        q.error = p.error  # type: ignore[method-assign]
    return p


def main(argv: Optional[List[str]] = None) -> int:
    try:
        args = _parser().parse_args(argv)
        return _sql(args) if args.command == "sql" else _tables(args)
    except _Usage as e:
        return _fail(str(e).removeprefix("jaxprof: "))
    except BrokenPipeError:
        return 0
    except Exception as e:  # the profile's errors: one line, exit 2 as the command's
        from .errors import ProfileError

        if isinstance(e, (ProfileError, OSError, ValueError)):
            return _fail(str(e))
        raise


def exit_command(code: int) -> None:
    """Ends the command (the jaxprof command's handoff calls it after main) without tearing the
    interpreter down: DuckDB's database and the profile's memory need no freeing at exit, which
    takes about 20 ms of CPU on the 80 MB profile."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(code)


if __name__ == "__main__":
    exit_command(main())
