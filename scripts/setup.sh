#!/usr/bin/env bash
# Installs what jaxprof needs to build and test (Debian packages, PyPI packages) when missing, then
# builds the release binary into build/. Safe to run again: it only installs what is absent.
# JAXPROF_BUILD_TARGETS picks what is built (default: the jaxprof command alone; test.sh asks for
# `all`, which adds the C++ tests), on every core.
set -euo pipefail
cd "$(dirname "$0")/.."

debian_packages=(cmake ninja-build g++ pkg-config ccache libre2-dev libfmt-dev libcli11-dev
                 libgtest-dev libgmock-dev zlib1g-dev libdeflate-dev liblzma-dev libzstd-dev libsnappy-dev libzip-dev
                 libsimdjson-dev libsqlite3-dev libprotobuf-dev protobuf-compiler libbenchmark-dev time
                 clang libclang-rt-14-dev)  # clang: the second compiler, the sanitizers and libFuzzer
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "${JAXPROF_WITH_PYTHON_DEPS:-0}" = 1 ]; then
  # The HTML report's tests drive a real headless Chromium (tests/python/cdp_browser.py).
  if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
    echo "setup: installing Debian package: chromium (browser tests)" >&2
    sudo_cmd=()
    [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq chromium >/dev/null
  fi
  # Test-only Python packages: pytest runs the suite, protobuf is the independent reference
  # decoder, jax captures fresh profiles; nanobind and scikit-build-core build the Python package
  # (installed beforehand so `pip install --no-build-isolation .` needs no network), pandas and
  # pyarrow are its optional DataFrame outputs; duckdb runs Profile.sql and `jaxprof sql`; xprof is
  # the reference for the memory peaks.
  python3 - <<'PY' || python3 -m pip install -q --disable-pip-version-check pytest protobuf jax numpy \
      "nanobind>=2.2" "scikit-build-core>=0.10" pandas pyarrow duckdb xprof
import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in ("pytest", "google.protobuf", "jax", "numpy",
    "nanobind", "scikit_build_core", "pandas", "pyarrow", "duckdb", "xprof")) else 1)
PY
  # jaxprof.distributed: Dask, fsspec and s3fs; moto's S3-compatible server for its tests.
  python3 - <<'PY' || python3 -m pip install -q --disable-pip-version-check "dask[distributed]" \
      fsspec s3fs "moto[server]"
import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in ("distributed", "fsspec", "s3fs", "moto",
    "flask_cors")) else 1)
PY
  # The notebook docs/notebooks/nsys_jax_analysis.ipynb: tests/python/compat/test_nsys_jax_notebook.py
  # runs it with nbclient on an IPython kernel, and it plots with matplotlib; nbclient also runs
  # tests/python/api/test_notebook_html.py, which skips without it.
  python3 - <<'PY' || python3 -m pip install -q --disable-pip-version-check matplotlib nbclient \
      nbformat ipykernel
import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in ("matplotlib", "nbclient", "nbformat",
    "ipykernel")) else 1)
PY
  # XProf, a reference the roofline tests and tests/python/ops/test_xprof_peer.py (op statistics on
  # the device clock) compare with; they skip without it.
  python3 -c 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("xprof") else 1)' \
    || python3 -m pip install -q --disable-pip-version-check xprof
fi

build_dir=${JAXPROF_BUILD_DIR:-build}
read -r -a targets <<<"${JAXPROF_BUILD_TARGETS:-jaxprof}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${JAXPROF_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" --parallel "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >&2
