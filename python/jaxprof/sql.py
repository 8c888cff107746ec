"""``jaxprof sql`` and ``jaxprof tables``: SQL (DuckDB) over a profile's tables, and the tables'
names, row counts and schemas. The ``jaxprof`` command runs this module (``python3 -m
jaxprof.sql``): DuckDB comes as a Python wheel (``pip install duckdb``) while its C++ library is
in no Debian package, so the command hands these two subcommands to Python (docs/tables.md).

    python -m jaxprof.sql sql PATH... QUERY [--format table|csv|json|parquet] [-o FILE]
    python -m jaxprof.sql tables PATH... [--format table|json]
"""

from __future__ import annotations

import argparse
import json
import sys
from decimal import Decimal
from typing import Any, List, Optional

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


def _json_value(v: Any) -> Any:
    if isinstance(v, Decimal):  # DuckDB sums integers as DECIMAL: whole ones stay integers
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def _text_table(table: Any) -> str:
    rows = _plain(table).to_pylist()
    names = table.column_names
    cells = [[("" if r[n] is None else str(r[n])) for n in names] for r in rows]
    numeric = [all(isinstance(r[n], (int, float, Decimal)) for r in rows if r[n] is not None)
               for n in names]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]

    def line(values: List[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(names), line(["-" * w for w in widths])] + [line(c) for c in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out) + "\n"


def _write(result: Any, fmt: str, output: Optional[str]) -> None:
    if fmt == "parquet":
        _need("pyarrow.parquet").write_table(result, output)
        return
    if fmt == "json":
        text = json.dumps(result.to_pylist(), default=_json_value) + "\n"
    elif fmt == "csv":
        import io

        buf = io.BytesIO()
        _need("pyarrow.csv").write_csv(_plain(result), buf)
        text = buf.getvalue().decode("utf-8")
    else:
        text = _text_table(result)
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def _load(paths: List[str]) -> Any:
    import jaxprof

    return jaxprof.load(paths if len(paths) > 1 else paths[0])


def _sql(args: argparse.Namespace) -> int:
    if len(args.args) < 2:
        raise _Usage("jaxprof sql: give a profile PATH and a QUERY")
    if args.format == "parquet" and not args.output:
        raise _Usage("jaxprof sql: --format parquet needs -o FILE")
    _need("pyarrow")
    duckdb = _need("duckdb")
    profile = _load(args.args[:-1])
    try:
        result = profile.sql(args.args[-1])
    except duckdb.Error as e:
        return _fail(f"sql: {e}")
    _write(result, args.format, args.output)
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
