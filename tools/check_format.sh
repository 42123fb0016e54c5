#!/usr/bin/env bash
# The house style, checked: every tracked C++ file as clang-format writes it (.clang-format) and
# every Python file as ruff formats and lints it (pyproject.toml). Needs scripts/setup.sh's
# clang-format and .venv/bin/ruff; `pre-commit run --all-files` applies both.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z '*.cpp' '*.h' '*.inc' | xargs -0 clang-format --dry-run --Werror
.venv/bin/ruff format --check --quiet .
.venv/bin/ruff check --quiet .
echo "check_format: OK"
