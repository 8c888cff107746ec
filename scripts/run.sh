#!/usr/bin/env bash
# Sets up and builds, then runs jaxprof. With no arguments it reports on the bundled example: a
# profile of an 8-device data-parallel MLP training step captured with JAX on the CPU backend.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if (($# == 0)); then
  example=tests/data/jax_cpu_8dev
  echo "# jaxprof info $example" >&2
  build/jaxprof info "$example"
  echo "# jaxprof ops $example --top 8" >&2
  exec build/jaxprof ops "$example" --top 8
fi
exec build/jaxprof "$@"
