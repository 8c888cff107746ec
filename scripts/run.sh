#!/usr/bin/env bash
# Sets up and builds, then runs jaxprof. With no arguments it reports on the bundled example: a
# profile of an 8-device data-parallel MLP training step captured with JAX on the CPU backend.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if (($# == 0)); then
  example=tests/data/jax_cpu_8dev
  echo "# jaxprof summary $example" >&2
  exec build/jaxprof summary "$example"
fi
exec build/jaxprof "$@"
