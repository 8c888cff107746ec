"""`jaxprof roofline` against independent references:

- closed-form FLOP counts for custom calls the fixtures do not have (cuBLASLt GEMMs with batch,
  transposes and a bias epilogue; cuDNN backward convolutions; cuDNN and Transformer Engine fused
  attention with causal masks; Pallas cost estimates), in HLO that XLA's own parser builds from
  text (jaxlib), carried by a synthetic profile;
- XLA's own cost analysis (`jax.jit(f).lower(...).compile().cost_analysis()`) per program, on a
  profile captured here with JAX on the CPU;
- XProf's Roofline tool on the shared fixtures, when `xprof` is installed: the same times, bytes
  and bandwidths on every op, the same FLOPs except on GPU elementwise fusions, where XProf's
  count is XLA's GPU cost model's (checked by that rule, xla_gpu_flops.py), and a number where
  XProf says Unknown;
- the share of device time with FLOPs and bytes on every GPU and TPU fixture.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from protowire import len_field

import ops_check as oc
from xspace_builder import Ref, SpaceBuilder

import xla_gpu_flops

FIXTURES = oc.XPLANE_FIXTURES


def roofline(jaxprof_bin, *args) -> dict:
    r = subprocess.run([str(jaxprof_bin), "roofline", *map(str, args), "--format", "json"],
                       capture_output=True, text=True, timeout=oc.CLI_TIMEOUT_S)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def ops_by(result: dict, device: str = None):
    out = {}
    for d in result["devices"]:
        if device and d["device"] != device:
            continue
        for o in d["ops"]:
            out.setdefault((o["name"], o["program_id"]), []).append(o)
    return out


def coverage(result: dict) -> float:
    total = sum(d["coverage"]["total_ns"] for d in result["devices"])
    known = sum(d["coverage"]["known_ns"] for d in result["devices"])
    return known / total if total else 0.0


# ---- fixtures: coverage -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mi300x_jax_gemm", "mi300x_jax_conv", "mi300x_jax_elementwise",
                                  "tpu_4chip_inference"])
def test_most_device_time_gets_flops_and_bytes_with_a_source(jaxprof_bin, name):
    path = oc.require_profile(FIXTURES / f"{name}.xplane.pb")
    r = roofline(jaxprof_bin, path)
    assert coverage(r) >= 0.95, coverage(r)
    for d in r["devices"]:
        c = d["coverage"]
        assert sum(c["by_source_ns"].values()) == pytest.approx(c["total_ns"])
        for o in d["ops"]:
            known = o["flops"] is not None and o["bytes_accessed"] is not None
            assert known == (o["source"] != "unknown"), o
            if not known:  # unknown stays unknown: no rate, bound or efficiency
                assert o["flop_rate"] is None and o["efficiency"] is None
                assert o["bound"] == "unknown" and o["detail"]


def test_autotuning_is_left_out_as_in_ops(jaxprof_bin):
    """On an nsys-jax archive the autotuner's programs (absent from the dumped HLO) are set apart
    by default, as `ops` sets them apart; what remains is the training step, all of it costed.
    --include-autotuning brings them back, unknown and said to be so."""
    path = oc.SHARED_FIXTURES / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip"
    if not path.is_file():
        pytest.skip(f"fixture {path} not found")
    steady = roofline(jaxprof_bin, path)
    assert coverage(steady) >= 0.95, coverage(steady)
    everything = roofline(jaxprof_bin, path, "--include-autotuning")

    def ops_total(*flags):
        r = json.loads(subprocess.run([str(jaxprof_bin), "ops", str(path), "--format", "json",
                                       *flags], check=True, capture_output=True).stdout)
        return sum(g["total_ns"] for d in r["devices"] for g in d["groups"])

    def op_time(r):
        return sum(d["coverage"]["total_ns"] for d in r["devices"])

    # What roofline sets apart is what ops sets apart.
    assert op_time(everything) - op_time(steady) == pytest.approx(
        ops_total("--include-autotuning") - ops_total())
    assert coverage(everything) < coverage(steady)
    unknown = [o for d in everything["devices"] for o in d["ops"] if o["source"] == "unknown"]
    assert any(o["name"].startswith("gemm_fusion_dot") and o["detail"] for o in unknown)


def test_csv_and_table_agree_with_json(jaxprof_bin):
    path = oc.require_profile(FIXTURES / "mi300x_jax_gemm.xplane.pb")
    j = roofline(jaxprof_bin, path)
    csv = subprocess.run([str(jaxprof_bin), "roofline", str(path), "--format", "csv"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert csv[0].startswith("device,host,name,module,program_id,category")
    assert len(csv) - 1 == sum(len(d["ops"]) for d in j["devices"])
    table = subprocess.run([str(jaxprof_bin), "roofline", str(path)], capture_output=True,
                           text=True, check=True)
    # The steady state (docs/steady-state.md) is every run here: the programs were compiled before
    # the capture began (its host threads hold no compile, only PjitFunction dispatches), so none
    # of their first runs is warm-up and all work gives the same figure.
    assert round(100 * coverage(j), 1) == 98.3
    assert coverage(roofline(jaxprof_bin, path, "--include-warmup")) == coverage(j)
    assert f"with FLOPs and bytes: {100 * coverage(j):.1f}%" in table.stdout
    assert "memory_bandwidth stat says" in table.stderr  # the MI300X's ROCm-reported bandwidth


def test_bad_options_are_usage_errors(jaxprof_bin):
    path = oc.require_profile(FIXTURES / "mi300x_jax_gemm.xplane.pb")
    for args in (["--peak-tflops", "bf17=3"], ["--peak-tflops", "x"],
                 ["--device-model", "gpu9000"], ["--match", "("]):
        r = subprocess.run([str(jaxprof_bin), "roofline", str(path), *args], capture_output=True,
                           text=True)
        assert r.returncode == 2, (args, r.stderr)
        assert "jaxprof" in r.stderr and r.stderr.count("\n") <= 3, r.stderr


def test_svg_chart(jaxprof_bin, tmp_path):
    path = oc.require_profile(FIXTURES / "mi300x_jax_conv.xplane.pb")
    out = tmp_path / "r.svg"
    subprocess.run([str(jaxprof_bin), "roofline", str(path), "--svg", str(out)],
                   capture_output=True, text=True, check=True)
    import xml.etree.ElementTree as ET
    root = ET.parse(out).getroot()  # one well-formed document for eight devices
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}svg")) == 8
    circles = root.findall(f".//{ns}circle")
    assert any("cudnn-conv.1" in (c.findtext(f"{ns}title") or "") for c in circles)


# ---- synthetic custom calls: closed-form counts -------------------------------------------------

GEMM_BIAS = r'''HloModule gemm_bias
ENTRY main {
  a = bf16[4,128,64]{2,1,0} parameter(0)
  b = bf16[4,256,64]{2,1,0} parameter(1)
  c = bf16[256]{0} parameter(2)
  gemm = (bf16[4,128,256]{2,1,0}, s8[1048576]{0}) custom-call(a, b, c), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["2"],"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"]},"precision_config":{"operand_precision":["DEFAULT","DEFAULT"]},"epilogue":"BIAS"}}
  ROOT out = bf16[4,128,256]{2,1,0} get-tuple-element(gemm), index=0
}'''

GEMM_F32 = r'''HloModule gemm_f32
ENTRY main {
  a = f32[512,256]{1,0} parameter(0)
  b = f32[512,128]{1,0} parameter(1)
  c = f32[256,128]{1,0} parameter(2)
  gemm = (f32[256,128]{1,0}, s8[4194304]{0}) custom-call(a, b, c), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["0"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"precision_config":{"operand_precision":["HIGHEST","HIGHEST"]},"epilogue":"DEFAULT"}}
  ROOT out = f32[256,128]{1,0} get-tuple-element(gemm), index=0
}'''

CONV_BWD_FILTER = r'''HloModule conv_bwd_filter
ENTRY main {
  x = bf16[8,32,32,16]{3,2,1,0} parameter(0)
  dy = bf16[8,32,32,32]{3,2,1,0} parameter(1)
  conv = (bf16[3,3,16,32]{3,2,1,0}, u8[65536]{0}) custom-call(x, dy), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardFilter", backend_config={"cudnn_conv_backend_config":{"activation_mode":"kNone","conv_result_scale":1,"side_input_scale":0}}
  ROOT dw = bf16[3,3,16,32]{3,2,1,0} get-tuple-element(conv), index=0
}'''

FMHA = r'''HloModule fmha_{kind}
ENTRY main {{
  q = bf16[2,1024,8,64]{{3,2,1,0}} parameter(0)
  k = bf16[2,1024,8,64]{{3,2,1,0}} parameter(1)
  v = bf16[2,1024,8,64]{{3,2,1,0}} parameter(2)
  att = (bf16[2,1024,8,64]{{3,2,1,0}}, u8[0]{{0}}) custom-call(q, k, v), custom_call_target="{target}", backend_config={{"cudnn_fmha_backend_config":{{"fmha_scale":0.125,"intermediate_tensor_shape":{{"element_type":"BF16","dimensions":["2","8","1024","1024"]}},"is_flash_attention":true,"mask_type":"{mask}"}}}}
  ROOT o = bf16[2,1024,8,64]{{3,2,1,0}} get-tuple-element(att), index=0
}}'''

TE_ATTENTION = r'''HloModule te_{kind}
ENTRY main {{
  q = bf16[2,128,4,32]{{3,2,1,0}} parameter(0)
  k = bf16[2,256,4,32]{{3,2,1,0}} parameter(1)
  v = bf16[2,256,4,32]{{3,2,1,0}} parameter(2)
  att = (bf16[2,128,4,32]{{3,2,1,0}}, f32[2,4,128,1]{{3,2,1,0}}) custom-call(q, k, v), custom_call_target="te_fused_attn_{kind}_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={{attn_heads = 4 : i64, head_dim = 32 : i64, input_batch = 2 : i64, kv_max_seqlen = 256 : i64, mask_type = {mask} : i64, q_max_seqlen = 128 : i64, qkv_layout = 9 : i64, window_size_left = -1 : i64, window_size_right = 0 : i64}}
  ROOT o = bf16[2,128,4,32]{{3,2,1,0}} get-tuple-element(att), index=0
}}'''

PALLAS = r'''HloModule pallas_kernel
ENTRY main {
  x = f32[1024]{0} parameter(0)
  ROOT y = f32[1024]{0} custom-call(x), custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"body": "TUxJUgA=", "cost_estimate": {"flops": 3072, "transcendentals": 1024, "bytes_accessed": 8192}}}
}'''

MYSTERY = r'''HloModule mystery
ENTRY main {
  x = f32[1024]{0} parameter(0)
  ROOT y = f32[1024]{0} custom-call(x), custom_call_target="my_library_thing"
}'''

TRITON_MATMUL = r'''HloModule triton_matmul
ENTRY main {
  a = f16[256,512]{1,0} parameter(0)
  b = f16[512,128]{1,0} parameter(1)
  ROOT c = f16[256,128]{1,0} custom-call(a, b), custom_call_target="__gpu$xla.gpu.triton", api_version=API_VERSION_TYPED_FFI, backend_config={name = "matmul_kernel", ir = "", num_stages = 3 : i32, num_warps = 4 : i32, grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, debug = false}
}'''

PALLAS_ATTENTION = r'''HloModule pallas_attention
ENTRY main {
  q = f16[2,1024,8,64]{3,2,1,0} parameter(0)
  k = f16[2,1024,8,64]{3,2,1,0} parameter(1)
  v = f16[2,1024,8,64]{3,2,1,0} parameter(2)
  ROOT o = f16[2,1024,8,64]{3,2,1,0} custom-call(q, k, v), custom_call_target="__gpu$xla.gpu.triton", api_version=API_VERSION_TYPED_FFI, backend_config={name = "mha_forward", ir = "", num_stages = 2 : i32, num_warps = 4 : i32, grid_x = 8 : i32, grid_y = 16 : i32, grid_z = 2 : i32, debug = false}
}'''

# (module text, op, per-execution FLOPs or None (unknown), detail fragment)
CAUSAL_PAIRS = sum(i + 1 for i in range(1024))           # keys k <= q, 1024 queries
BOTTOM_RIGHT_PAIRS = sum(i + 1 + 128 for i in range(128))  # k <= q + (256 - 128)
CASES = [
    (GEMM_BIAS, "gemm", 2 * 4 * 128 * 256 * 64 + 4 * 128 * 256, "gemm +bias"),
    (GEMM_F32, "gemm", 2 * 256 * 128 * 512 + 2 * 256 * 128, "gemm +beta*C"),
    (CONV_BWD_FILTER, "conv", 2 * 8 * 32 * 16 * (32 * 3 - 2) ** 2, "backward-filter"),
    (FMHA.format(kind="fwd", target="__cudnn$fmhaSoftmax", mask="CAUSAL"), "att",
     2 * 2 * 8 * CAUSAL_PAIRS * (64 + 64), "fmha forward causal"),
    (FMHA.format(kind="bwd", target="__cudnn$fmhaSoftmaxBackward", mask="CAUSAL"), "att",
     2 * 2 * 8 * CAUSAL_PAIRS * (3 * 64 + 2 * 64), "fmha backward causal"),
    (FMHA.format(kind="pad", target="__cudnn$fmhaSoftmax", mask="PADDING_CAUSAL"), "att", None,
     "padding mask"),
    (TE_ATTENTION.format(kind="forward", mask=4), "att",
     2 * 2 * 4 * BOTTOM_RIGHT_PAIRS * (32 + 32), "causal bottom-right"),
    (TE_ATTENTION.format(kind="backward", mask=4), "att",
     2 * 2 * 4 * BOTTOM_RIGHT_PAIRS * (3 * 32 + 2 * 32), "te fused attention backward"),
    (TE_ATTENTION.format(kind="forward", mask=3), "att", None, "padding mask"),
    (PALLAS, "y", 3072, "kernel cost estimate"),
    (MYSTERY, "y", None, "my_library_thing"),
    (TRITON_MATMUL, "c", 2 * 256 * 128 * 512, "matmul kernel 'matmul_kernel'"),
    # Whether this attention is causal is a static argument of the kernel, not in the HLO.
    (PALLAS_ATTENTION, "o", None, "masking is not stated"),
]
RUNS = 3
DURATION_PS = 40_000_000  # 40 us per execution


def hlo_proto(text: str) -> bytes:
    """An xla.HloProto (hlo_module = 1) of HLO text, as XLA's own parser builds it."""
    hlo = pytest.importorskip("jaxlib._hlo", reason="jaxlib builds the HLO protos")
    module = hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()
    return len_field(1, module)


