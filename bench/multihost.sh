#!/usr/bin/env bash
# The multi-host benchmarks (docs/multihost.md): a set of 1,000 host profiles made from the
# project's own 8-device CPU capture (bench/make_hosts.py, ~5.5 GB, not committed), summarised by
# one process (rate against `cat`, peak RSS at 10, 100 and 1,000 hosts), `jaxprof hosts` finding
# the planted slow hosts, and Dask LocalClusters of 1 and 2 workers. Run under nice: it takes the
# machine's disk and cores for several minutes.
#
# usage: bench/multihost.sh [DATA_DIR]   (default /work/bench-data/multihost)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-/work/bench-data/multihost}
bin=${JAXPROF_BIN:-build/jaxprof}
run=$data/plugins/profile/bench
if [ ! -f "$data/planted.txt" ]; then
  python3 bench/make_hosts.py "$data" --hosts 1000
fi
for n in 10 100; do
  sub=$data-$n/plugins/profile/bench
  if [ ! -d "$sub" ]; then
    mkdir -p "$sub"
    for f in $(ls "$run" | head -n "$n"); do ln -s "$run/$f" "$sub/$f"; done
  fi
done
bytes=$(du -bL --apparent-size "$run" | cut -f1)
echo "set: $(ls "$run" | wc -l) hosts, $((bytes / 1000000)) MB; planted: $(cut -d' ' -f1 "$data/planted.txt" | paste -sd' ')"

measure() {  # command...: wall seconds, CPU seconds (user + system), peak RSS in KB
  local out
  out=$( { /usr/bin/time -f "%e %U %S %M" "$@" > /dev/null; } 2>&1 | tail -1)
  read -r wall user sys kb <<< "$out"
  echo "$wall $(python3 -c "print(round($user + $sys, 2))") $kb"
}
# On a shared machine a niced process waits for the CPU: CPU time says what the work costs.
read -r cat_s cat_cpu _ < <(measure cat "$run"/*.xplane.pb)
echo "cat of every file to /dev/null: ${cat_s} s wall, $(python3 -c "print(round($bytes / 1e6 / $cat_s))") MB/s"
for n in 10 100 1000; do
  dir=$data-$n; [ "$n" = 1000 ] && dir=$data
  b=$(du -bL --apparent-size "$dir/plugins/profile/bench" | cut -f1)
  read -r s cpu kb < <(measure "$bin" summary "$dir")
  echo "jaxprof summary, $n hosts: ${s} s wall ($(python3 -c "print(round($b / 1e6 / $s))") MB/s), ${cpu} s CPU ($(python3 -c "print(round($b / 1e6 / $cpu))") MB per CPU second), peak RSS $((kb / 1024)) MB"
done
"$bin" hosts "$data" --top 8
"$bin" hosts "$data" --format json | python3 -c "
import json, sys
r = json.load(sys.stdin)
planted = [l.split()[0] for l in open('$data/planted.txt')]
top = [h['host'] for h in r['hosts'][:len(planted)]]
slow = sorted(h['host'] for h in r['hosts'] if h['slow'])
print('planted', planted, 'ranked first:', top, 'in order:' , top == planted, 'flagged slow:', slow)"
python3 bench/multihost_dask.py "$data" --jaxprof "$bin"
