#!/usr/bin/env bash
# The README's test command: set up (scripts/setup.sh), then run the C++ and Python suites.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== house-style checks (layers, file sizes; formatting after the set-up installs the tools)"
python3 tools/check_layers.py
python3 tools/check_file_size.py --quiet

bash scripts/setup.sh
bash tools/check_format.sh

echo "== C++ tests (GoogleTest via CTest)"
ctest --test-dir build/wheel --output-on-failure -j "$(nproc)"

echo "== Python tests (pytest)"
# One worker per core (pytest-xdist), each test file whole in one worker: most tests are
# single-threaded Python, so the suite takes about half the time on two cores. Files are the unit
# because some share a module-scope fixture (a process group, a set of program runs).
.venv/bin/python -m pytest -q -p no:cacheprovider -n "$(nproc)" --dist loadfile tests/python "$@"