@pytest.fixture(scope="module")
def custom_calls(tmp_path_factory):
    """One H100 SXM (by its stats) running every case RUNS times; program id = case index + 1."""
    sb = SpaceBuilder()
    meta = sb.plane("/host:metadata")
    names = []
    for i, (text, *_rest) in enumerate(CASES):
        name = text.split("\n", 1)[0].split()[1]
        names.append(name)
        md = meta.event_md(f"{name}({i + 1})", stats={"Hlo Proto": hlo_proto(text)})
        assert md == i + 1
    gpu = sb.plane("/device:GPU:0", plane_id=1)
    gpu.plane_stats({"device_vendor": "Nvidia", "compute_cap_major": 9, "compute_cap_minor": 0,
                     "core_count": 132, "clock_rate": 1980000, "memory_size": 80 * 2**30,
                     "memory_bandwidth": 3350 * 10**9})
    line = gpu.line(7, "Stream #7(Kernel)", 1000)
    t = 0
    for i, (text, op, *_rest) in enumerate(CASES):
        md = gpu.event_md(f"kernel_{i}")
        for _ in range(RUNS):
            gpu.event(line, md, t, DURATION_PS, {"hlo_op": Ref(op), "hlo_module": names[i],
                                                 "program_id": i + 1})
            t += 2 * DURATION_PS
    path = tmp_path_factory.mktemp("roofline") / "custom_calls.xplane.pb"
    sb.write(path)
    return path


