#!/usr/bin/env bash
# End-to-end benchmark of `jaxprof ops` against two baselines and two peers on
# two large profiles. Idempotent: it reuses the profiles, the venv and the
# build that an earlier run left. Writes bench/RESULTS.md and prints it.
#
#   bench/run.sh
#
# Environment:
#   BENCH_DIR     scratch directory, never inside the repository
#                 (default /tmp/jaxprof-bench): big profiles, venv, logs
#   BUILD_DIR     build directory (default <repo>/build-bench)
#   RUNS, WARMUP  hyperfine runs and warm-up runs per command (default 5, 1)
#   TARGET_MB     size of the big profiles (default 80)
#   BENCH_NO_PEERS=1   do not install or run xprof / xprof-rs
#   BENCH_SKIP_SLOW=1  skip the xprof CLI aggregate_xplane_events row (~40 s a run)
#   CMD_TIMEOUT   seconds before one run of one command is given up (default 600)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/jaxprof-bench}
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
TARGET_MB=${TARGET_MB:-80}
CMD_TIMEOUT=${CMD_TIMEOUT:-600}
SHARED=${SHARED:-$ROOT/../shared}
FIXTURES=$SHARED/fixtures/xplane
SCALE=$SHARED/tools/scale_xplane.py

log() { printf '[bench] %s\n' "$*" >&2; }
die() { printf '[bench] error: %s\n' "$*" >&2; exit 1; }

mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd -P)
case "$BENCH_DIR/" in
  "$(cd "$ROOT" && pwd -P)/"*) die "BENCH_DIR ($BENCH_DIR) must not be inside the repository" ;;
esac
export BENCH_DIR
for tool in hyperfine python3; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done
[[ -x /usr/bin/time ]] || die "GNU time (/usr/bin/time) is not installed"

# ---------------------------------------------------------------- (i) profiles
declare -A SOURCE=(
  [big_conv]=mi300x_jax_conv.xplane.pb
  [big_tpu]=tpu_4chip_inference.xplane.pb
)
FILE_KEYS=(big_conv big_tpu)
for key in "${FILE_KEYS[@]}"; do
  out=$BENCH_DIR/$key.xplane.pb
  if [[ -s "$out" ]]; then
    log "profile $out exists"
    continue
  fi
  src=$FIXTURES/${SOURCE[$key]}
  [[ -f "$src" ]] || die "fixture $src not found"
  log "making $out from $src (--target-mb $TARGET_MB)"
  msg=$(python3 "$SCALE" "$src" "$out.tmp" --target-mb "$TARGET_MB" 2>&1) ||
    die "scale_xplane.py failed: $msg"
  # TPU ops carry their device clock in stats that older scalers kept byte for byte: shift them
  # per copy, or every copy of an op sits on top of the others on the device clock. A scaler that
  # moves device_offset_ps itself has done so already (shifting again would move copy k by 2k spans).
  copies=$(sed -n 's/.*: \([0-9]*\) copies.*/\1/p' <<<"$msg")
  if [[ $key == big_tpu && -n $copies ]] && ! grep -q device_offset_ps "$SCALE"; then
    python3 "$ROOT/bench/scale_device_clock.py" "$out.tmp" "$copies" "$out.dev" &&
      mv "$out.dev" "$out.tmp" || die "scale_device_clock.py failed"
  fi
  mv "$out.tmp" "$out"
done

# ------------------------------------------------------------------ (ii) build
mkdir -p "$BENCH_DIR/logs"
BUILD_LOG=$BENCH_DIR/logs/build.log
: > "$BUILD_LOG"
JAXPROF_WHY=""
BASE_DIR=""
if [[ -f "$ROOT/CMakeLists.txt" ]]; then
  log "configuring $BUILD_DIR (Release, JAXPROF_BUILD_BENCH=ON; log: $BUILD_LOG)"
  if cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DJAXPROF_BUILD_BENCH=ON -DJAXPROF_BUILD_TESTS=OFF >>"$BUILD_LOG" 2>&1; then
    log "building jaxprof"
    cmake --build "$BUILD_DIR" --target jaxprof >>"$BUILD_LOG" 2>&1 ||
      JAXPROF_WHY="build failed (see $BUILD_LOG)"
    log "building baseline_protobuf baseline_walk"
    cmake --build "$BUILD_DIR" --target baseline_protobuf baseline_walk >>"$BUILD_LOG" 2>&1 || true
  else
    JAXPROF_WHY="configure failed (see $BUILD_LOG)"
  fi
else
  JAXPROF_WHY="no top-level CMakeLists.txt yet"
fi
JAXPROF=$BUILD_DIR/jaxprof
if [[ -x "$JAXPROF" && -z "$JAXPROF_WHY" ]]; then
  :
elif [[ -x "$JAXPROF" ]]; then
  log "warning: $JAXPROF_WHY; not measuring a stale $JAXPROF"
else
  JAXPROF_WHY="not built: ${JAXPROF_WHY:-$JAXPROF was not produced}"
fi

