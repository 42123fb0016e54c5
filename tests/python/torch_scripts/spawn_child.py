"""Starts a separate Python process that imports torch, as launchers and tools do."""

import subprocess
import sys

import torch

out = subprocess.run(
    [sys.executable, "-c", "import torch, torch.nn; print(torch.__name__, torch.nn.__name__)"],
    capture_output=True,
    text=True,
    check=True,
)
print("parent", torch.__name__)
print("child", out.stdout.strip())
