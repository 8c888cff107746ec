"""What a pandas-based nsys-jax load costs: read the archive's Parquet and CSV tables with pandas,
decompress the HLO dumps, and sum thunk time per module (a lower bound of nsys-jax's loader,
which also parses every HloProto in Python)."""
import io, lzma, sys, zipfile
import pandas as pd

path = sys.argv[1]
with zipfile.ZipFile(path) as z:
    names = z.namelist()
    trace = pd.read_parquet(io.BytesIO(z.read("nvtx_gpu_proj_trace/trace.parquet")))
    threads = pd.read_parquet(io.BytesIO(z.read("thread-metadata.parquet")))
    host = pd.read_csv(io.BytesIO(z.read("report_nvtx_pushpop_trace.csv.xz")), compression="xz")
    dumps = {n: lzma.decompress(z.read(n)) for n in names if n.endswith("after_optimizations.hlo.pb.xz")}
name_col = "Name" if "Name" in trace.columns else "Text"
mods = trace[trace[name_col].str.startswith("TSL:XlaModule:")]
thunks = trace[trace[name_col].str.startswith("TSL:Thunk:")]
dur_col = "Projected Duration" if "Projected Duration" in trace.columns else "Duration"
print(len(mods), len(thunks), thunks[dur_col].sum(), len(host), len(threads), sum(map(len, dumps.values())))
