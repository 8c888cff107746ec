#!/usr/bin/env bash
# Sets up, builds, and runs every test: the C++ suite (release, built with GCC; then again built
# with clang under AddressSanitizer and UndefinedBehaviorSanitizer), the fuzz targets (every input
# that ever broke one, then a short run of each), then installs the Python package and runs the
# Python suite. Both compilers must build the project without a warning.
set -euo pipefail
cd "$(dirname "$0")/.."
JAXPROF_WITH_PYTHON_DEPS=1 JAXPROF_BUILD_TARGETS=all \
  JAXPROF_CMAKE_ARGS="-DJAXPROF_WERROR=ON ${JAXPROF_CMAKE_ARGS:-}" scripts/setup.sh

echo "== Structure (layers, file and function lengths)"
python3 scripts/check_structure.py

echo "== C++ tests (release, GCC)"
ctest --test-dir build --output-on-failure -j2

echo "== C++ tests (debug, clang, sanitizers)"
# The same objects carry the fuzzer's coverage instrumentation (JAXPROF_FUZZ), so the fuzz
# targets below need no build of their own.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DJAXPROF_FUZZ=ON -DJAXPROF_WERROR=ON >/dev/null
cmake --build build-asan >&2
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j2

fuzz_seconds=${JAXPROF_FUZZ_SECONDS:-45}
echo "== Fuzzing (regression inputs, then ${fuzz_seconds} s per target)"
# A fixed libFuzzer seed and an empty corpus: a failure here can be found again elsewhere with
# the same command. The long campaigns (scripts/fuzz.sh, a new seed each run) are what explore.
rm -rf build-asan/fuzz-ci
JAXPROF_FUZZ_SEED=${JAXPROF_FUZZ_SEED:-1} JAXPROF_FUZZ_WORK=build-asan/fuzz-ci \
  JAXPROF_FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh all "$fuzz_seconds"

echo "== Python package (pip install .)"
# Incremental: scikit-build-core keeps its build tree in build-skbuild/ and ccache is shared.
python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .

echo "== Python tests"
JAXPROF_BIN="$PWD/build/jaxprof" python3 -m pytest -q tests/python
