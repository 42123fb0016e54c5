#!/usr/bin/env bash
# The README's run command: set up (Debian packages, .venv, build), then train the Fashion-MNIST
# CNN with ember. Extra arguments go to the example, e.g. `--epochs 5` or `--backend torch`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python examples/fashion_mnist.py "$@"
