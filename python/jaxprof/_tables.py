"""The tables of a profile as Arrow tables, and SQL over them with DuckDB.

The C++ core builds each table as typed columns (src/jaxprof/analysis/tables) and exports them
through the Arrow C stream interface (``_core.ArrowTable``, with ``__arrow_c_stream__``): pyarrow
and DuckDB read the C++ buffers without a copy (strings as dictionary arrays: int32 codes into a
dictionary), so a table of millions of rows makes no Python object per row, and DuckDB scans a
table without pyarrow. docs/tables.md has the schemas.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from . import _core
from ._optional import require
from .errors import InvalidOptionError


def table_names() -> List[str]:
    """The tables every profile has, in the order `jaxprof tables` lists them."""
    return [name for name, _ in _core.table_list()]


def arrow_table(core: Any, name: str) -> Any:
    """The named table of a loaded profile (its C++ object) as a ``_core.ArrowTable``: an Arrow C
    stream any Arrow consumer reads (``pyarrow.table(t)``, DuckDB), unfiltered."""
    if name not in table_names():
        raise InvalidOptionError(f"no table {name!r} (tables: {', '.join(table_names())})")
    return _core.arrow_table(core, name)


def build_table(core: Any, name: str, device: Optional[str] = None,
                steps: Optional[Union[int, Iterable[int]]] = None,
                include_warmup: bool = True) -> Any:
    """The named table of a loaded profile (its C++ object) as a ``pyarrow.Table``: the rows of
    the devices whose name holds ``device`` (``re:`` for a regex), of the steps ``steps`` and,
    unless ``include_warmup``, not set apart (analysis/tables/table_filter.h). The rows are
    dropped in C++, in place: filtering a pyarrow copy held the table twice."""
    pa = require("pyarrow", "Profile.table()")
    if name not in table_names():
        raise InvalidOptionError(f"no table {name!r} (tables: {', '.join(table_names())})")
    if device is not None and device.startswith("re:"):
        _check_regex(device[3:])
    wanted = None if steps is None else \
        ([int(steps)] if isinstance(steps, int) else [int(s) for s in steps])
    try:
        table = _core.arrow_table(core, name, device or "", wanted, include_warmup)
    except ValueError as e:  # the device regex, as RE2 reads it
        raise InvalidOptionError(str(e)) from None
    # Read as a stream: pyarrow.table() would import pandas on the way (a third of a second).
    return pa.RecordBatchReader.from_stream(table).read_all()


def _check_regex(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as e:
        raise InvalidOptionError(f"invalid regular expression for device: {e}") from None


def named_tables(query: str) -> List[str]:
    """The tables whose names ``query`` holds as whole words: the ones worth building for it."""
    return [name for name in table_names() if re.search(rf"\b{name}\b", query, re.IGNORECASE)]


def register(con: Any, tables: Dict[str, Any]) -> None:
    """Puts each table (a ``_core.ArrowTable``) under its name on a DuckDB connection, which scans
    its Arrow C stream when a query reads it."""
    for name, table in tables.items():
        con.register(name, table)


def sql(tables: Callable[[str], Any], query: str) -> Any:
    """Runs ``query`` with DuckDB over the tables its text names; ``tables(name)`` builds one (a
    ``_core.ArrowTable``).

    A table is built only when the query names it (as a whole word), so a query over device_ops
    builds device_ops alone. Returns a ``pyarrow.Table``.
    """
    duckdb = require("duckdb", "Profile.sql()")
    con = duckdb.connect(":memory:")
    try:
        register(con, {name: tables(name) for name in named_tables(query)})
        relation = con.sql(query)
        return arrow_result(relation)
    finally:
        con.close()


def arrow_result(relation: Any) -> Any:
    """A DuckDB relation's rows as a ``pyarrow.Table`` (no columns for a statement without a
    result: SET, CREATE ...)."""
    pa = require("pyarrow", "Profile.sql()")
    if relation is None:
        return pa.table({})
    # duckdb 1.4+ names it to_arrow_table; earlier versions arrow().
    fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
    return fetch()
