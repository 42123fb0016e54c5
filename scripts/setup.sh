#!/usr/bin/env bash
# Installs what ember needs on a fresh Debian machine and builds it into .venv (idempotent).
# Used by both README commands; safe to re-run: apt and pip skip what is present, the build is
# incremental (ccache + a persistent build directory).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for pkg in g++ ccache clang-format libgtest-dev libopenblas-dev zlib1g-dev libgloo-dev libdnnl-dev dataset-fashion-mnist; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  echo "== installing Debian packages: ${need_apt[*]}"
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  python3 -m venv .venv
fi
PY=.venv/bin/python
# torch 2.13.0 is the reference in tests and the peer in benchmarks (a local CPU build here);
# tabulate prints the table of its FlopCounterMode, which a test compares with ember's.
$PY -m pip install -q --disable-pip-version-check \
  "numpy" "pytest" "pytest-xdist" "hypothesis" "nanobind>=2.0" "scikit-build-core>=0.10" "cmake>=3.20" "ninja" \
  "matplotlib" "torch==2.13.0" "ruff==0.17.6" "onnx" "onnxruntime" "onnxscript" "safetensors" "pydot" "tabulate"

echo "== building ember (C++ library, tests and Python extension)"
export CCACHE_BASEDIR="$PWD" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
$PY -m pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=cmake.define.EMBER_BUILD_TESTS=ON \
  --config-settings=build-dir=build/wheel .
