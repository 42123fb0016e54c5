"""Non-reentrant checkpoint on saved-tensor hooks: the forward's own graph with its saved
tensors recomputed once per backward (recompute counts, early stop), gradients equal to the plain
call, dropout masks replayed, nesting, double backward, and what torch's checkpoint shares."""

import pytest

import ember
from ember.utils.checkpoint import CheckpointError, checkpoint, set_checkpoint_early_stop


def _mlp(p=0.0, seed=0):
    ember.manual_seed(seed)
    nn = ember.nn
    return nn.Sequential(
        nn.Linear(8, 16), nn.Tanh(), nn.Dropout(p), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4)
    )


class _Counted:
    def __init__(self, fn):
        self.fn = fn
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def test_gradients_equal_plain_and_one_recomputation_per_backward():
    model = _mlp()
    x = ember.randn(5, 8, requires_grad=True)
    f = _Counted(model)
    out = checkpoint(f, x, use_reentrant=False)
    assert f.calls == 1
    assert out.grad_fn.name() == "AddmmBackward0" or out.grad_fn is not None  # the region's node
    out.square().sum().backward()
    assert f.calls == 2  # recomputed once, on the first unpack
    got = [x.grad.clone()] + [p.grad.clone() for p in model.parameters()]
    x.grad = None
    model.zero_grad()
    model(x).square().sum().backward()
    ref = [x.grad] + [p.grad for p in model.parameters()]
    for a, b in zip(got, ref):
        assert ember.allclose(a, b, atol=1e-6)


def test_dropout_masks_are_replayed():
    model = _mlp(p=0.5, seed=1)
    x = ember.randn(64, 8, requires_grad=True)
    ember.manual_seed(7)
    out = checkpoint(model, x, use_reentrant=False)
    out.sum().backward()
    got = [x.grad.clone()] + [p.grad.clone() for p in model.parameters()]
    x.grad = None
    model.zero_grad()
    ember.manual_seed(7)
    ref_out = model(x)
    ref_out.sum().backward()
    assert ember.equal(out, ref_out)
    for a, b in zip(got, [x.grad] + [p.grad for p in model.parameters()]):
        assert ember.allclose(a, b, atol=1e-6)


def test_retain_graph_recomputes_for_each_backward():
    w = ember.randn(4, requires_grad=True)
    f = _Counted(lambda t: (t * w).sin())
    x = ember.randn(4, requires_grad=True)
    out = checkpoint(f, x, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    assert f.calls == 3
    assert ember.allclose(x.grad, 2 * (x * w).cos() * w)


def test_early_stop_skips_the_rest_of_the_region():
    seen = []

    def f(t):
        a = t.exp()  # saves its output
        seen.append("after exp")
        b = a.sum() * 2  # saves nothing more
        seen.append("after sum")
        return b

    x = ember.randn(3, requires_grad=True)
    checkpoint(f, x, use_reentrant=False).backward()
    assert seen == ["after exp", "after sum"]  # the recomputation stopped inside exp's save
    assert ember.allclose(x.grad, 2 * x.exp())
    seen.clear()
    x.grad = None
    with set_checkpoint_early_stop(False):
        out = checkpoint(f, x, use_reentrant=False)
    out.backward()
    assert seen == ["after exp", "after sum"] * 2


def test_nested_checkpoints_match_plain():
    w1 = ember.randn(6, 6, dtype=ember.float64, requires_grad=True)
    w2 = ember.randn(6, 6, dtype=ember.float64, requires_grad=True)
    inner = _Counted(lambda h: (h @ w2).tanh())

    def outer(t):
        h = (t @ w1).sin()
        return checkpoint(inner, h, use_reentrant=False).exp()

    x = ember.randn(3, 6, dtype=ember.float64, requires_grad=True)
    got = ember.autograd.grad(checkpoint(outer, x, use_reentrant=False).sum(), [x, w1, w2])
    ref = ember.autograd.grad(outer(x).sum(), [x, w1, w2])
    for a, b in zip(got, ref):
        assert ember.allclose(a, b)


def test_double_backward_through_a_checkpoint():
    x = ember.randn(4, dtype=ember.float64, requires_grad=True)
    out = checkpoint(lambda t: t.pow(3) * t.sin(), x, use_reentrant=False)
    (g,) = ember.autograd.grad(out.sum(), x, create_graph=True)
    (g2,) = ember.autograd.grad(g.sum(), x)
    ref_g = 3 * x * x * x.sin() + x.pow(3) * x.cos()
    ref_g2 = 6 * x * x.sin() + 6 * x * x * x.cos() - x.pow(3) * x.sin()
    assert ember.allclose(g, ref_g) and ember.allclose(g2, ref_g2)


def test_recomputation_saving_more_or_other_tensors_raises():
    calls = []

    def f(t):
        calls.append(1)
        out = t.sin()
        if len(calls) > 1:
            out = out.sin()  # saves one more tensor than the forward did
        return out

    x = ember.randn(3, requires_grad=True)
    with set_checkpoint_early_stop(False):
        out = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="trying to save more tensors during recomputation"):
        out.sum().backward()


def test_inputs_only_used_through_closures_and_parameters():
    model = _mlp()
    x = ember.randn(3, 8)  # no input requires grad: the parameters still get gradients
    out = checkpoint(model, x, use_reentrant=False)
    assert out.requires_grad
    out.sum().backward()
    ref = _mlp()
    ref(x).sum().backward()
    for a, b in zip(model.parameters(), ref.parameters()):
        assert ember.allclose(a.grad, b.grad, atol=1e-6)


def test_graph_matches_torch_shape():
    torch = pytest.importorskip("torch")
    names = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 3)
        x = lib.randn(2, 3, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: lin(t).exp(), x, use_reentrant=False)
        names.append(out.grad_fn.name())
    assert names[0] == names[1] == "ExpBackward0"
