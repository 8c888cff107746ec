#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (AddressSanitizer and UndefinedBehaviorSanitizer)
# and runs them: each target first replays every input that ever broke it (fuzz/regressions/), then
# fuzzes for SECONDS from its corpus and its seeds. Any crash, hang, sanitizer report or
# out-of-memory makes the script fail, with the input that caused it kept under findings/.
#
# usage: scripts/fuzz.sh [TARGET|all] [SECONDS]
#   TARGET   xspace gzip chrome_trace zip xz parquet csv nsys_jax hlo partial analyses, or all
#            (default)
#   SECONDS  fuzzing time per target (default 60); 0 only replays the regression inputs
#
# Environment:
#   JAXPROF_FUZZ_BUILD_DIR  build tree (default build-fuzz)
#   JAXPROF_FUZZ_WORK       corpora, seeds, findings and the log of runs (default <build>/fuzz-work);
#                           the corpora grow from run to run
#   JAXPROF_FUZZ_ARGS       more libFuzzer options, e.g. "-use_value_profile=1"
#   JAXPROF_FUZZ_SEED       libFuzzer's random seed (default: a new one each run); the test command
#                           fixes it, so that what CI finds can be found again with the same seed
#   JAXPROF_FUZZ_NO_BUILD=1 run the targets as built (a long campaign while the sources change)
# The seeds are made afresh each run from tests/data and the shared profiles (../shared/fixtures),
# read in place. docs/fuzzing.md has the details.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(xspace gzip chrome_trace zip xz parquet csv nsys_jax hlo partial analyses)
target=${1:-all}
seconds=${2:-60}
if [ "$target" = all ]; then
  targets=("${all_targets[@]}")
elif [[ " ${all_targets[*]} " == *" $target "* ]]; then
  targets=("$target")
else
  echo "fuzz.sh: unknown target '$target' (one of: ${all_targets[*]}, all)" >&2
  exit 2
fi
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 2; }

build=${JAXPROF_FUZZ_BUILD_DIR:-build-fuzz}
work=${JAXPROF_FUZZ_WORK:-$build/fuzz-work}
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ is missing (scripts/setup.sh installs it)" >&2
  exit 2
fi
# A tree already configured for fuzzing (scripts/test.sh's sanitizer build) is used as it is;
# else -O1 with asserts, what libFuzzer's authors recommend (fast, yet every check kept).
if [ "${JAXPROF_FUZZ_NO_BUILD:-0}" != 1 ]; then
  if ! grep -q '^JAXPROF_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" -DJAXPROF_FUZZ=ON -DJAXPROF_BUILD_TESTS=OFF >/dev/null
  fi
  extra=()
  # The partial target's seeds are written by the CLI from the project's captures.
  [[ " ${targets[*]} " == *" partial "* ]] && extra=(jaxprof)
  cmake --build "$build" --target "${targets[@]/#/fuzz_}" "${extra[@]}" >&2
fi

mkdir -p "$work"
ASAN_OPTIONS=detect_leaks=0 python3 fuzz/make_seeds.py "$work/seeds" --jaxprof "$build/jaxprof" >/dev/null

# The dictionaries a target's inputs draw from.
dicts_of() {
  case $1 in
    xspace) echo xspace ;;
    chrome_trace) echo chrome_trace ;;
    hlo) echo hlo ;;
    partial) echo xspace partial ;;
    zip) echo zip ;;
    xz) echo xz ;;
    parquet) echo parquet ;;
    csv) echo csv ;;
    nsys_jax) echo zip parquet csv ;;
    analyses) echo xspace chrome_trace zip parquet ;;
    *) ;;
  esac
}
# Longest input: the largest seed fits; bigger inputs only slow the search down.
max_len_of() {
  case $1 in
    nsys_jax | analyses) echo 131072 ;;
    xz | csv) echo 16384 ;;
    *) echo 65536 ;;
  esac
}

status=0
summary=()
for t in "${targets[@]}"; do
  bin="$build/fuzz_$t"
  corpus="$work/corpus/$t"
  findings="$work/findings/$t"
  mkdir -p "$corpus" "$findings" "$work/seeds/$t"
  options=(-rss_limit_mb=2048 -timeout=10 -max_len="$(max_len_of "$t")"
           -artifact_prefix="$findings/" -print_final_stats=1)
  [ -n "${JAXPROF_FUZZ_SEED:-}" ] && options+=(-seed="$JAXPROF_FUZZ_SEED")
  dict="$work/$t.dict"
  : >"$dict"
  for d in $(dicts_of "$t"); do cat "fuzz/dict/$d.dict" >>"$dict"; done
  [ -s "$dict" ] && options+=(-dict="$dict")

  # Every input that ever broke the target, run once each.
  shopt -s nullglob
  regressions=(fuzz/regressions/"$t"/*)
  shopt -u nullglob
  if ((${#regressions[@]})); then
    if ! "$bin" "${options[@]}" "${regressions[@]}" >"$work/$t.replay.log" 2>&1; then
      echo "fuzz.sh: $t fails on a regression input (log: $work/$t.replay.log)" >&2
      tail -30 "$work/$t.replay.log" >&2
      status=1
      continue
    fi
  fi
  ((seconds > 0)) || { summary+=("$t: ${#regressions[@]} regression inputs replayed"); continue; }

  log="$work/$t.log"
  # shellcheck disable=SC2086  # JAXPROF_FUZZ_ARGS holds several options
  if "$bin" "${options[@]}" -max_total_time="$seconds" ${JAXPROF_FUZZ_ARGS:-} "$corpus" \
      "$work/seeds/$t" >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
    echo "fuzz.sh: $t found a problem (log: $log); the input is in $findings/" >&2
    grep -E "ERROR|SUMMARY|Test unit written|fuzz check failed" "$log" | head -20 >&2 || true
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E "^#[0-9]+" "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$seconds" "${execs:-0}" \
    "${cov:-?}" "${ft:-?}" "$result" >>"$work/runs.tsv"
  summary+=("$(printf '%-13s %s  %10s execs  cov %6s  ft %6s  %s regression inputs' "$t" \
    "$result" "${execs:-0}" "${cov:-?}" "${ft:-?}" "${#regressions[@]}")")
done
printf '%s\n' "${summary[@]}" >&2
exit $status
