"""`device-metadata.parquet`: each GPU plane carries the device's name and capabilities (under the
stat names XSpace GPU planes use), matched by the global id in XLA's NVTX name for the device; and
a process whose thread names are missing still gets its device from that table."""
from __future__ import annotations

import io
import json
import subprocess
import zipfile

import pytest

pq = pytest.importorskip("pyarrow.parquet")

DEVICES = "device-metadata.parquet"
THREADS = "thread-metadata.parquet"


def expected_devices(path):
    """Device stats straight from the table with pyarrow: {"/device:GPU:G": {stat: value}}."""
    with zipfile.ZipFile(path) as z:
        rows = pq.read_table(io.BytesIO(z.read(DEVICES))).to_pylist()
    out = {}
    for r in rows:
        def gpu(field):
            return r[f"('TARGET_INFO_GPU', '{field}')"]
        nvtx = r["('TARGET_INFO_NVTX_CUDA_DEVICE', 'name')"]
        assert nvtx.startswith("Xla:#global=")
        g = int(nvtx[len("Xla:#global="):].split(",")[0])
        out[f"/device:GPU:{g}"] = {
            "device_name": gpu("name"),
            "clock_rate": gpu("clockRate") // 1000,  # Hz -> kHz, as in XSpace
            "core_count": gpu("smCount"),
            "memory_bandwidth": gpu("memoryBandwidth"),
            "memory_size": gpu("totalMemory"),
            "compute_cap_major": gpu("computeMajor"),
            "compute_cap_minor": gpu("computeMinor"),
        }
    return out


def info_planes(jaxprof_bin, *paths):
    out = subprocess.run([str(jaxprof_bin), "info", *map(str, paths), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return {p["name"]: p for p in json.loads(out)["planes"] if p["kind"] == "gpu"}


def as_numbers(stats):
    return {k: (int(v) if isinstance(v, str) and v.isdigit() else v) for k, v in stats.items()}


def test_device_stats_match_the_table(jaxprof_bin, archives):
    expected = {}
    for path in archives:
        expected.update(expected_devices(path))
    assert sorted(expected) == ["/device:GPU:0", "/device:GPU:1"]
    assert expected["/device:GPU:0"]["device_name"] == "NVIDIA A100-SXM4-40GB"
    planes = info_planes(jaxprof_bin, *archives)
    assert sorted(planes) == sorted(expected)
    for name, stats in expected.items():
        assert as_numbers(planes[name]["stats"]) == stats


def test_device_from_the_table_without_thread_names(jaxprof_bin, archives, tmp_path):
    """Process 1 drives GPU 1: without thread names, the device table still says so (the
    fallback would otherwise be the process's position among the inputs, 0)."""
    src = archives[1]
    dest = tmp_path / src.name
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dest, "w") as out:
        for info in z.infolist():
            if info.filename != THREADS:
                out.writestr(info, z.read(info))
    r = subprocess.run([str(jaxprof_bin), "info", str(dest), "--format", "json"],
                       capture_output=True, text=True, check=True)
    assert "warning" not in r.stderr
    gpus = [p for p in json.loads(r.stdout)["planes"] if p["kind"] == "gpu"]
    assert [p["name"] for p in gpus] == ["/device:GPU:1"]
    assert as_numbers(gpus[0]["stats"]) == expected_devices(src)["/device:GPU:1"]
