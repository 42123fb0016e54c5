"""Training through ember.compile: gradients of compiled modules equal eager's (gradcheck in
float64 and side by side), and a compiled model trained with an optimizer tracks eager."""

import copy

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.fc1 = nn.Linear(3 * 4 * 4, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = self.ln(F.gelu(self.fc1(x.flatten(1))))
        return self.fc2(x)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_backward_matches_eager(backend):
    ember.manual_seed(0)
    model = Net()
    ref = copy.deepcopy(model)
    cm = ember.compile(model, backend=backend)
    for _ in range(3):
        x = ember.randn(4, 1, 8, 8, requires_grad=True)
        xr = x.detach().clone().requires_grad_(True)
        target = ember.randint(0, 5, (4,))
        loss = F.cross_entropy(cm(x), target)
        loss_ref = F.cross_entropy(ref(xr), target)
        close(loss, loss_ref)
        loss.backward()
        loss_ref.backward()
        close(x.grad, xr.grad)
        for p, q in zip(model.parameters(), ref.parameters()):
            close(p.grad, q.grad)
    assert len(cm._ember_cache.entries) == 1
    assert cm._ember_cache.entries[0].graph_module is not None


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_gradcheck_float64(backend):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    cm = ember.compile(model, backend=backend)

    def fn(x):
        return cm(x).sin().sum(dim=0)

    x = ember.randn(5, 3, dtype=ember.float64, requires_grad=True)
    cm(x)  # capture; gradcheck then replays the graph
    assert ember.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-5)
    assert ember.autograd.gradgradcheck(fn, (x,), eps=1e-6, atol=1e-4)


def test_compiled_function_gradcheck():
    def f(a, b):
        return (a @ b).softmax(dim=-1) * a.sum()

    cf = ember.compile(f, backend="eager")
    a = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    b = ember.randn(4, 2, dtype=ember.float64, requires_grad=True)
    cf(a, b)
    assert ember.autograd.gradcheck(cf, (a, b), eps=1e-6, atol=1e-5)


def test_optimizer_loop_matches_eager():
    ember.manual_seed(0)
    model = Net()
    ref = copy.deepcopy(model)
    cm = ember.compile(model, backend="eager")
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_ref = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(5):
        x = ember.randn(8, 1, 8, 8)
        y = ember.randint(0, 5, (8,))
        for m, o in ((cm, opt), (ref, opt_ref)):
            o.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            o.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q, 1e-4)
    for b, rb in zip(model.buffers(), ref.buffers()):
        close(b.float(), rb.float(), 1e-4)
    # one graph for training mode; evaluation re-captures once
    cm.eval()
    x = ember.randn(2, 1, 8, 8)
    close(cm(x), ref.eval()(x))
    assert len(cm._ember_cache.entries) == 2


def test_compiled_training_step_function():
    ember.manual_seed(0)
    model = nn.Linear(4, 1)
    ref = copy.deepcopy(model)

    def loss_fn(m, x, y):
        return ((m(x) - y) ** 2).mean()

    closs = ember.compile(loss_fn, backend="eager")
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    opt_ref = ember.optim.Adam(ref.parameters(), lr=0.01)
    for _ in range(4):
        x, y = ember.randn(6, 4), ember.randn(6, 1)
        opt.zero_grad()
        closs(model, x, y).backward()
        opt.step()
        opt_ref.zero_grad()
        loss_fn(ref, x, y).backward()
        opt_ref.step()
    close(model.weight, ref.weight)
    assert closs._ember_cache.entries[0].graph_module is not None
