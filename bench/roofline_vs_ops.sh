#!/usr/bin/env bash
# `jaxprof roofline` against `jaxprof ops` on the big profiles that bench/run.sh makes (80 MB,
# scaled from the MI300X convolution and the TPU fixtures), and on a scaled MI300X GEMM profile
# when present (big_gemm, made here when missing): hyperfine wall time (mean ± σ), CPU time (user +
# sys: the minimum and median of RUNS runs, from `perf stat`'s task-clock, or GNU time's without
# perf) and peak RSS, both commands with --format json.
#
#   bench/roofline_vs_ops.sh [JAXPROF]
#
# Environment: BENCH_DIR (default /tmp/jaxprof-bench), RUNS (default 10), WARMUP (default 2).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JAXPROF=${1:-$ROOT/build/jaxprof}
BENCH_DIR=${BENCH_DIR:-/tmp/jaxprof-bench}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
SCALE=$ROOT/../shared/tools/scale_xplane.py
[[ -x "$JAXPROF" ]] || { echo "no $JAXPROF: build it first" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }

gemm=$BENCH_DIR/big_gemm.xplane.pb
if [[ ! -s $gemm && -f $SCALE ]]; then
  python3 "$SCALE" "$ROOT/../shared/fixtures/xplane/mi300x_jax_gemm.xplane.pb" "$gemm.tmp" \
    --target-mb 80 >&2 && mv "$gemm.tmp" "$gemm"
fi

cpu_ms() {  # one run's user + sys CPU time in ms
  if command -v perf >/dev/null && perf stat -x, -e task-clock true >/dev/null 2>&1; then
    perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'
  else
    /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -n 1 | awk '{print ($1 + $2) * 1000}'
  fi
}

printf '| profile | command | wall mean ± σ | CPU min | CPU median | peak RSS | roofline / ops (wall, CPU median) |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for key in big_conv big_tpu big_gemm; do
  f=$BENCH_DIR/$key.xplane.pb
  [[ -s "$f" ]] || { echo "no $f: run bench/run.sh once to make it" >&2; continue; }
  declare -A wall=() cpu=()
  for c in ops roofline; do
    json=$(mktemp)
    hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
      "$JAXPROF $c $f --format json" >/dev/null 2>&1
    read -r mean sd < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["mean"]*1e3, r["stddev"]*1e3)' "$json")
    rm -f "$json"
    times=$(for _ in $(seq "$RUNS"); do cpu_ms "$JAXPROF" "$c" "$f" --format json; done | sort -n)
    min=$(head -n 1 <<<"$times")
    med=$(sed -n "$(((RUNS + 1) / 2))p" <<<"$times")
    rss=$(/usr/bin/time -f '%M' "$JAXPROF" "$c" "$f" --format json 2>&1 >/dev/null | tail -n 1)
    wall[$c]=$mean cpu[$c]=$med
    ratio=""
    [[ $c == roofline ]] && ratio=$(python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}×, {float(sys.argv[3])/float(sys.argv[4]):.2f}×')" "${wall[roofline]}" "${wall[ops]}" "${cpu[roofline]}" "${cpu[ops]}")
    printf '| %s | jaxprof %s --format json | %.1f ms ± %.1f ms | %.1f ms | %.1f ms | %.0f MB | %s |\n' \
      "$key" "$c" "$mean" "$sd" "$min" "$med" "$(python3 -c "print($rss/1024)")" "$ratio"
  done
done