@pytest.mark.parametrize("index", range(len(CASES)), ids=lambda i: CASES[i][0].split()[1])
def test_custom_call_closed_form_flops(jaxprof_bin, custom_calls, index):
    r = roofline(jaxprof_bin, custom_calls)
    (dev,) = r["devices"]
    assert dev["peaks"]["model"] == "NVIDIA H100 SXM5"
    (op,) = [o for o in dev["ops"] if o["program_id"] == index + 1]
    _text, _name, flops, detail = CASES[index]
    assert op["count"] == RUNS
    assert detail in op["detail"], op["detail"]
    if flops is None:
        assert op["source"] == "unknown" and op["flops"] is None
        return
    assert op["source"] == "custom-call"
    assert op["flops"] == RUNS * flops


def test_custom_call_bytes_peaks_and_categories(jaxprof_bin, custom_calls):
    (dev,) = roofline(jaxprof_bin, custom_calls)["devices"]
    ops = {o["program_id"]: o for o in dev["ops"]}
    gemm = ops[1]
    # A, B and the bias read, the output written; the 1 MiB cuBLAS workspace is not data.
    assert gemm["bytes_accessed"] == RUNS * 2 * (4 * 128 * 64 + 4 * 256 * 64 + 256 + 4 * 128 * 256)
    assert (gemm["category"], gemm["compute_type"], gemm["peak_type"]) == ("gemm", "bf16", "bf16")
    assert gemm["peak_flops_per_s"] == pytest.approx(989.4e12)
    assert ops[2]["compute_type"] == "fp32"  # HIGHEST precision: no TF32
    assert ops[2]["peak_flops_per_s"] == pytest.approx(66.9e12)
    assert ops[3]["category"] == "convolution"
    assert {ops[i]["category"] for i in (4, 5, 6, 7, 8, 9)} == {"attention"}
    assert ops[11]["category"] == "other"
    # Efficiency is the roofline's time over the measured time, bound by the larger of the two.
    att = ops[4]
    t_compute = att["flops"] / att["peak_flops_per_s"]
    t_memory = att["bytes_accessed"] / dev["peaks"]["bytes_per_s"]
    assert att["predicted_ns"] == pytest.approx(max(t_compute, t_memory) * 1e9, rel=1e-6)
    assert att["efficiency"] == pytest.approx(att["predicted_ns"] / att["total_ns"], rel=1e-6)
    assert att["bound"] == ("compute" if t_compute >= t_memory else "memory")
    assert dev["peaks"]["bytes_source"] == "device stat memory_bandwidth"
    assert dev["peaks"]["flops_source"]["bf16"].startswith("table: NVIDIA H100")


