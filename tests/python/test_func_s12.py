"""ember.func, session 12: references to ember's functions and methods taken before a transform
started (`from ember import relu`, F.linear bound at import, ember.tanh in a default argument,
unbound Tensor methods, special functions that are bare bindings) reach vmap's batching rules
through the foreign-tensor check of the C++ guards (Note [Foreign tensors]). Checked against
Python loops and torch.func."""

import numpy as np
import pytest

import ember
import ember.func as func
import ember.nn.functional as F
from ember import relu, sigmoid, tanh
from ember.special import i1

# references taken at import, before any transform
_linear = F.linear
_Tensor_sum = ember.Tensor.sum
_Tensor_exp2 = ember.Tensor.exp2
_Tensor_size = ember.Tensor.size
_Tensor_mm = ember.Tensor.mm
_stack = ember.stack
_vector_norm = ember.linalg.vector_norm
_glu, _normalize = F.glu, F.normalize  # Python functions calling ember._C._nn kernels

RNG = np.random.default_rng(12)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(a, b, tol=1e-4):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def loop(fn, x, *rest):
    return ember.stack([fn(x[i], *rest) for i in range(x.shape[0])])


CAPTURED = {
    "from_ember_import_relu": lambda x, w: relu(x @ w),
    "F_linear_bound": lambda x, w: _linear(x, w.t()),
    "tanh_default_arg": lambda x, w, t=ember.tanh: t(x @ w),
    "tanh_imported": lambda x, w: tanh(x @ w) * sigmoid(x @ w),
    "Tensor_sum_unbound": lambda x, w: _Tensor_sum(x @ w, 0),
    "Tensor_exp2_bare_method": lambda x, w: _Tensor_exp2(x @ w),
    "Tensor_size_metadata": lambda x, w: (x @ w) * _Tensor_size(x, 0),
    "Tensor_mm_unbound": lambda x, w: _Tensor_mm(x.unsqueeze(0), w),
    "special_i1_bare_binding": lambda x, w: i1(x @ w),
    "stack_captured": lambda x, w: _stack([x @ w, relu(x @ w)]),
    "vector_norm_captured": lambda x, w: _vector_norm(x @ w, dim=-1),
    "F_glu_bound": lambda x, w: _glu(x @ w),
    "F_normalize_bound": lambda x, w: _normalize(x @ w, dim=0),
}


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_vmap_of_references_taken_before(name):
    fn = CAPTURED[name]
    x, w = ember.tensor(rand(6, 3)), ember.tensor(rand(3, 4))
    got = ember.vmap(fn, in_dims=(0, None))(x, w)
    close(got, loop(fn, x, w))


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_grad_of_references_taken_before(name):
    fn = CAPTURED[name]
    x, w = ember.tensor(rand(3)), ember.tensor(rand(3, 4))
    got = func.grad(lambda w: fn(x, w).float().sum())(w)
    w2 = w.detach().requires_grad_()
    fn(x, w2).float().sum().backward()
    close(got, w2.grad)


def test_a_captured_reference_inside_nested_vmap():
    x = ember.tensor(rand(2, 3, 4))
    got = ember.vmap(ember.vmap(lambda r: relu(r) + _Tensor_exp2(r)))(x)
    close(got, relu(x) + x.exp2())


def test_captured_reference_outside_vmap_is_unchanged():
    x = ember.tensor(rand(3, 4))
    close(relu(x), np.maximum(x.numpy(), 0))
    close(_Tensor_exp2(x), np.exp2(x.numpy()))
    assert type(_Tensor_exp2(x)) is ember.Tensor
    with pytest.raises(TypeError):
        relu("not a tensor")


def _model(m, fn_linear, fn_relu, fn_tanh):
    """A 2-layer MLP whose forward uses references bound before the transform."""

    def forward(params, x, act=fn_tanh):
        h = fn_relu(fn_linear(x, params["w1"], params["b1"]))
        return act(fn_linear(h, params["w2"], params["b2"]))

    return forward


def _per_sample_grads(m, forward, params, xs, ys):
    def loss(p, x, y):
        out = forward(p, x.unsqueeze(0))
        return ((out - y.unsqueeze(0)) ** 2).mean()

    return m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(params, xs, ys)


