#!/usr/bin/env bash
# Sets up and builds, then runs jaxprof. With no arguments it reports on the bundled example: a
# profile of an 8-device data-parallel MLP training step captured with JAX on the CPU backend. It
# prints the summary and writes the self-contained HTML report to build/example.report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if (($# == 0)); then
  example=tests/data/jax_cpu_8dev
  echo "# jaxprof summary $example" >&2
  build/jaxprof summary "$example"
  echo "# jaxprof report $example -o build/example.report.html" >&2
  exec build/jaxprof report "$example" -o build/example.report.html
fi
exec build/jaxprof "$@"
