"""Optional dependencies, imported when a method needs them, with the install line in the error."""

from __future__ import annotations

import importlib
from typing import Any

# The extra of pyproject.toml that brings each optional module.
_EXTRA = {"pandas": "dataframe", "pyarrow": "dataframe", "jax": "capture", "duckdb": "sql"}


def require(module: str, what: str) -> Any:
    """Imports ``module`` for ``what`` (e.g. ``"to_pandas()"``), or raises ModuleNotFoundError
    saying how to install it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        extra = _EXTRA.get(module)
        hint = f"pip install 'jaxprof[{extra}]' (or pip install {module})" if extra else \
            f"pip install {module}"
        raise ModuleNotFoundError(f"{what} needs {module}, which is not installed: {hint}",
                                  name=module) from None