# The project puts executables at the top of the build tree; the bench
# directory's own build keeps them in build-bench/bench.
for d in "$BUILD_DIR" "$BUILD_DIR/bench"; do
  if [[ -x "$d/baseline_protobuf" && -x "$d/baseline_walk" ]]; then BASE_DIR=$d; break; fi
done
if [[ -z "$BASE_DIR" ]]; then
  BASE_DIR=$BUILD_DIR/bench-standalone
  log "building the baselines on their own in $BASE_DIR"
  { cmake -S "$ROOT/bench" -B "$BASE_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$BASE_DIR"; } >>"$BUILD_LOG" 2>&1 || log "baseline build failed (see $BUILD_LOG)"
fi

# ------------------------------------------------------------------- peers
PEER_XPROF_WHY="" PEER_XPROF_RS_WHY=""
VENV=$BENCH_DIR/venv
if [[ "${BENCH_NO_PEERS:-0}" == 1 ]]; then
  PEER_XPROF_WHY="skipped (BENCH_NO_PEERS=1)"; PEER_XPROF_RS_WHY=$PEER_XPROF_WHY
else
  PIP_LOG=$BENCH_DIR/logs/pip.log
  if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating $VENV"
    python3 -m venv "$VENV" >"$PIP_LOG" 2>&1 || true
  fi
  if [[ ! -x "$VENV/bin/python" ]]; then
    PEER_XPROF_WHY="python3 -m venv failed (see $PIP_LOG)"; PEER_XPROF_RS_WHY=$PEER_XPROF_WHY
  else
    if ! "$VENV/bin/python" -c 'import xprof.convert.raw_to_tool_data' >/dev/null 2>&1 ||
       [[ ! -x "$VENV/bin/xprof-rs" ]]; then
      log "pip install xprof xprof-rs into $VENV (log: $PIP_LOG)"
      "$VENV/bin/python" -m pip install --disable-pip-version-check xprof >>"$PIP_LOG" 2>&1 || true
      "$VENV/bin/python" -m pip install --disable-pip-version-check xprof-rs >>"$PIP_LOG" 2>&1 || true
    fi
    if ! err=$("$VENV/bin/python" -c 'import xprof.convert.raw_to_tool_data' 2>&1); then
      PEER_XPROF_WHY="xprof does not install or import here: $(tail -n 1 <<<"$err")"
      grep -q "xprof" "$PIP_LOG" 2>/dev/null && PEER_XPROF_WHY+=" (see $PIP_LOG)"
    fi
    [[ -x "$VENV/bin/xprof-rs" ]] ||
      PEER_XPROF_RS_WHY="xprof-rs did not install (see $PIP_LOG)"
  fi
fi
export XPROF_RS=$VENV/bin/xprof-rs

# ------------------------------------------------------------- environment
ENV_TXT=$BENCH_DIR/logs/environment.txt
{
  echo "date:      $(date -u '+%Y-%m-%d %H:%M UTC')"
  rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo none)
  [[ "$rev" == *-dirty ]] && rev+=" (uncommitted changes were built)"
  echo "commit:    $rev"
  echo "cpu:       $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  echo "memory:    $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  echo "kernel:    $(uname -r)"
  echo "compiler:  $(c++ --version | head -n 1)"
  echo "protobuf:  $(protoc --version 2>/dev/null || echo unknown)"
  echo "hyperfine: $(hyperfine --version)"
  echo "runs:      $RUNS (+$WARMUP warm-up) per command"
  echo "load avg:  $(cut -d' ' -f1-3 /proc/loadavg) at the start (other work on the machine adds noise)"
  if [[ -x "$VENV/bin/python" ]]; then
    for p in xprof xprof-rs; do
      v=$("$VENV/bin/python" -m pip show "$p" 2>/dev/null | awk '/^Version:/ {print $2}')
      echo "$p: $(printf '%*s' $((9 - ${#p})) '')${v:-not installed}"
    done
  fi
} >"$ENV_TXT"

# ------------------------------------------------------ (iii)+(iv) measuring
RES_DIR=$BENCH_DIR/results
mkdir -p "$RES_DIR"
RESULTS_TSV=$RES_DIR/results.tsv
: >"$RESULTS_TSV"

quote() { local out="" a; for a in "$@"; do out+="$(printf '%q' "$a") "; done; printf '%s' "${out% }"; }

