"""Exports one exportdb example file (argv[1]: a path) and prints its eager and exported results,
so that the test can compare the two and torch's with ember's (under python -m ember.run)."""

import runpy
import sys

import torch

torch.manual_seed(0)
case = runpy.run_path(sys.argv[1])
args = case["example_args"]
model = case["model"]
ep = torch.export.export(model, args)
eager = model(*args)
exported = ep.module()(*args)
print("module", type(torch.ones(1)).__module__.split(".")[0])
print("match", bool(torch.allclose(eager, exported)))
print("values", [round(v, 4) for v in exported.flatten().tolist()])
