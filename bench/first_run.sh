#!/usr/bin/env bash
# A newcomer's first commands, timed from a fresh clone with ccache off: `scripts/run.sh` (time to
# its first line of output and to its end) and `pip install .` into a fresh virtual environment
# (build isolation on, as the README's install line runs it). Prints wall and CPU seconds and the
# load average around each, since a busy machine stretches the wall time but not the CPU time.
#
#   bench/first_run.sh [OUT_DIR]      # default /tmp/jaxprof-first-run
#   FIRST_RUN_SKIP_PIP=1 bench/first_run.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/jaxprof-first-run}
rm -rf "$out" && mkdir -p "$out"
export CCACHE_DISABLE=1

cpu_seconds() {  # user + system seconds from a GNU time -v report
  awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.0f", u + s}' "$1"
}

git clone -q "$repo" "$out/clone"
load_before=$(cut -d' ' -f1 /proc/loadavg)
start=$(date +%s.%N)
(cd "$out/clone" && /usr/bin/time -v -o "$out/run.time" scripts/run.sh 2>"$out/run.stderr") |
  python3 -c '
import sys, time
start, first = float(sys.argv[1]), None
for line in sys.stdin:
    if first is None:
        first = time.time() - start
        open(sys.argv[2], "w").write(f"{first:.0f}\n")
' "$start" "$out/run.first"
end=$(date +%s.%N)
echo "scripts/run.sh from a fresh clone: first output after $(cat "$out/run.first") s, done after" \
  "$(python3 -c "print(round($end - $start))") s (clone included), $(cpu_seconds "$out/run.time") CPU s;" \
  "load average $load_before -> $(cut -d' ' -f1 /proc/loadavg), $(nproc) cores"

[ "${FIRST_RUN_SKIP_PIP:-0}" = 1 ] && exit 0
git clone -q "$repo" "$out/pipclone"
python3 -m venv --system-site-packages "$out/venv"  # jax, pandas and numpy as installed here
load_before=$(cut -d' ' -f1 /proc/loadavg)
start=$(date +%s.%N)
(cd "$out/pipclone" && /usr/bin/time -v -o "$out/pip.time" "$out/venv/bin/pip" install -q --no-deps . \
  >"$out/pip.log" 2>&1)
end=$(date +%s.%N)
echo "pip install . from a fresh clone: $(python3 -c "print(round($end - $start))") s," \
  "$(cpu_seconds "$out/pip.time") CPU s; load average $load_before -> $(cut -d' ' -f1 /proc/loadavg)"