# measure FILE_KEY FILE SIZE EVENTS ROW_ID LABEL WHAT WHY_UNAVAILABLE RUNS WARMUP -- CMD...
measure() {
  local key=$1 file=$2 size=$3 events=$4 id=$5 label=$6 what=$7 why=$8 runs=$9 warmup=${10}
  shift 11
  local base=$RES_DIR/$key.$id
  local status=ok reason="" json="" rss=""
  if [[ -n "$why" ]]; then
    status=missing; reason=$why
    [[ "$why" == skipped* ]] && status=skipped
  else
    log "$key: $label (check run + peak RSS)"
    local rc=0
    timeout "$CMD_TIMEOUT" /usr/bin/time -f '%M %e' -o "$base.rss" "$@" >"$base.out" 2>"$base.err" || rc=$?
    if ((rc != 0)); then
      status=failed
      reason="exit $rc: $(grep -v -E '^[IWE][0-9]{4} |^WARNING: All log messages|^Command exited' "$base.err" |
                           grep -v -E '^[[:space:]]*$|^Please report|^Traceback' | head -n 2 |
                           tr '\n' ' ' | cut -c1-240)"
      ((rc == 124)) && reason="timed out after ${CMD_TIMEOUT}s"
    elif [[ ! -s "$base.out" ]]; then
      status=failed; reason="printed nothing"
    else
      rss=$(awk '/^[0-9]+ [0-9.]+$/ {r = $1} END {print r}' "$base.rss")
      json=$base.hyperfine.json
      if ((runs == 1 && warmup == 0)); then
        # A single cold run: the check run is the measurement.
        awk -v label="$label" '/^[0-9]+ [0-9.]+$/ {t = $2}
          END {printf "{\"results\": [{\"command\": \"%s\", \"mean\": %s, \"stddev\": null, \"times\": [%s]}]}\n", label, t, t}' \
          "$base.rss" >"$json"
      elif log "$key: $label (hyperfine, $runs runs)"; ! hyperfine -N --style basic --warmup "$warmup" --runs "$runs" --export-json "$json" \
             --command-name "$label" "$(quote "$@")" >"$base.hyperfine.txt" 2>&1; then
        status=failed; reason="hyperfine failed: $(tail -n 2 "$base.hyperfine.txt" | tr '\n' ' ')"
      fi
    fi
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$key" "$file" "$size" "$events" "$id" \
    "$label" "$what" "$status" "${reason//$'\t'/ }" "$json" "$rss" >>"$RESULTS_TSV"
}

BP=$BASE_DIR/baseline_protobuf
BW=$BASE_DIR/baseline_walk
BP_WHY="" BW_WHY=""
[[ -x "$BP" ]] || BP_WHY="not built (see $BUILD_LOG)"
[[ -x "$BW" ]] || BW_WHY="not built (see $BUILD_LOG)"
SLOW_WHY=$PEER_XPROF_WHY
[[ -z "$SLOW_WHY" && "${BENCH_SKIP_SLOW:-0}" == 1 ]] && SLOW_WHY="skipped (BENCH_SKIP_SLOW=1)"

for key in "${FILE_KEYS[@]}"; do
  f=$BENCH_DIR/$key.xplane.pb
  size=$(stat -c %s "$f")
  events=""
  [[ -x "$BW" ]] && events=$("$BW" "$f" | sed -n 's/.*events=\([0-9]*\).*/\1/p')
  m() { measure "$key" "$f" "$size" "$events" "$@"; }
  m jaxprof "jaxprof ops --format json" "per-op statistics as JSON" \
    "$JAXPROF_WHY" "$RUNS" "$WARMUP" -- "$JAXPROF" ops "$f" --format json
  m jaxprof_info "jaxprof info --format json" "decodes every event of every line (lines, spans, modules)" \
    "$JAXPROF_WHY" "$RUNS" "$WARMUP" -- "$JAXPROF" info "$f" --format json
  m protobuf "baseline_protobuf" "libprotobuf parse + count/total ps per event name" \
    "$BP_WHY" "$RUNS" "$WARMUP" -- "$BP" "$f"
  m walk "baseline_walk" "one pass over every field, checksum" \
    "$BW_WHY" "$RUNS" "$WARMUP" -- "$BW" "$f"
  m xprof_hlo "xprof hlo_stats (Python API)" "XSpace → OpStats → HLO op stats table" \
    "$PEER_XPROF_WHY" "$RUNS" "$WARMUP" -- "$VENV/bin/python" "$ROOT/bench/peer_xprof.py" hlo_stats "$f"
  m xprof_rs_hlo "xprof-rs get_hlo_stats" "HLO op stats (XProf 2.23.2 agent CLI output)" \
    "$PEER_XPROF_RS_WHY" "$RUNS" "$WARMUP" -- "$ROOT/bench/peer_xprof_rs.sh" get_hlo_stats "$f"
  m xprof_rs_agg "xprof-rs aggregate_xplane_events" "count/total/percentiles per event name, all planes" \
    "$PEER_XPROF_RS_WHY" "$RUNS" "$WARMUP" -- "$ROOT/bench/peer_xprof_rs.sh" aggregate_xplane_events "$f"
  m xprof_agg "xprof aggregate_xplane_events (CLI)" "count/total/percentiles per event name, all planes" \
    "$SLOW_WHY" 1 0 -- "$VENV/bin/python" "$ROOT/bench/peer_xprof.py" cli:aggregate_xplane_events "$f"
done

# ------------------------------------------------------------------ (v) report
python3 "$ROOT/bench/make_report.py" "$RESULTS_TSV" "$ROOT/bench/RESULTS.md" "$ENV_TXT"
