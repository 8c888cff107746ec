#!/usr/bin/env bash
# `jaxprof report` on big profiles: hyperfine wall time (mean ± σ), CPU time (user + sys) and peak
# RSS (GNU time, medians of RUNS runs) and the page's size, for this build and, when given, a baseline build of
# the same command (e.g. one built from main), next to `summary --format json` as the floor
# (report runs summary's analyses and more).
#
#   bench/report_time.sh PROFILE... [-- BASELINE_JAXPROF]
#
# Environment: JAXPROF (default build/jaxprof), RUNS (default 10), WARMUP (default 2).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JAXPROF=${JAXPROF:-$ROOT/build/jaxprof}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
profiles=()
baseline=""
while (($#)); do
  if [[ $1 == -- ]]; then baseline=${2:-}; break; fi
  profiles+=("$1")
  shift
done
((${#profiles[@]})) || { echo "usage: $0 PROFILE... [-- BASELINE_JAXPROF]" >&2; exit 2; }
[[ -x "$JAXPROF" ]] || { echo "no $JAXPROF: build it first" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

median() { sort -n | awk '{a[NR] = $1} END {printf "%.0f", a[int((NR + 1) / 2)]}'; }

cpu_rss() {  # "CPU ms<TAB>RSS MB": medians over RUNS runs of "$@"
  local runs
  runs=$(for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%U %S %M' "$@" 2>&1 >/dev/null | tail -n 1
  done)
  printf '%s\t%s\n' "$(awk '{print ($1 + $2) * 1000}' <<<"$runs" | median)" \
    "$(awk '{print $3 / 1024}' <<<"$runs" | median)"
}

printf '| profile | build | command | wall mean ± σ | CPU (median) | peak RSS (median) | page |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for f in "${profiles[@]}"; do
  builds=("this:$JAXPROF")
  [[ -n $baseline ]] && builds+=("baseline:$baseline")
  for b in "${builds[@]}"; do
    name=${b%%:*} bin=${b#*:}
    for c in report summary; do
      if [[ $c == report ]]; then cmd=("$bin" report "$f" -o "$out/page.html")
      else cmd=("$bin" summary "$f" --format json); fi
      [[ $c == summary && $name == baseline ]] && continue
      json=$out/h.json
      hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
        "${cmd[*]}" >/dev/null 2>&1
      wall=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; \
print(f\"{r['mean']*1e3:.0f} ± {r['stddev']*1e3:.0f} ms\")" "$json")
      IFS=$'\t' read -r cpu rss < <(cpu_rss "${cmd[@]}")
      page="—"
      [[ $c == report ]] && page="$(( $(stat -c %s "$out/page.html") / 1024 )) KiB"
      printf '| %s | %s | %s | %s | %s ms | %s MB | %s |\n' "$(basename "$f")" "$name" "$c" "$wall" \
        "$cpu" "$rss" "$page"
    done
  done
done
