"""Warnings that read well: many of one kind (here a collective without HLO, one per op) print on
stderr as one line per kind and module, with the count and an example; `--verbose` prints every
one, and JSON's "warnings" always lists them all."""
from __future__ import annotations

import json
import subprocess


def many_collectives(path, n=40):
    """Two GPUs running n all-reduces of jit_step_fun and one all-gather of jit_other, with no
    HLO anywhere."""
    ev = []
    for pid in (1, 2):
        ev.append({"ph": "M", "name": "process_name", "pid": pid,
                   "args": {"name": f"/device:GPU:{pid - 1}"}})
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 1,
                   "args": {"name": "Stream #1"}})
        for k in range(n):
            ev.append({"ph": "X", "name": f"all-reduce.{k}", "pid": pid, "tid": 1, "ts": k * 10,
                       "dur": 5, "args": {"hlo_op": f"all-reduce.{k}",
                                          "hlo_module": "jit_step_fun", "program_id": "7"}})
        ev.append({"ph": "X", "name": "all-gather.1", "pid": pid, "tid": 1, "ts": 10 * n,
                   "dur": 5, "args": {"hlo_op": "all-gather.1", "hlo_module": "jit_other",
                                      "program_id": "8"}})
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def warnings_on_stderr(jaxprof_bin, *args):
    r = subprocess.run([str(jaxprof_bin), *map(str, args)], capture_output=True, text=True,
                       check=True)
    return [l for l in r.stderr.splitlines() if l.startswith("jaxprof: warning: ")], r.stdout


def test_one_line_per_kind(jaxprof_bin, tmp_path):
    trace = many_collectives(tmp_path / "many.trace.json")
    for command in ("collectives", "summary"):
        lines, _ = warnings_on_stderr(jaxprof_bin, command, trace)
        assert lines == [
            "jaxprof: warning: no HLO for 40 collectives of jit_step_fun: their message sizes and "
            "bandwidths are unknown; add the HLO with the program's *.hlo.pb files "
            "(XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto) as further paths "
            "(e.g. jit_step_fun/all-reduce.0; --verbose lists them all)",
            # One of its kind in its module: as it always read.
            "jaxprof: warning: no HLO for jit_other/all-gather.1: message size and bandwidth "
            "unknown",
        ], command


def test_verbose_and_json_list_them_all(jaxprof_bin, tmp_path):
    trace = many_collectives(tmp_path / "many.trace.json")
    every = [f"no HLO for jit_step_fun/all-reduce.{k}: message size and bandwidth unknown"
             for k in range(40)] + ["no HLO for jit_other/all-gather.1: message size and "
                                    "bandwidth unknown"]
    lines, _ = warnings_on_stderr(jaxprof_bin, "collectives", trace, "--verbose")
    assert sorted(l.removeprefix("jaxprof: warning: ") for l in lines) == sorted(every)
    lines, out = warnings_on_stderr(jaxprof_bin, "collectives", trace, "--format", "json")
    assert sorted(json.loads(out)["warnings"]) == sorted(every)
    assert len(lines) == 2