# ---- XLA's own cost analysis on the CPU ---------------------------------------------------------

CPU_PROGRAM = r'''
import os, sys
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np

def f(x, w, images, kernel, y):
    a = jnp.tanh(x @ w) * 2.0 + 1.0
    c = jax.lax.conv_general_dilated(images, kernel, (2, 1), ((1, 1), (2, 0)),
                                     rhs_dilation=(1, 2))
    return a.sum(axis=1), jnp.exp(c).mean(), jnp.einsum("bij,bjk->bik", y, y)

rng = np.random.default_rng(0)
args = (rng.standard_normal((128, 256), dtype=np.float32),
        rng.standard_normal((256, 512), dtype=np.float32),
        rng.standard_normal((2, 8, 32, 32), dtype=np.float32),
        rng.standard_normal((4, 8, 3, 3), dtype=np.float32),
        rng.standard_normal((4, 64, 64), dtype=np.float32))
jf = jax.jit(f)
cost = jf.lower(*args).compile().cost_analysis()
jax.block_until_ready(jf(*args))
jax.profiler.start_trace(sys.argv[1])
for _ in range(int(sys.argv[2])):
    jax.block_until_ready(jf(*args))
jax.profiler.stop_trace()
print(json.dumps({k: cost[k] for k in ("flops", "transcendentals", "bytes accessed")}))
'''.replace("import jax,", "import json, jax,")


