#!/usr/bin/env bash
# jaxprof on 1 GB and 5 GB single-host profiles: summary, ops, roofline, memory, flame,
# export --perfetto and partial, each run once with its wall time, CPU time and peak RSS, next
# to one bare single-threaded pass over every field (baseline_walk) and XProf's converter
# (bench/peer_xprof.py hlo_stats). Prints one Markdown table row per command.
#
#   bench/large_profiles.sh OUT_DIR [SPEC...]
#
# SPEC is MB (both profiles, conv and tpu, at about MB megabytes) or conv:MB / tpu:MB;
# default: 1000 conv:5000. Each profile is OUT_DIR/<kind>_<MB>mb.xplane.pb, made only when
# absent by ../shared/tools/scale_xplane.py --target-mb MB from the fixture
# mi300x_jax_conv.xplane.pb (conv) or tpu_4chip_inference.xplane.pb (tpu). The scaler keeps
# the whole output in memory (about 3x its size at its peak): above STREAM_FROM_MB the same
# bytes are written by bench/scale_xplane_stream.py (the scaler's own line scaling, one
# scratch file per line, two processes), after a check that both give the same file at 8 MB.
# Keep OUT_DIR outside the repository (a 5 GB profile needs 10 GB of disk while it is made).
#
# Needs: jaxprof and baseline_walk from a Release build configured with
# -DJAXPROF_BUILD_BENCH=ON (baseline_walk needs libprotobuf-dev and protobuf-compiler):
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DJAXPROF_BUILD_BENCH=ON
#   cmake --build build --target jaxprof baseline_walk
# GNU time (/usr/bin/time), python3, and for the XProf rows `pip install xprof` (or XPROF=0).
#
# Environment:
#   BUILD_DIR     where jaxprof and baseline_walk are (default <repo>/build)
#   SHARED        the shared fixtures and tools (default <repo>/../shared)
#   PYTHON        the Python that has xprof (default python3)
#   XPROF         1: XProf on profiles up to XPROF_MAX_MB (default 1000); 0: never
#   CAP_KB        address-space cap (ulimit -v, KB) for XProf and for every run on a profile
#                 above CAP_FROM_MB (default 2000): a run that passes it fails instead of
#                 taking the machine's memory. jaxprof maps its input and reserves its event
#                 columns (about 65 bytes an event) up front, so the cap must exceed the file,
#                 the columns and the command's heap: export, partial and flame on a 5 GB
#                 profile reach 18 to 21.5 GB of address space. Default 18000000.
#   STREAM_FROM_MB  profiles above this size are made by scale_xplane_stream.py (default 2000)
#   TMP_OUT       where export and partial write (default /tmp/jaxprof-large; removed after)
#   COMMANDS      the jaxprof commands to run (default: summary ops roofline memory flame
#                 export partial)
#
# Row: | profile | MB | events | command | wall s | CPU s | peak RSS MB | RSS / file |
#      wall / walk | CPU / walk | result |
# MB are 10^6 bytes; CPU is user + system; "walk" is baseline_walk's run on the same file.
# Before the walk the file is read once (cat) so that every run finds it in the page cache.
# Raw figures also go to OUT_DIR/large_profiles.tsv (appended), logs to OUT_DIR/logs/.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
SHARED=${SHARED:-$ROOT/../shared}
PYTHON=${PYTHON:-python3}
XPROF=${XPROF:-1}
XPROF_MAX_MB=${XPROF_MAX_MB:-1000}
CAP_KB=${CAP_KB:-18000000}
CAP_FROM_MB=${CAP_FROM_MB:-2000}
STREAM_FROM_MB=${STREAM_FROM_MB:-2000}
TMP_OUT=${TMP_OUT:-/tmp/jaxprof-large}
COMMANDS=${COMMANDS:-summary ops roofline memory flame export partial}
SCALE=$SHARED/tools/scale_xplane.py
FIXTURES=$SHARED/fixtures/xplane
JAXPROF=$BUILD_DIR/jaxprof
WALK=$BUILD_DIR/baseline_walk
[[ -x $WALK ]] || WALK=$BUILD_DIR/bench/baseline_walk

log() { printf '[large] %s\n' "$*" >&2; }
die() { printf '[large] error: %s\n' "$*" >&2; exit 1; }

