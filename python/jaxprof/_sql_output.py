"""`jaxprof sql`'s output made from DuckDB's rows (``fetchall``) rather than an Arrow table, so the
command needs no pyarrow: JSON, CSV and the aligned text table, byte for byte what the pyarrow
path writes, for the column types a query over the tables gives (numbers, strings, booleans,
decimals). Results with any other type (dates, lists, structs ...) and Parquet go through pyarrow
as before (sql.py).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, List, Sequence

# DuckDB type ids whose Python values print here as pyarrow prints them.
ROW_TYPES = frozenset({"boolean", "tinyint", "smallint", "integer", "bigint", "utinyint",
                       "usmallint", "uinteger", "ubigint", "hugeint", "double", "varchar",
                       "decimal"})


def json_value(v: Any) -> Any:
    """What JSON shows of a value json cannot write itself."""
    if isinstance(v, Decimal):  # DuckDB sums integers as DECIMAL: whole ones stay integers
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def json_text(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return json.dumps([dict(zip(names, r)) for r in rows], default=json_value) + "\n"


def text_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The columns aligned, numbers to the right, then the row count."""
    cells = [[("" if v is None else str(v)) for v in r] for r in rows]
    numeric = [all(isinstance(r[i], (int, float, Decimal)) for r in rows if r[i] is not None)
               for i in range(len(names))]
    widths = [max([len(n)] + [len(c[i]) for c in cells]) for i, n in enumerate(names)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(names), line(["-" * w for w in widths])] + [line(c) for c in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out) + "\n"


def _quoted(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def arrow_double(x: float) -> str:
    """A double as Arrow's CSV writer writes it: the shortest digits that read back the same,
    plain from 1e-6 up to below 1e10 (no trailing ".0"), else d.ddde+k."""
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    sign = "-" if str(x).startswith("-") else ""
    if x == 0:
        return sign + "0"
    _, digit_tuple, exp = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exp += len(digit_tuple) - len(digits)  # the zeros stripped
    k = len(digits) - 1 + exp  # x = d.ddd * 10**k
    if -6 <= k < 10:
        if exp >= 0:
            body = digits + "0" * exp
        elif k >= 0:
            body = digits[:k + 1] + "." + digits[k + 1:]
        else:
            body = "0." + "0" * (-k - 1) + digits
    else:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        body += f"e{'+' if k >= 0 else '-'}{abs(k)}"
    return sign + body


def _csv_cell(type_id: str) -> Any:
    if type_id == "varchar":
        return _quoted
    if type_id == "boolean":
        return lambda v: "true" if v else "false"
    if type_id == "double":
        return arrow_double
    return str  # integers, and decimals (str(Decimal) is Arrow's notation too)


def csv_text(names: Sequence[str], type_ids: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV as pyarrow.csv.write_csv writes it: every name and string quoted, nulls empty."""
    cells = [_csv_cell(t) for t in type_ids]
    out: List[str] = [",".join(_quoted(n) for n in names)]
    for r in rows:
        out.append(",".join("" if v is None else f(v) for f, v in zip(cells, r)))
    return "\n".join(out) + "\n"
