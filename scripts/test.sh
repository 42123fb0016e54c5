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
# Run from tests/ so the installed ember (not the source tree) is imported.
.venv/bin/python -m pytest -q -p no:cacheprovider tests/python "$@"
