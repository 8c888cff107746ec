"""The tables of a profile as Arrow tables, and SQL over them with DuckDB.

The C++ core builds each table as typed columns (src/jaxprof/analysis/tables) and hands over their
buffers; here they are wrapped as Arrow arrays without a copy (strings as dictionary arrays:
int32 codes into a dictionary), so a table of millions of rows makes no Python object per row.
docs/tables.md has the schemas.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, List, Optional, Union

import numpy as np

from . import _core
from ._optional import require
from .errors import InvalidOptionError

_ARROW_TYPES = {"int64": "int64", "uint64": "uint64", "double": "float64"}


def table_names() -> List[str]:
    """The tables every profile has, in the order `jaxprof tables` lists them."""
    return [name for name, _ in _core.table_list()]


def _column(pa: Any, rows: int, c: dict) -> Any:
    validity = c["validity"]
    bitmap = pa.py_buffer(validity) if validity is not None else None
    values = c["values"]
    kind = c["type"]
    if kind == "bool":
        # Arrow's booleans are bits: the one column packed here, by NumPy (pa.array would import
        # pandas on the way, half a second).
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), rows, [bitmap, pa.py_buffer(bits)],
                                     null_count=c["null_count"])
    if kind == "string":
        offsets, data = c["dictionary_offsets"], c["dictionary_bytes"]
        dictionary = pa.Array.from_buffers(pa.string(), len(offsets) - 1,
                                           [None, pa.py_buffer(offsets), pa.py_buffer(data)])
        indices = pa.Array.from_buffers(pa.int32(), rows, [bitmap, pa.py_buffer(values)],
                                        null_count=c["null_count"])
        return pa.DictionaryArray.from_arrays(indices, dictionary)
    return pa.Array.from_buffers(getattr(pa, _ARROW_TYPES[kind])(), rows,
                                 [bitmap, pa.py_buffer(values)], null_count=c["null_count"])


def build_table(core: Any, name: str) -> Any:
    """The named table of a loaded profile (its C++ object) as a ``pyarrow.Table``, unfiltered."""
    pa = require("pyarrow", "Profile.table()")
    if name not in table_names():
        raise InvalidOptionError(f"no table {name!r} (tables: {', '.join(table_names())})")
    _, rows, columns = _core.table(core, name)
    arrays = [_column(pa, rows, c) for c in columns]
    fields = [pa.field(c["name"], a.type, metadata={"unit": c["unit"], "meaning": c["meaning"]})
              for c, a in zip(columns, arrays)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _device_mask(pc: Any, column: Any, device: str) -> Any:
    # As --device: a substring of the name, or a regex after "re:".
    if device.startswith("re:"):
        try:
            re.compile(device[3:])
        except re.error as e:
            raise InvalidOptionError(f"invalid regular expression for device: {e}") from None
        return pc.match_substring_regex(column, device[3:])
    return pc.match_substring(column, device)


def filter_table(table: Any, device: Optional[str] = None,
                 steps: Optional[Union[int, Iterable[int]]] = None,
                 include_warmup: bool = False) -> Any:
    """Rows of the devices (``device``: as --device), of the steps (a number or several) and,
    unless ``include_warmup``, not set apart as warm-up or autotuning; filters apply to the tables
    that have the column they read."""
    names = set(table.column_names)
    if device is None and steps is None and (include_warmup or not names & {"warmup", "role"}):
        return table  # nothing to filter: pyarrow.compute is not even imported
    import pyarrow.compute as pc

    mask = None

    def both(m: Any) -> None:
        nonlocal mask
        mask = m if mask is None else pc.and_(mask, m)

    if device is not None and "device" in names:
        both(pc.fill_null(_device_mask(pc, table["device"].cast("string"), device), False))
    if steps is not None and "step" in names:
        wanted = [int(steps)] if isinstance(steps, int) else [int(s) for s in steps]
        both(pc.fill_null(pc.is_in(table["step"], value_set=_int_array(wanted)), False))
    if not include_warmup:
        for flag in ("warmup", "autotuning"):
            if flag in names:
                both(pc.invert(pc.fill_null(table[flag], False)))
        if "role" in names:
            both(pc.equal(table["role"].cast("string"), "steady"))
    return table if mask is None else table.filter(mask)


def _int_array(values: List[int]) -> Any:
    import pyarrow as pa

    return pa.array(values, pa.int64())


def sql(tables: Any, query: str) -> Any:
    """Runs ``query`` with DuckDB over the tables its text names; ``tables(name)`` builds one.

    A table is built only when the query names it (as a whole word), so a query over device_ops
    builds device_ops alone. Returns a ``pyarrow.Table``.
    """
    duckdb = require("duckdb", "Profile.sql()")
    con = duckdb.connect(":memory:")
    try:
        for name in table_names():
            if re.search(rf"\b{name}\b", query, re.IGNORECASE):
                con.register(name, tables(name))
        relation = con.sql(query)
        if relation is None:  # a statement without a result (SET, CREATE ...)
            return require("pyarrow", "Profile.sql()").table({})
        # duckdb 1.4+ names it to_arrow_table; earlier versions arrow().
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        return fetch()
    finally:
        con.close()
