"""The recipes of docs/tables.md: every SQL query on the page, run with `jaxprof sql` on the
bundled example, prints the output the page shows."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")
import jaxprof  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "tables.md"
RECIPES = re.findall(r"```sql\n(.*?)```\n\n```text\n(.*?)```", PAGE.read_text(), re.S)


def test_page_has_the_recipes():
    assert len(RECIPES) == 4


@pytest.mark.parametrize("query,shown", RECIPES, ids=[f"recipe{i}" for i in range(len(RECIPES))])
def test_recipe_output(query, shown, jaxprof_bin):
    env = dict(os.environ, JAXPROF_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(jaxprof.__file__).parent.parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
    out = subprocess.run([str(jaxprof_bin), "sql", "tests/data/jax_cpu_8dev", query.strip()],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True).stdout
    assert out == shown
