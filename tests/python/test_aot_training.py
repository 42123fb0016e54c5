"""Training through ember.compile with AOT autograd (backends aot_eager and inductor): gradients
of MLP / CNN / LayerNorm / attention blocks equal eager's, and SGD/Adam loops track eager's."""

import copy

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember import _dynamo

BACKENDS = ["aot_eager", "inductor"]


@pytest.fixture(autouse=True)
def _reset():
    _dynamo.reset()
    yield
    _dynamo.reset()


class Attention(nn.Module):
    def __init__(self, d=16, heads=2):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        h = self.ln(x)
        qkv = self.qkv(h)
        q, k, v = (qkv[..., i * d : (i + 1) * d] for i in range(3))
        q = q.reshape(b, t, self.heads, -1).transpose(1, 2)
        k = k.reshape(b, t, self.heads, -1).transpose(1, 2)
        v = v.reshape(b, t, self.heads, -1).transpose(1, 2)
        a = (q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5).softmax(-1)
        y = (a @ v).transpose(1, 2).reshape(b, t, d)
        return x + self.out(F.gelu(y))


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 2 * 2, 32),
        nn.ReLU(),
        nn.Dropout(0.25),
        nn.Linear(32, 10),
    )


def mlp():
    return nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 10))


MODELS = {
    "mlp": (mlp, lambda: ember.randn(8, 12)),
    "cnn": (cnn, lambda: ember.randn(6, 1, 8, 8)),
    "attention": (Attention, lambda: ember.randn(2, 5, 16)),
}


def _loss(out, y):
    if out.dim() == 2:
        return F.cross_entropy(out, y)
    return out.square().mean()


def _train(model, x, y, opt, steps, seed):
    losses, grads = [], []
    for s in range(steps):
        ember.manual_seed(seed + s)
        opt.zero_grad()
        loss = _loss(model(x), y)
        loss.backward()
        grads.append([p.grad.clone() for p in opt.param_groups[0]["params"]])
        opt.step()
        losses.append(loss.item())
    return losses, grads


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("optim", ["sgd", "adam"])
def test_training_matches_eager(backend, name, optim):
    make, data = MODELS[name]
    ember.manual_seed(0)
    m_eager = make()
    m_comp = copy.deepcopy(m_eager)
    x = data()
    y = ember.randint(0, 10, (x.shape[0],))

    def opt_for(m):
        if optim == "sgd":
            return ember.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
        # (an eps well above float32 noise: the attention's key bias has a gradient that is
        # zero up to rounding, which Adam would otherwise scale up to full steps)
        return ember.optim.Adam(m.parameters(), lr=1e-2, eps=1e-3)

    compiled = ember.compile(m_comp, backend=backend)
    le, ge = _train(m_eager, x, y, opt_for(m_eager), 4, 10)
    lc, gc = _train(compiled, x, y, opt_for(m_comp), 4, 10)
    for a, b in zip(le, lc):
        assert abs(a - b) <= 1e-4 * max(1.0, abs(a))
    for step_e, step_c in zip(ge, gc):
        for a, b in zip(step_e, step_c):
            assert ember.allclose(a, b, atol=1e-4, rtol=1e-3), (a - b).abs().max()
    for (k, a), b in zip(m_eager.state_dict().items(), m_comp.state_dict().values()):
        assert ember.allclose(a.float(), b.float(), atol=1e-4, rtol=1e-3), k


def test_backward_graph_is_compiled_by_the_backend():
    seen = {}

    from ember._functorch import aot_module_simplified

    def backend(gm, example_inputs):
        def fw(g, ex):
            seen["fw"] = g
            return g

        def bw(g, ex):
            seen["bw"] = g
            return g

        return aot_module_simplified(gm, example_inputs, fw, bw)

    m = mlp()
    c = ember.compile(m, backend=backend)
    x = ember.randn(4, 12)
    c(x)
    c(x).sum().backward()
    assert "bw" in seen
    placeholders = [n.name for n in seen["bw"].graph.nodes if n.op == "placeholder"]
    assert placeholders[-1] == "tangents_1"
    assert all(p.grad is not None for p in m.parameters())


@pytest.mark.parametrize("backend", BACKENDS)
def test_eval_and_no_grad_keep_inference_path(backend):
    ember.manual_seed(0)
    m = cnn().eval()
    c = ember.compile(m, backend=backend)
    x = ember.randn(2, 1, 8, 8)
    with ember.no_grad():
        c(x)
        assert ember.allclose(c(x), m(x), atol=1e-5)


def test_float64_gradcheck_through_compiled_module():
    ember.manual_seed(0)
    m = Attention(8, 2).double()
    c = ember.compile(m, backend="aot_eager")
    x = ember.randn(1, 3, 8, dtype=ember.float64, requires_grad=True)
    c(x)
    assert ember.autograd.gradcheck(lambda t: c(t), (x,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_changing_batch_size(backend):
    # the second shape makes the capture symbolic; joint graphs are built per shape
    ember.manual_seed(0)
    m = mlp()
    ref = copy.deepcopy(m)
    c = ember.compile(m, backend=backend)
    for n in (8, 6, 5, 8, 6):
        x = ember.randn(n, 12)
        c(x).square().sum().backward()
        ref(x).square().sum().backward()
        for p, q in zip(m.parameters(), ref.parameters()):
            assert ember.allclose(p.grad, q.grad, atol=1e-4, rtol=1e-4)
