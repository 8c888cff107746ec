#!/usr/bin/env bash
# `jaxprof summary` against `jaxprof ops` on the big profiles that bench/run.sh makes (and on
# big_conv_ids, when bench/scale_unique_ids.py has made it: the GPU profile with a correlation id
# per launch, as real captures have, rather than one per original launch): hyperfine
# wall time (mean ± σ) and CPU time (user + sys, the minimum and median of RUNS runs from
# `perf stat`'s task-clock, or GNU time's without perf), both commands with --format json.
#
#   bench/summary_vs_ops.sh [JAXPROF]
#   VS=memory bench/summary_vs_ops.sh     # another command against ops (memory, roofline, ...)
#
# Environment: BENCH_DIR (default /tmp/jaxprof-bench), RUNS (default 10), WARMUP (default 2),
# VS (default summary).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JAXPROF=${1:-$ROOT/build/jaxprof}
BENCH_DIR=${BENCH_DIR:-/tmp/jaxprof-bench}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
VS=${VS:-summary}
[[ -x "$JAXPROF" ]] || { echo "no $JAXPROF: build it first" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }

cpu_ms() {  # one run's user + sys CPU time in ms
  if command -v perf >/dev/null && perf stat -x, -e task-clock true >/dev/null 2>&1; then
    perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'
  else
    /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -n 1 | awk '{print ($1 + $2) * 1000}'
  fi
}

printf '| profile | command | wall mean ± σ | CPU min | CPU median | %s / ops (wall, CPU median) |\n' "$VS"
printf '| --- | --- | --- | --- | --- | --- |\n'
keys=(big_conv big_tpu)
[[ -s $BENCH_DIR/big_conv_ids.xplane.pb ]] && keys+=(big_conv_ids)
for key in "${keys[@]}"; do
  f=$BENCH_DIR/$key.xplane.pb
  [[ -s "$f" ]] || { echo "no $f: run bench/run.sh once to make it" >&2; exit 1; }
  declare -A wall=() cpu=()
  for c in ops "$VS"; do
    json=$(mktemp)
    hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
      "$JAXPROF $c $f --format json" >/dev/null 2>&1
    read -r mean sd < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["mean"]*1e3, r["stddev"]*1e3)' "$json")
    rm -f "$json"
    times=$(for _ in $(seq "$RUNS"); do cpu_ms "$JAXPROF" "$c" "$f" --format json; done | sort -n)
    min=$(head -n 1 <<<"$times")
    med=$(sed -n "$(((RUNS + 1) / 2))p" <<<"$times")
    wall[$c]=$mean cpu[$c]=$med
    ratio=""
    [[ $c == "$VS" ]] && ratio=$(python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}×, {float(sys.argv[3])/float(sys.argv[4]):.2f}×')" "${wall[$VS]}" "${wall[ops]}" "${cpu[$VS]}" "${cpu[ops]}")
    printf '| %s | jaxprof %s --format json | %.1f ms ± %.1f ms | %.1f ms | %.1f ms | %s |\n' \
      "$key" "$c" "$mean" "$sd" "$min" "$med" "$ratio"
  done
done