def test_program_costs_equal_xlas_cost_analysis(jaxprof_bin, tmp_path):
    pytest.importorskip("jax", reason="jax captures the profile")
    runs = 4
    script = tmp_path / "capture.py"
    script.write_text(CPU_PROGRAM)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "trace"), str(runs)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    xla = json.loads(proc.stdout.strip().splitlines()[-1])
    # XLA's cost analysis times the runs counts every run: include all work (the first run is
    # warm-up, set apart by default: docs/steady-state.md).
    r = roofline(jaxprof_bin, tmp_path / "trace", "--include-autotuning", "--include-warmup")
    (dev,) = r["devices"]
    assert dev["coverage"]["share"] == 1.0
    (program,) = [p for p in dev["programs"] if p["module"] == "jit_f"]
    assert program["flops"] == runs * xla["flops"]
    assert program["transcendentals"] == runs * xla["transcendentals"]
    # XLA also counts the 8-byte pointers of the 3-tuple result as accessed.
    assert program["bytes_accessed"] == runs * (xla["bytes accessed"] - 3 * 8)
    # The CPU has no peaks unless given: rates but no bound.
    assert program["flop_rate"] > 0 and program["efficiency"] is None
    assert any("CPU peaks are unknown" in w for w in r["warnings"])
    given = roofline(jaxprof_bin, tmp_path / "trace", "--peak-tflops", "1", "--peak-gbps", "20")
    assert given["devices"][0]["programs"][0]["efficiency"] > 0


