#!/usr/bin/env bash
# Run xprof-rs (a Rust reimplementation of XProf's backend and agent CLI) on
# one .xplane.pb file, for benchmarks.
#
# usage: peer_xprof_rs.sh [COMMAND] FILE.xplane.pb [--out OUT]
#   COMMAND defaults to get_hlo_stats (per-HLO-op statistics); another useful
#   one is aggregate_xplane_events (count/total/percentiles per event name).
#
# The binary is $XPROF_RS, else $BENCH_DIR/venv/bin/xprof-rs, else xprof-rs on
# PATH. The file is linked alone into a fresh temporary directory, because
# xprof-rs (like XProf) reads every *.xplane.pb in the file's directory as one
# more host of the session, and its op statistics give no data for a session
# of several hosts. Exit status 0 only when xprof-rs exited 0 and printed no
# ERROR / NO_DATA status.
set -euo pipefail

usage() { sed -n '5,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

out=""
args=()
while (($#)); do
  case "$1" in
    --out) (($# >= 2)) || usage; out="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) args+=("$1"); shift ;;
  esac
done
case ${#args[@]} in
  1) cmd=get_hlo_stats; file=${args[0]} ;;
  2) cmd=${args[0]}; file=${args[1]} ;;
  *) usage ;;
esac
[[ -f "$file" ]] || { echo "peer_xprof_rs: no such file: $file" >&2; exit 1; }

bin=${XPROF_RS:-}
if [[ -z "$bin" && -x "${BENCH_DIR:-/tmp/jaxprof-bench}/venv/bin/xprof-rs" ]]; then
  bin="${BENCH_DIR:-/tmp/jaxprof-bench}/venv/bin/xprof-rs"
fi
if [[ -z "$bin" ]]; then
  bin=$(command -v xprof-rs || true)
fi
[[ -n "$bin" && -x "$bin" ]] || { echo "peer_xprof_rs: xprof-rs not found (pip install xprof-rs)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/peer_xprof_rs_XXXXXX")
trap 'rm -rf "$work"' EXIT
base=$(basename "$file")
[[ "$base" == *.xplane.pb ]] || base="$base.xplane.pb"
mkdir "$work/session"
ln -s "$(cd "$(dirname "$file")" && pwd)/$(basename "$file")" "$work/session/$base"

rc=0
TMPDIR="$work" "$bin" "$cmd" "$work/session/$base" > "$work/result.json" || rc=$?
if ((rc != 0)) || head -c 4096 "$work/result.json" | grep -Eq '"status": *"(ERROR|NO_DATA)"'; then
  echo "peer_xprof_rs: xprof-rs $cmd failed (exit $rc) on $file:" >&2
  head -c 600 "$work/result.json" >&2
  echo >&2
  exit 1
fi
[[ -z "$out" ]] || cp "$work/result.json" "$out"
echo "xprof-rs $cmd: $(wc -c < "$work/result.json") bytes of JSON"
