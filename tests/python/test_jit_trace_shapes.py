"""ember.jit.trace graphs are general in their inputs' sizes where torch's traced graphs are:
size reads (``x.shape``, ``x.size(d)``) are graph values, so a traced (and a saved and loaded)
module runs on other batch sizes and sequence lengths; code that needs a concrete size (a
Python branch or loop on it) keeps the example's sizes."""

import numpy as np
import pytest

import ember
import ember.nn as nn


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class SeqModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)
        self.norm = nn.LayerNorm(3)

    def forward(self, x):
        b, s, _ = x.shape
        y = self.norm(self.proj(x)).relu()
        return y.reshape(b * s, -1).sum(0) + y.view(b, -1).mean()


class Branchy(nn.Module):
    def forward(self, x):
        if x.shape[0] > 1:
            return x[: x.shape[0] // 2] * 2
        return x


SHAPES = [(3, 7, 4), (1, 2, 4), (2, 5, 4), (8, 1, 4)]


def test_traced_module_runs_other_batch_sizes_and_lengths():
    m = SeqModel()
    t = ember.jit.trace(m, ember.randn(2, 5, 4))
    for shape in SHAPES:
        x = ember.randn(*shape)
        close(t(x), m(x))


def test_saved_and_loaded_trace_runs_other_shapes(tmp_path):
    m = SeqModel()
    t = ember.jit.trace(m, ember.randn(2, 5, 4))
    path = tmp_path / "m.pt"
    ember.jit.save(t, str(path))
    loaded = ember.jit.load(str(path))
    for shape in SHAPES:
        x = ember.randn(*shape)
        close(loaded(x), m(x))


def test_traced_function_is_shape_general():
    def f(a, b):
        return (a @ b).softmax(-1) * a.size(0)

    t = ember.jit.trace(f, (ember.randn(2, 3), ember.randn(3, 4)))
    for n, k, m in [(5, 3, 4), (1, 6, 2)]:
        a, b = ember.randn(n, k), ember.randn(k, m)
        close(t(a, b), f(a, b))


def test_branch_on_a_size_keeps_the_branch_and_traces_the_size():
    # torch's trace keeps the branch the example took but records the size arithmetic:
    # x[: n // 2] * 2 for every n, also n = 1 where the module itself takes the other branch
    m = Branchy()
    t = ember.jit.trace(m, ember.randn(4, 3))
    for n in (4, 6):
        x = ember.randn(n, 3)
        close(t(x), m(x))
    assert tuple(t(ember.randn(1, 3)).shape) == (0, 3)


def test_matches_torch_on_other_shapes():
    torch = pytest.importorskip("torch")
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def run(lib):
        lin = lib.nn.Linear(4, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w))
            lin.bias.zero_()
        t = lib.jit.trace(lin, lib.ones(2, 5, 4))
        x = lib.tensor(np.arange(3 * 7 * 4, dtype=np.float32).reshape(3, 7, 4) / 50)
        return t(x).detach().numpy()

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-5, atol=1e-5)


class Checked(nn.Module):
    """Checks its feature size in Python, as the RNN layers do."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)

    def forward(self, x):
        if x.size(-1) != 4:
            raise ValueError("expected 4 features")
        return self.proj(x).softmax(-1) * x.size(0)


def test_python_check_of_a_feature_size_keeps_the_batch_general():
    m = Checked()
    t = ember.jit.trace(m, ember.randn(2, 3, 4))
    for shape in [(5, 3, 4), (1, 6, 4)]:
        x = ember.randn(*shape)
        close(t(x), m(x))
    with pytest.raises(RuntimeError):
        t(ember.randn(2, 3, 5))  # the checked size stays the example's