(($# >= 1)) || die "usage: bench/large_profiles.sh OUT_DIR [MB | conv:MB | tpu:MB ...]"
OUT=$1
shift
SPECS=("$@")
((${#SPECS[@]})) || SPECS=(1000 conv:5000)

[[ -x $JAXPROF ]] || die "$JAXPROF not built (cmake --build $BUILD_DIR --target jaxprof)"
[[ -x $WALK ]] ||
  die "baseline_walk not built: configure with -DJAXPROF_BUILD_BENCH=ON (needs libprotobuf-dev, protobuf-compiler) and build the target baseline_walk"
[[ -x /usr/bin/time ]] || die "GNU time (/usr/bin/time) is not installed"
[[ -f $SCALE ]] || die "$SCALE not found (set SHARED)"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found"
XPROF_WHY=""
if [[ $XPROF != 1 ]]; then
  XPROF_WHY="not run (XPROF=$XPROF)"
elif ! "$PYTHON" -c 'import xprof.convert.raw_to_tool_data' >/dev/null 2>&1; then
  XPROF_WHY="xprof does not import in $PYTHON (pip install xprof)"
fi

mkdir -p "$OUT/logs" "$TMP_OUT" || die "cannot create $OUT or $TMP_OUT"
OUT=$(cd "$OUT" && pwd -P)
case "$OUT/" in
  "$(cd "$ROOT" && pwd -P)/"*) die "OUT_DIR ($OUT) must not be inside the repository" ;;
esac
TSV=$OUT/large_profiles.tsv

declare -A FIXTURE=([conv]=mi300x_jax_conv.xplane.pb [tpu]=tpu_4chip_inference.xplane.pb)

# make KIND MB: prints the profile's path, making it when absent.
make_profile() {
  local kind=$1 mb=$2 out=$OUT/${1}_${2}mb.xplane.pb
  if [[ ! -s $out ]]; then
    local in=$FIXTURES/${FIXTURE[$kind]} make=(python3 "$SCALE")
    if ((mb > STREAM_FROM_MB)); then
      python3 "$SCALE" "$in" "$OUT/check.ref" --target-mb 8 2>/dev/null &&
        python3 "$ROOT/bench/scale_xplane_stream.py" "$SCALE" "$in" "$OUT/check.new" --target-mb 8 \
          2>/dev/null && cmp -s "$OUT/check.ref" "$OUT/check.new" ||
        die "scale_xplane_stream.py does not write what scale_xplane.py writes"
      rm -f "$OUT/check.ref" "$OUT/check.new"
      make=(python3 "$ROOT/bench/scale_xplane_stream.py" "$SCALE")
    fi
    log "making $out (${make[*]:1} --target-mb $mb)"
    /usr/bin/time -f '%e s %U+%S cpu %M KB' -o "$OUT/logs/make_${kind}_${mb}mb.time" \
      "${make[@]}" "$in" "$out.tmp" --target-mb "$mb" \
      2>"$OUT/logs/make_${kind}_${mb}mb.log" || die "making $out failed (see $OUT/logs)"
    mv "$out.tmp" "$out"
  fi
  printf '%s\n' "$out"
}

# measure NAME CAPPED STDOUT -- CMD...: runs CMD once, its output to STDOUT; sets WALL CPU RSS
# RC and ERR (the first lines of its stderr when it failed).
measure() {
  local capped=$2 stdout=$3 tf=$OUT/logs/$1.time errf=$OUT/logs/$1.err
  shift 4
  if [[ $capped == 1 ]]; then
    bash -c 'ulimit -v "$0"; exec /usr/bin/time -f "%e %U %S %M" -o "$1" "${@:2}"' \
      "$CAP_KB" "$tf" "$@" >"$stdout" 2>"$errf"
  else
    /usr/bin/time -f '%e %U %S %M' -o "$tf" "$@" >"$stdout" 2>"$errf"
  fi
  RC=$?
  read -r WALL USR SYS RSS < <(grep -E '^[0-9.]+ [0-9.]+ [0-9.]+ [0-9]+$' "$tf" | tail -n 1)
  CPU=$(awk -v u="${USR:-0}" -v s="${SYS:-0}" 'BEGIN {printf "%.2f", u + s}')
  ERR=""
  if ((RC != 0)); then
    # The last lines that are not chatter (absl's I/W lines, GNU time's own line, jaxprof's 'read').
    ERR="exit $RC: $(grep -v -E '^Command (exited|terminated)|^[[:space:]]*$|^[IW][0-9]{4} |^WARNING: All log|^jaxprof: read ' \
                     "$errf" | tail -n 2 | tr '\n' ' ' | cut -c1-300)"
  fi
}

row() {  # row FILE SIZE EVENTS LABEL [extra result text]
  local file=$1 size=$2 events=$3 label=$4 extra=${5:-}
  local result=${ERR:-ok}
  [[ -n $extra && -z $ERR ]] && result="ok; $extra"
  awk -v f="$(basename "$file")" -v size="$size" -v ev="$events" -v l="$label" -v w="$WALL" \
      -v c="$CPU" -v r="$RSS" -v ww="$WALK_WALL" -v wc="$WALK_CPU" -v res="$result" 'BEGIN {
    mb = r * 1024 / 1e6
    printf "| %s | %.0f | %d | %s | %.2f | %.2f | %.0f | %.2f | %s | %s | %s |\n", f, size / 1e6, ev, l,
      w, c, mb, mb * 1e6 / size, (ww > 0 ? sprintf("%.2f", w / ww) : "-"),
      (wc > 0 ? sprintf("%.2f", c / wc) : "-"), res
  }'
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$file" "$size" "$events" "$label" "$WALL" "$CPU" \
    "$RSS" "$result" >>"$TSV"
}

echo "| profile | MB | events | command | wall s | CPU s | peak RSS MB | RSS / file | wall / walk | CPU / walk | result |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for spec in "${SPECS[@]}"; do
  if [[ $spec == *:* ]]; then kinds=("${spec%%:*}"); mb=${spec#*:}; else kinds=(conv tpu); mb=$spec; fi
  for kind in "${kinds[@]}"; do
    [[ -n ${FIXTURE[$kind]:-} ]] || die "unknown profile kind '$kind' (conv or tpu)"
    file=$(make_profile "$kind" "$mb") || exit 1
    size=$(stat -c %s "$file")
    capped=0
    ((size > CAP_FROM_MB * 1000000)) && capped=1
    stem=${kind}_${mb}mb
    cat "$file" >/dev/null
    log "$stem: baseline_walk"
    WALK_WALL=0 WALK_CPU=0
    measure "$stem.walk" "$capped" "$OUT/logs/$stem.walk.out" -- "$WALK" "$file"
    events=$(grep -o 'events=[0-9]*' "$OUT/logs/$stem.walk.out" | cut -d= -f2)
    row "$file" "$size" "${events:-0}" "baseline_walk"
    ((RC == 0)) && WALK_WALL=$WALL WALK_CPU=$CPU
    for cmd in $COMMANDS; do
      extra=""
      rm -rf "${TMP_OUT:?}"/*
      case $cmd in
        export) args=(export "$file" --perfetto "$TMP_OUT/$stem.pftrace") ;;
        partial) args=(partial "$file" -o "$TMP_OUT/$stem.partial") ;;
        *) args=("$cmd" "$file") ;;
      esac
      log "$stem: jaxprof ${args[*]}"
      measure "$stem.$cmd" "$capped" /dev/null -- "$JAXPROF" "${args[@]}"
      [[ -n $ERR && $capped == 1 ]] && ERR="$ERR (ulimit -v $CAP_KB)"
      for o in "$TMP_OUT/$stem.pftrace" "$TMP_OUT/$stem.partial"; do
        [[ -f $o ]] && extra="wrote $(awk -v s="$(stat -c %s "$o")" 'BEGIN {printf "%.3f", s / 1e6}') MB"
      done
      row "$file" "$size" "${events:-0}" "jaxprof $cmd" "$extra"
    done
    rm -rf "${TMP_OUT:?}"/*
    if [[ $XPROF == 1 ]] && ((size <= XPROF_MAX_MB * 1100000)); then
      if [[ -n $XPROF_WHY ]]; then
        WALL=0 CPU=0 RSS=0 ERR=$XPROF_WHY
      else
        log "$stem: XProf hlo_stats (ulimit -v $CAP_KB)"
        measure "$stem.xprof_hlo_stats" 1 /dev/null -- "$PYTHON" "$ROOT/bench/peer_xprof.py" hlo_stats "$file"
        [[ -n $ERR ]] && ERR="$ERR (ulimit -v $CAP_KB)"
      fi
      row "$file" "$size" "${events:-0}" "XProf hlo_stats"
    fi
  done
done
