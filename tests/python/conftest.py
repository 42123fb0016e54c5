"""Shared pytest set-up for ember's Python suite.

EMBER_TEST_AGAINST=torch runs the suite with real PyTorch standing in for ember: it checks the
tests themselves (a test that fails under torch encodes a wrong expectation).
"""

import os
import sys

import numpy as np
import pytest

if os.environ.get("EMBER_TEST_AGAINST") == "torch":
    import importlib

    import torch

    sys.modules["ember"] = torch
    for _sub in ("autograd", "nn", "nn.functional", "testing", "linalg", "utils", "utils.data", "optim"):
        sys.modules["ember." + _sub] = importlib.import_module("torch." + _sub)

try:
    import torch as _torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:  # the suite passes without torch; only the comparisons skip
    HAVE_TORCH = False


@pytest.fixture
def torch():
    """Real PyTorch for reference comparisons; skips the test where it is not installed."""
    if not HAVE_TORCH:
        pytest.skip("torch not installed: reference comparison skipped")
    import torch as t

    return t


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    yield
