#!/usr/bin/env bash
# Sets up and builds the jaxprof command (not the tests: scripts/test.sh builds those), then runs
# it. With no arguments it reports on the bundled example: a profile of an 8-device data-parallel
# MLP training step captured with JAX on the CPU backend. It prints the summary, writes the
# self-contained HTML report to build/example.report.html, and says what to try next.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
scripts/setup.sh
if (($# == 0)); then
  example=tests/data/jax_cpu_8dev
  report=build/example.report.html
  echo "# jaxprof summary $example" >&2
  build/jaxprof summary "$example"
  echo "# jaxprof report $example -o $report" >&2
  build/jaxprof report "$example" -o "$report"
  {
    echo
    echo "Done in $((SECONDS - started)) s. Open the report in a web browser: file://$PWD/$report"
    echo "Next, on the example or on your own capture (a jax.profiler.trace log directory):"
    printf '  %-57s %s\n' \
      "build/jaxprof ops $example" "time per HLO op, per device" \
      "build/jaxprof flame $example -o flame.svg" "a flamegraph by Python source line" \
      "build/jaxprof collectives $example" "message sizes, bandwidth, stragglers" \
      "build/jaxprof /path/to/logdir" "the one-screen summary of your own profile" \
      "build/jaxprof --help" "every command (docs/cli.md)" \
      'pip install ".[capture,dataframe]"' "the Python package (README: From Python)"
  } >&2
  exit 0
fi
exec build/jaxprof "$@"