# ---- XProf --------------------------------------------------------------------------------------

def xprof_roofline(path: Path, tmp_path: Path) -> list:
    """XProf's roofline_model rows for one profile (one table for all the host's devices)."""
    pytest.importorskip("xprof", reason="XProf is the reference (pip install xprof)")
    from xprof.convert import raw_to_tool_data

    link = tmp_path / path.name
    os.symlink(path, link)
    data, _ = raw_to_tool_data.xspace_to_tool_data([str(link)], "roofline_model",
                                                   {"use_saved_result": False})
    table = json.loads(data)[0]
    cols = [c["id"] for c in table["cols"]]
    rows = [dict(zip(cols, [c.get("v") if isinstance(c, dict) else c for c in row["c"]]))
            for row in table["rows"]]
    # The table repeats its records with and without infeed/outfeed: keep one set.
    return [r for r in rows if r["step"] == "Total" and r["category"] != "Program"
            and r.get("include_infeed_outfeed") in (True, None)]


GIB = 2**30


def module_texts(path: Path) -> dict:
    """{program id: HLO text} of the HloProtos a profile's /host:metadata carries."""
    import xplane_oracle as xo
    hlo = pytest.importorskip("jaxlib._hlo", reason="jaxlib prints the HLO")
    out = {}
    for plane in xo.load_xspace(str(path)).planes:
        if plane.name != "/host:metadata":
            continue
        stats = xo._PlaneStats(plane)
        for key in plane.event_metadata:
            st = stats.metadata_stats(key)
            if not isinstance(st.get("Hlo Proto"), bytes):
                continue
            proto = xo.HloProto()
            proto.ParseFromString(st["Hlo Proto"])
            module = hlo.XlaComputation(proto.hlo_module.SerializeToString())
            out.setdefault(st.get("program_id", key), module.as_hlo_text())
    return out


@pytest.mark.parametrize("name", ["mi300x_jax_gemm", "mi300x_jax_conv", "mi300x_jax_elementwise",
                                  "tpu_4chip_inference"])