def test_per_sample_grads_with_captured_references_match_torch():
    torch = pytest.importorskip("torch")
    p_np = {"w1": rand(8, 5), "b1": rand(8), "w2": rand(3, 8), "b2": rand(3)}
    xs, ys = rand(7, 5), rand(7, 3)
    e_forward = _model(ember, F.linear, relu, ember.tanh)
    got = _per_sample_grads(
        ember,
        e_forward,
        {k: ember.tensor(v) for k, v in p_np.items()},
        ember.tensor(xs),
        ember.tensor(ys),
    )
    t_forward = _model(torch, torch.nn.functional.linear, torch.relu, torch.tanh)
    want = _per_sample_grads(
        torch,
        t_forward,
        {k: torch.tensor(v) for k, v in p_np.items()},
        torch.tensor(xs),
        torch.tensor(ys),
    )
    for k in p_np:
        assert tuple(got[k].shape) == tuple(want[k].shape)
        close(got[k], want[k].numpy())


def test_jacrev_with_captured_references_matches_torch():
    torch = pytest.importorskip("torch")
    x = rand(4)
    got = func.jacrev(lambda v: _Tensor_exp2(relu(v)) * tanh(v))(ember.tensor(x))
    want = torch.func.jacrev(lambda v: torch.exp2(torch.relu(v)) * torch.tanh(v))(torch.tensor(x))
    close(got, want.numpy())


def test_per_sample_grads_of_a_module_calling_bound_functions():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = ember.nn.Linear(4, 3)

        def forward(self, x, act=ember.tanh):
            return act(_linear(relu(x), self.fc.weight, self.fc.bias))

    net = Net()
    params = {k: v.detach() for k, v in net.named_parameters()}
    xs, ys = ember.tensor(rand(5, 4)), ember.tensor(rand(5, 3))

    def loss(p, x, y):
        return ((func.functional_call(net, p, (x,)) - y) ** 2).sum()

    got = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
    for i in range(5):
        net.zero_grad()
        ((net(xs[i]) - ys[i]) ** 2).sum().backward()
        close(got["fc.weight"][i], net.fc.weight.grad)
        close(got["fc.bias"][i], net.fc.bias.grad)


# -- forward mode around vmap: vmap's rules hand their calls to the forward level outside it


def test_jvp_of_vmap_carries_tangents():
    x = ember.tensor(rand(4, 3).astype(np.float64))
    v = ember.tensor(rand(4, 3).astype(np.float64))
    out, tan = func.jvp(ember.vmap(lambda r: r.cos() * r.sum()), (x,), (v,))
    xs, vs = x.numpy(), v.numpy()
    close(out, np.cos(xs) * xs.sum(1, keepdims=True))
    want = -np.sin(xs) * vs * xs.sum(1, keepdims=True) + np.cos(xs) * vs.sum(1, keepdims=True)
    close(tan, want, 1e-10)


def test_jacfwd_of_vmap_is_block_diagonal():
    x = rand(3, 2).astype(np.float64)
    J = func.jacfwd(ember.vmap(lambda r: r.sin() * r))(ember.tensor(x)).numpy()
    want = np.zeros((3, 2, 3, 2))
    for i in range(3):
        for j in range(2):
            want[i, j, i, j] = np.cos(x[i, j]) * x[i, j] + np.sin(x[i, j])
    np.testing.assert_allclose(J, want, rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    got = torch.func.jacfwd(torch.vmap(lambda r: r.sin() * r))(torch.tensor(x)).numpy()
    np.testing.assert_allclose(J, got, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nest", ["jacfwd_vmap_grad", "vmap_jacfwd_grad"])
def test_forward_over_reverse_inside_vmap_never_gives_a_wrong_value(nest):
    # torch computes these; ember does not yet, and must say so rather than return zeros
    def f(r):
        return (r.sin() * r).sum()

    x = rand(4, 3).astype(np.float64)
    h = np.zeros((4, 3, 3))
    for i in range(4):
        h[i] = np.diag(2 * np.cos(x[i]) - x[i] * np.sin(x[i]))

    def build(T):
        if nest == "jacfwd_vmap_grad":
            return T.func.jacfwd(T.vmap(T.func.grad(f)))
        return T.vmap(T.func.jacfwd(T.func.grad(f)))

    try:
        got = build(ember)(ember.tensor(x)).numpy()
    except NotImplementedError as e:
        assert "dual tensor inside vmap" in str(e)
        return
    if nest == "jacfwd_vmap_grad":
        got = np.stack([got[i, :, i, :] for i in range(4)])
    np.testing.assert_allclose(got, h, rtol=1e-10, atol=1e-10)
