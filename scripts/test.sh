#!/usr/bin/env bash
# Sets up, builds, and runs every test: the C++ suite (release, then again under AddressSanitizer
# and UndefinedBehaviorSanitizer), then installs the Python package and runs the Python suite.
set -euo pipefail
cd "$(dirname "$0")/.."
JAXPROF_WITH_PYTHON_DEPS=1 JAXPROF_BUILD_TARGETS=all scripts/setup.sh

echo "== C++ tests (release)"
ctest --test-dir build --output-on-failure -j2

echo "== C++ tests (debug, sanitizers)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DJAXPROF_SANITIZE=ON >/dev/null
cmake --build build-asan >&2
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j2

echo "== Python package (pip install .)"
# Incremental: scikit-build-core keeps its build tree in build-skbuild/ and ccache is shared.
python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .

echo "== Python tests"
JAXPROF_BIN="$PWD/build/jaxprof" python3 -m pytest -q tests/python