def test_rates_agree_with_xprof(jaxprof_bin, tmp_path, name):
    """Times and bytes agree on every (op, program) XProf costs; FLOPs agree except on GPU
    fusions with elementwise work, which XProf counts with XLA's GPU cost model
    (xla_gpu_flops.py, docs/roofline.md "Where jaxprof and XProf differ")."""
    path = oc.require_profile(FIXTURES / f"{name}.xplane.pb")
    rows = xprof_roofline(path, tmp_path)
    # XProf counts every op event: compare with all work included (docs/steady-state.md).
    ours = ops_by(roofline(jaxprof_bin, path, "--include-autotuning", "--include-warmup"))
    gpu = not name.startswith("tpu")
    hlo = module_texts(path) if gpu else {}
    checked = unknown_to_xprof = elementwise = 0
    for row in rows:
        pid = int(row["hlo_module_id"])
        groups = ours.get((row["operation"], pid))
        assert groups, f"{row['operation']} ({pid}) missing"
        # XProf sums every device of the host; so do we here.
        time_ns = sum(o["total_ns"] for o in groups)
        xprof_time_ns = row["total_time"] * 1e3  # us
        assert time_ns == pytest.approx(xprof_time_ns, rel=1e-6)
        if row["bound_by"] == "Unknown":
            # XProf has no cost: jaxprof gives one, and says from where.
            unknown_to_xprof += 1
            assert all(o["flops"] > 0 and o["source"] == "custom-call" for o in groups), groups
            continue
        flops = sum(o["flops"] for o in groups)
        nbytes = sum(o["bytes_accessed"] for o in groups)
        count = sum(o["count"] for o in groups)
        xprof_flops = row["measured_flop_rate"] * xprof_time_ns
        # Bytes and the bandwidth: equal everywhere.
        assert nbytes == pytest.approx(row["measured_memory_bw"] * GIB * xprof_time_ns * 1e-9,
                                       rel=1e-6, abs=1)
        assert nbytes / time_ns == pytest.approx(row["measured_memory_bw"] * GIB / 1e9, rel=1e-6)
        kinds = (xla_gpu_flops.elementwise_kinds(hlo[pid], row["operation"])
                 if gpu and pid in hlo else [])
        if kinds:
            # XLA's GPU model: 3 FLOPs per element and op, measured cycles for transcendentals
            # (which jaxprof counts apart), recomputed values counted again.
            elementwise += 1
            model = xla_gpu_flops.op_flops(hlo[pid], row["operation"]) * count
            assert xprof_flops == pytest.approx(model, rel=1e-6, abs=1), row["operation"]
            assert xprof_flops > flops
            if not (set(kinds) & xla_gpu_flops.TRANSCENDENTAL
                    or xla_gpu_flops.recomputes(hlo[pid], row["operation"])):
                assert xprof_flops == pytest.approx(3 * flops, rel=1e-6), row["operation"]
        else:
            # Both count XLA's generic definitions: the same FLOPs and FLOP rate. Both time TPU
            # ops with the device's own clock (device_duration_ps, docs/clocks.md); the
            # host-aligned copy would be up to 13% off on this profile.
            assert flops == pytest.approx(xprof_flops, rel=1e-6, abs=1)
            if time_ns > 0:
                assert flops / time_ns == pytest.approx(row["measured_flop_rate"], rel=1e-6)
        checked += 1
    assert checked > 0
    if name == "mi300x_jax_gemm":
        assert unknown_to_xprof == 5  # the five hipBLASLt GEMMs
    assert (elementwise > 0) == (name == "mi300x_jax_elementwise")


# ---- Python API ---------------------------------------------------------------------------------

def test_python_api_equals_cli(jaxprof_bin):
    jaxprof = pytest.importorskip("jaxprof")
    path = oc.require_profile(FIXTURES / "mi300x_jax_conv.xplane.pb")
    r = jaxprof.load(str(path)).roofline(top=3, peak_gbps=4000, peak_tflops=["bf16=1000"])
    cli = roofline(jaxprof_bin, path, "--top", "3", "--peak-gbps", "4000",
                   "--peak-tflops", "bf16=1000")
    # The CLI's JSON says what it read and set apart; in Python, Profile.input and
    # Profile.set_apart() carry those.
    cli.pop("input")
    cli.pop("set_apart")
    assert r.data == cli
    df = r.to_pandas()
    assert len(df) == sum(len(d["ops"]) for d in r.devices) == 24
    assert {"device", "name", "flops", "bytes_accessed", "bound", "efficiency",
            "source"} <= set(df.columns)
    assert r.programs[0]["module"] == "jit_forward_3d_conv"
    assert r.svg("/device:GPU:3").startswith("<svg") and "cudnn-conv.1" in r.svg()
    page = r._repr_html_()
    assert page.count("<svg") == 8 and "<table>" in page
    with pytest.raises(KeyError):
        r.svg("/device:GPU:99")
    with pytest.raises(jaxprof.InvalidOptionError):
        jaxprof.load(str(path)).roofline(peak_tflops="bf17=3")
