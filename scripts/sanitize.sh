#!/usr/bin/env bash
# Every test under AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer: builds ember
# with -DEMBER_SANITIZE=ON into build/asan, runs the C++ suite (leak checking on), then the
# Python suite against that build with the sanitizer runtime preloaded into the interpreter.
# Needs scripts/setup.sh to have run (it is the environment: packages, .venv, torch).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"
BUILD=build/asan
PY="$PWD/.venv/bin/python"

echo "== building ember with ASan + UBSan ($BUILD)"
# -O1 -g1, as the sanitizers' documentation suggests: line numbers in reports, a fast build.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1" \
  -DEMBER_SANITIZE=ON \
  -DEMBER_BUILD_TESTS=ON -DEMBER_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PY" >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
# The importable package: the Python sources beside the sanitized _C and libember.
rm -rf "$BUILD/site" && mkdir -p "$BUILD/site"
cp -r python/ember "$BUILD/site/ember"
cp "$BUILD"/_C*.so "$BUILD"/libember.so "$BUILD/site/ember/"
# The type stubs come from the regular build (a sanitized _C cannot be imported to make them).
cp build/wheel/_C.pyi "$BUILD/site/ember/"

export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# An impossible allocation returns null, as glibc's does, so ember raises its out-of-memory error
# (tested) instead of ASan aborting.
ASAN_COMMON="abort_on_error=1:allocator_may_return_null=1"
echo "== C++ tests under ASan + UBSan + LSan"
ASAN_OPTIONS="detect_leaks=1:$ASAN_COMMON" ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"

echo "== Python tests under ASan + UBSan"
# CPython and torch keep interned objects alive until exit by design, so leak checking would
# report the interpreter, not ember: it stays on for the C++ suite only. --capture=sys leaves
# file descriptor 2 alone, so a sanitizer's report (printed there just before it ends the
# process) reaches the log instead of pytest's capture buffer. Allocations above 6 GiB fail (the
# fuzzer's workers cap their address space to that outside the sanitizers). Workers as in
# scripts/test.sh.
LD_PRELOAD="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)" \
  ASAN_OPTIONS="detect_leaks=0:max_allocation_size_mb=6144:$ASAN_COMMON" PYTHONPATH="$PWD/$BUILD/site" \
  "$PY" -m pytest -q -p no:cacheprovider --capture=sys -n "$(nproc)" --dist loadfile tests/python "$@"
