#!/usr/bin/env bash
# What the input checks cost (model invariants where importers hand over, checked time
# arithmetic): two builds on one large profile, runs alternated so that a busy machine weighs on
# both alike; CPU time (user + sys) and wall time, the minimum and median of RUNS runs each.
#
#   bench/hardening_cost.sh BASE_JAXPROF NEW_JAXPROF PROFILE
#
# BASE_JAXPROF is a build without the change (main's), PROFILE a large one
# (../shared/tools/scale_xplane.py IN OUT --target-mb 80). Environment: RUNS (default 7),
# COMMANDS (default "info ops summary").
set -euo pipefail
[[ $# -eq 3 ]] || { sed -n 2,10p "$0" >&2; exit 2; }
base=$1 new=$2 profile=$3
RUNS=${RUNS:-7}
read -r -a commands <<<"${COMMANDS:-info ops summary}"
for b in "$base" "$new"; do [[ -x $b ]] || { echo "no $b" >&2; exit 2; }; done
[[ -s $profile ]] || { echo "no $profile" >&2; exit 2; }

run() {  # prints "cpu_ms wall_ms" of one run, to 0.1 ms (time(1) rounds to 10 ms)
  python3 -c '
import os, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, use = os.wait4(proc.pid, 0)
wall = time.perf_counter() - t
print(f"{(use.ru_utime + use.ru_stime) * 1000:.1f} {wall * 1000:.1f}")' "$@"
}
stats() {  # min and median of the numbers on stdin
  sort -n | awk '{v[NR] = $1} END {printf "%.1f %.1f\n", v[1], v[int((NR + 1) / 2)]}'
}

printf '| command | CPU ms base (min / median) | CPU ms new (min / median) | CPU median new/base | wall ms base / new (min) |\n'
printf '| --- | --- | --- | --- | --- |\n'
for c in "${commands[@]}"; do
  : >/tmp/hardening_cost.base
  : >/tmp/hardening_cost.new
  for ((i = 0; i < RUNS; i++)); do
    run "$base" "$c" "$profile" --format json >>/tmp/hardening_cost.base
    run "$new" "$c" "$profile" --format json >>/tmp/hardening_cost.new
  done
  read -r bmin bmed < <(cut -d' ' -f1 /tmp/hardening_cost.base | stats)
  read -r nmin nmed < <(cut -d' ' -f1 /tmp/hardening_cost.new | stats)
  read -r bw _ < <(cut -d' ' -f2 /tmp/hardening_cost.base | stats)
  read -r nw _ < <(cut -d' ' -f2 /tmp/hardening_cost.new | stats)
  printf '| %s | %s / %s | %s / %s | %.3f | %s / %s |\n' "$c" "$bmin" "$bmed" "$nmin" "$nmed" \
    "$(awk -v a="$nmed" -v b="$bmed" 'BEGIN {print a / b}')" "$bw" "$nw"
done
