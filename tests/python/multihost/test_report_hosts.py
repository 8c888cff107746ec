"""`jaxprof report` of a run of 10 hosts made by bench/make_hosts.py reads the hosts one by one:
its roofline table and memory programs hold the figures `jaxprof roofline` and `jaxprof memory`
compute from the whole run read as one profile, though no step of the report held two hosts'
profiles at once; every section but the critical path (which says why it is not shown) equals
that of `report --together`, which reads the hosts into one profile."""
from __future__ import annotations

import html
import json
import re

import pytest

import ops_check as oc


@pytest.fixture(scope="module")
def run10(tmp_path_factory, jaxprof_bin):
    # 10 hosts of 8 devices: more devices than the roofline draws (64), so each host is cut to
    # the table's rows as it is read.
    return oc.make_hosts(tmp_path_factory.mktemp("hosts"), jaxprof_bin, "--hosts", "10",
                         "--host-mb", "0.6", "--slow", "1")


def cli_json(binary, args):
    proc = oc.run_cli(binary, args + ["--format", "json"], timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(proc.stdout)


def table_rows(page, table_id):
    """Each body row of a table: its cells' sort values (data-v) or texts."""
    start = page.index(f'id="{table_id}"')
    body = page[page.index("<tbody>", start):page.index("</tbody>", start)]
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
        cells = []
        for attrs, text in re.findall(r"<td([^>]*)>(.*?)</td>", row, re.S):
            v = re.search(r'data-v="([^"]*)"', attrs)
            cells.append(v.group(1) if v else html.unescape(re.sub(r"<[^>]+>", "", text)))
        rows.append(cells)
    return rows


def test_report_of_hosts_read_one_by_one(jaxprof_bin, run10, tmp_path):
    out = tmp_path / "r.html"
    proc = oc.run_cli(jaxprof_bin, ["report", str(run10), "-o", str(out)], timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    page = out.read_text()

    whole = cli_json(jaxprof_bin, ["roofline", str(run10)])
    assert len(whole["devices"]) == 80
    want = []
    for d in whole["devices"]:
        for op in d["ops"][:50]:  # the report's --top
            want.append([d["device"], op["name"], op["module"], op["category"],
                         round(op["total_ns"] * 1000), op["flops"], op["bytes_accessed"],
                         op["bound"], op["source"]])
    got = [[r[0], r[1], r[2], r[3], int(r[4]), None if r[5] == "—" else int(r[5]),
            None if r[6] == "—" else int(r[6]), r[10], r[12]]
           for r in table_rows(page, "roofline-table")]
    assert got == want

    memory = cli_json(jaxprof_bin, ["memory", str(run10)])
    want = sorted([p["module"], str(p["program_id"]), s["memory_space"], s["peak_heap_bytes"]]
                  for p in memory["programs"] for s in p["memory_spaces"])
    got = sorted([r[0], r[1], r[2], int(r[3])] for r in table_rows(page, "memory-programs-table"))
    assert want and got == want  # the page lists them by peak heap

    section = page[page.index('<section id="critical-path"'):]
    section = section[:section.index("</section>")]
    assert "the path across 10 hosts needs their events together" in section

    # Every other section as the hosts read together give it (the page data apart: it counts
    # the critical path's table rows).
    together = tmp_path / "together.html"
    proc = oc.run_cli(jaxprof_bin, ["report", str(run10), "--together", "-o", str(together)],
                      timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    sections = lambda text: dict(re.findall(r'<section id="([^"]+)"(.*?)</section>', text, re.S))
    got, want = sections(page), sections(together.read_text())
    assert got.keys() == want.keys()
    for name in want:
        if name != "critical-path":
            assert got[name] == want[name], name
