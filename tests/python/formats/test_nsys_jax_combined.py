"""Combined archives, as `nsys-jax-combine` writes them: a member that is the same in every input
is stored once; one that differs is stored per input as `member/<input stem>`. Built here from the
two process fixtures by that rule, the combined archive must load as the two archives do side by
side: the same hosts, devices, device descriptions, per-op figures and compile times."""
from __future__ import annotations

import collections
import json
import subprocess
import zipfile

import pytest


def combine(inputs, dest):
    """nsys-jax-combine's rule for members (without its .nsys-rep and analysis handling)."""
    crcs = collections.defaultdict(set)
    for path in inputs:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                crcs[info.filename].add(info.CRC)
    written = set()
    per_input = 0
    with zipfile.ZipFile(dest, "w") as out:
        for path in inputs:
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    name = info.filename
                    if len(crcs[name]) == 1:
                        if name in written:
                            continue
                        written.add(name)
                        out.writestr(info, z.read(info))
                    else:
                        copy = zipfile.ZipInfo(f"{name}/{path.stem}", info.date_time)
                        copy.compress_type = info.compress_type
                        out.writestr(copy, z.read(info))
                        per_input += 1
    return per_input


def cli(jaxprof_bin, command, *args):
    out = subprocess.run([str(jaxprof_bin), command, *map(str, args), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.fixture(scope="module")
def combined(archives, tmp_path_factory):
    dest = tmp_path_factory.mktemp("combined") / "combined.zip"
    per_input = combine(archives, dest)
    with zipfile.ZipFile(dest) as z:
        names = set(z.namelist())
    # The per-process tables differ, so each is stored per input.
    for member in ("nvtx_gpu_proj_trace/trace.parquet", "thread-metadata.parquet",
                   "device-metadata.parquet", "report_nvtx_pushpop_trace.csv.xz"):
        assert {f"{member}/{p.stem}" for p in archives} <= names, member
        assert member not in names
    assert per_input >= 8
    return dest


def test_combined_loads_as_the_inputs_side_by_side(jaxprof_bin, archives, combined):
    apart = cli(jaxprof_bin, "ops", *archives)
    together = cli(jaxprof_bin, "ops", combined)
    assert sorted(d["device"] for d in together["devices"]) == ["/device:GPU:0", "/device:GPU:1"]
    assert sorted(d["host"] for d in together["devices"]) == sorted(p.stem for p in archives)
    # `input` names the files read, which differ by construction (one archive against two).
    assert together.pop("input") != apart.pop("input")
    assert together == apart


def test_combined_device_descriptions_and_compile(jaxprof_bin, archives, combined):
    def gpus(*paths):
        return {p["name"]: p["stats"] for p in cli(jaxprof_bin, "info", *paths)["planes"]
                if p["kind"] == "gpu"}

    together = gpus(combined)
    assert together == gpus(*archives)
    assert sorted(together) == ["/device:GPU:0", "/device:GPU:1"]
    assert all(s.get("device_name") == "NVIDIA A100-SXM4-40GB" for s in together.values())
    assert cli(jaxprof_bin, "compile", combined)["wall_ns"] == \
        cli(jaxprof_bin, "compile", *archives)["wall_ns"]
