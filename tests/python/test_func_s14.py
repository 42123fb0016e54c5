"""ember.func, session 14: third-order derivatives of the normalizations (against finite
differences: torch 2.13's reverse-mode third order of layer_norm/batch_norm is itself wrong,
pytorch/pytorch#175754 and #186256, so torch is the reference only where it is right),
autograd.grad and backward() inside transforms as torch raises them, functions that read
values bound before vmap, and compositions from torch.func's tutorials against torch."""

import numpy as np
import pytest

import ember
import ember.func as func
import ember.nn.functional as F

# references taken at import, before any transform (their bodies read values)
_frexp, _matrix_exp, _lu = ember.frexp, ember.linalg.matrix_exp, ember.linalg.lu
_lu_unpack, _lu_solve, _lu_factor = ember.lu_unpack, ember.linalg.lu_solve, ember.linalg.lu_factor
_legacy_lu = ember.lu

RNG = np.random.default_rng(14)
X = RNG.standard_normal((2, 3))
V = RNG.standard_normal((2, 3))
W3 = np.array([0.5, -1.0, 2.0])
XS = RNG.standard_normal((3, 4))
VS = RNG.standard_normal((3, 4))


C = RNG.standard_normal((2, 3))


def _norms(T):
    """Scalar functions <norm(x), C> (a scalar keeps jacrev^3 to 1 + 6 + 36 backward passes)."""
    G = T.nn.functional
    w, c = T.tensor(W3), T.tensor(C)
    norms = {
        "layer_norm": lambda x: G.layer_norm(x, (3,)),
        "layer_norm_affine": lambda x: G.layer_norm(x, (3,), w, w * 0.5),
        "layer_norm_2d": lambda x: G.layer_norm(x, (2, 3), eps=1e-3),
        "batch_norm": lambda x: G.batch_norm(x, None, None, w, w, training=True),
        "batch_norm_eval": lambda x: G.batch_norm(x, w.abs(), w.abs() + 1, w, w),
        "group_norm": lambda x: G.group_norm(x.reshape(1, 6, 1), 3).reshape(2, 3),
        "instance_norm": lambda x: G.instance_norm(x.reshape(1, 2, 3)).reshape(2, 3),
    }
    return {k: (lambda x, f=f: (f(x) * c).sum()) for k, f in norms.items()}


def _third_order_fd(fn, h=1e-5):
    """The third derivative of fn at X by central differences of its (exact) Hessian."""
    hess = func.hessian(fn)
    cols = []
    for idx in np.ndindex(*X.shape):
        e = np.zeros_like(X)
        e[idx] = h
        hi = hess(ember.tensor(X + e)).numpy()
        lo = hess(ember.tensor(X - e)).numpy()
        cols.append((hi - lo) / (2 * h))
    return np.stack(cols, -1).reshape(cols[0].shape + X.shape)


# jacfwd^3 (seconds each: every op of the inner levels pays small backward passes) for the two
# the issue named
_ORDERS = [(n, o) for n in _norms(ember) for o in ("jacrev3", "jacfwd_hessian")] + [
    ("layer_norm", "jacfwd3"),
    ("batch_norm", "jacfwd3"),
]


@pytest.mark.parametrize("name,order", _ORDERS)
def test_third_order_of_normalizations_against_finite_differences(name, order):
    fn = _norms(ember)[name]
    t = {
        "jacrev3": func.jacrev(func.jacrev(func.jacrev(fn))),
        "jacfwd_hessian": func.jacfwd(func.hessian(fn)),
        "jacfwd3": func.jacfwd(func.jacfwd(func.jacfwd(fn))),
    }[order](ember.tensor(X))
    want = _third_order_fd(fn)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


def test_third_order_of_a_vector_valued_layer_norm_against_finite_differences():
    fn = lambda x: F.layer_norm(x, (3,), ember.tensor(W3))  # noqa: E731
    got = func.jacfwd(func.jacrev(func.jacrev(fn)))(ember.tensor(X)).numpy()
    hess = func.jacrev(func.jacrev(fn))
    h = 1e-5
    for idx in np.ndindex(*X.shape):
        e = np.zeros_like(X)
        e[idx] = h
        fd = (hess(ember.tensor(X + e)).numpy() - hess(ember.tensor(X - e)).numpy()) / (2 * h)
        np.testing.assert_allclose(got[..., idx[0], idx[1]], fd, rtol=1e-5, atol=1e-6)


def test_third_order_by_double_backward_against_a_composition_of_primitives():
    # repeated autograd.grad(create_graph=True), the way pytorch/pytorch#175754 was found
    def nth(fn, n):
        x = ember.tensor(X, requires_grad=True)
        v = ember.tensor(V)
        y = (fn(x) * ember.tensor(W3)).sum()
        for _ in range(n):
            (g,) = ember.autograd.grad(y, x, create_graph=True)
            y = (g * v).sum()
        return y.item()

    def manual(x):
        c = x - x.mean(-1, keepdim=True)
        return c * ((c * c).mean(-1, keepdim=True) + 1e-5).rsqrt()

    for n in range(5):
        np.testing.assert_allclose(
            nth(lambda x: F.layer_norm(x, (3,)), n), nth(manual, n), rtol=1e-8, atol=1e-10
        )


@pytest.mark.parametrize("name", list(_norms(ember)))
def test_third_order_of_normalizations_against_torch_forward_over_reverse(name):
    # torch's jacfwd(hessian) is right (its jacrev^3 and jacfwd^3 are not, in 2.13)
    torch = pytest.importorskip("torch")
    want = torch.func.jacfwd(torch.func.hessian(_norms(torch)[name]))(torch.tensor(X))
    got = func.jacrev(func.jacrev(func.jacrev(_norms(ember)[name])))(ember.tensor(X))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-8, atol=1e-8)


# -- autograd.grad and backward() inside transforms


def _grad_cases(T):
    vmap, grad = T.func.vmap, T.func.grad
    w = T.ones(4, dtype=T.float64, requires_grad=True)
    y = T.tensor(X[0].tolist() + [0.5], dtype=T.float64, requires_grad=True)
    out = y.sin()
    z = T.ones(2, dtype=T.float64, requires_grad=True)
    xs, vs = T.tensor(XS), T.tensor(VS)

    def bw(a):
        (w * w).sum().backward()
        return a

    return {
        "batched output": lambda: vmap(lambda a: T.autograd.grad((a * a).sum(), a)[0])(
            xs.clone().requires_grad_()
        ),
        "unbatched weight": lambda: vmap(lambda a: T.autograd.grad((a * w).sum(), w)[0])(xs),
        "batched input": lambda: vmap(lambda a: T.autograd.grad((w * w).sum(), a)[0])(xs),
        "batched grad_outputs": lambda: vmap(
            lambda v: T.autograd.grad(out, y, v, retain_graph=True)[0]
        )(vs),
        "batched grad_outputs, create_graph": lambda: vmap(
            lambda v: T.autograd.grad(out, y, v, retain_graph=True, create_graph=True)[0]
        )(vs),
        "batched grad_outputs, unused input": lambda: vmap(
            lambda v: T.autograd.grad(out, [y, z], v, retain_graph=True)[0]
        )(vs),
        "inside vmap(grad)": lambda: vmap(
            grad(lambda a: T.autograd.grad(a.sin().sum(), a, create_graph=True)[0].pow(2).sum())
        )(xs),
        "inside grad(vmap)": lambda: grad(
            lambda a: vmap(lambda b: T.autograd.grad(b.sin().sum(), b)[0])(a).sum()
        )(xs),
        "backward inside vmap": lambda: vmap(bw)(xs),
        "backward inside grad": lambda: grad(lambda a: bw(a).sum())(xs),
        "backward inside jvp": lambda: T.func.jvp(bw, (xs,), (vs,))[1],
        "backward inside vjp": lambda: T.func.vjp(bw, xs)[0],
    }


@pytest.mark.parametrize("name", list(_grad_cases(ember)))
def test_autograd_inside_transforms_as_torch(name):
    torch = pytest.importorskip("torch")

    def run(T):
        try:
            return _grad_cases(T)[name]().detach().numpy()
        except RuntimeError as e:
            return str(e)

    want, got = run(torch), run(ember)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_autograd_grad_with_batched_grad_outputs_against_numpy():
    y = ember.tensor(X[0], requires_grad=True)
    out = y.sin()
    vs = RNG.standard_normal((4, 3))
    got = func.vmap(lambda v: ember.autograd.grad(out, y, v, retain_graph=True)[0])(
        ember.tensor(vs)
    )
    np.testing.assert_allclose(got.numpy(), vs * np.cos(X[0]), rtol=1e-12)
    z = ember.ones(2, dtype=ember.float64, requires_grad=True)
    unused = func.vmap(
        lambda v: ember.autograd.grad(out, [y, z], v, retain_graph=True, allow_unused=True)[0]
    )(ember.tensor(vs))
    np.testing.assert_allclose(unused.numpy(), vs * np.cos(X[0]), rtol=1e-12)


def test_backward_and_autograd_grad_outside_transforms_still_work():
    w = ember.ones(3, dtype=ember.float64, requires_grad=True)
    with ember.autograd.forward_ad.dual_level():  # not a transform (torch allows it too)
        (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.ones(3))
    # transforms that ended, normally or by an error, leave nothing behind
    func.vmap(lambda a: a * 2)(ember.tensor(X))
    with pytest.raises(RuntimeError):
        func.vmap(func.grad(lambda a: a.sum().item()))(ember.tensor(X))
    with pytest.raises(RuntimeError):
        func.jvp(lambda a: a.backward(), (ember.tensor(X),), (ember.tensor(X),))
    from ember.autograd import _engine

    assert _engine._transform_count == 0  # backward() then skips the per-thread test
    (w * w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 5 * np.ones(3))


# -- functions bound before vmap whose bodies read values

MATS = RNG.standard_normal((3, 4, 4))


def _captured(T):
    if T is ember:
        frexp, mexp, lu, unpack, solve, factor, legacy = (
            _frexp,
            _matrix_exp,
            _lu,
            _lu_unpack,
            _lu_solve,
            _lu_factor,
            _legacy_lu,
        )
    else:
        frexp, mexp, lu = T.frexp, T.linalg.matrix_exp, T.linalg.lu
        unpack, solve, factor, legacy = T.lu_unpack, T.linalg.lu_solve, T.linalg.lu_factor, T.lu
    return {
        "frexp": lambda a: frexp(a),
        "matrix_exp": lambda a: mexp(a),
        "linalg.lu": lambda a: lu(a),
        "lu_unpack": lambda a: unpack(*factor(a)),
        "linalg.lu_solve": lambda a: solve(*factor(a), a.mT @ a),
        "lu": lambda a: legacy(a),
        "grad of matrix_exp": T.func.grad(lambda a: (mexp(a) * a).sum()),
    }


@pytest.mark.parametrize("name", list(_captured(ember)))
def test_value_reading_functions_bound_before_vmap_match_a_loop(name):
    fn = _captured(ember)[name]
    a = ember.tensor(MATS)
    got = func.vmap(fn)(a)
    want = [fn(a[i]) for i in range(len(MATS))]
    got = got if isinstance(got, tuple) else (got,)
    for k, g in enumerate(got):
        w = ember.stack([r[k] if isinstance(r, tuple) else r for r in want])
        np.testing.assert_allclose(g.double().numpy(), w.double().numpy(), rtol=1e-10, atol=1e-12)


def test_frexp_bound_before_vmap_against_numpy():
    m, e = func.vmap(lambda a: _frexp(a))(ember.tensor(MATS))
    nm, ne = np.frexp(MATS)
    np.testing.assert_array_equal(m.numpy(), nm)
    np.testing.assert_array_equal(e.numpy(), ne)


def test_matrix_exp_bound_before_vmap_against_a_series():
    got = func.vmap(lambda a: _matrix_exp(a))(ember.tensor(MATS * 0.3)).numpy()
    for i, a in enumerate(MATS * 0.3):
        term, want = np.eye(4), np.eye(4)
        for k in range(1, 40):
            term = term @ a / k
            want = want + term
        np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(_captured(ember)))
def test_value_reading_functions_bound_before_vmap_against_torch(name):
    torch = pytest.importorskip("torch")
    want = torch.func.vmap(_captured(torch)[name])(torch.tensor(MATS))
    got = func.vmap(_captured(ember)[name])(ember.tensor(MATS))
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.double().numpy(), w.double().numpy(), rtol=1e-9, atol=1e-12)


# -- torch.func's tutorials and API docs: compositions not covered before


def _ensemble(T):
    import copy

    ms = []
    for i in range(3):
        m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.ReLU()).double()
        with T.no_grad():
            m[0].weight.copy_(T.tensor(MATS[i, :, :3]))
            m[0].bias.copy_(T.tensor(MATS[i, 0]))
            m[1].running_mean.copy_(T.tensor(MATS[i, 1]))
            m[1].running_var.copy_(T.tensor(MATS[i, 2]).abs() + 0.5)
            m[1].weight.copy_(T.tensor(MATS[i, 3]))
        ms.append(m.eval())
    params, buffers = T.func.stack_module_state(ms)
    base = copy.deepcopy(ms[0]).to("meta")
    x = T.tensor(XS[:, :3])
    out = T.func.vmap(
        lambda p, b, x: T.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None)
    )(params, buffers, x)
    return out, T.stack([m(x) for m in ms])


def test_ensemble_of_eval_batch_norm_models_matches_the_models():
    got, loop = _ensemble(ember)
    np.testing.assert_allclose(got.detach().numpy(), loop.detach().numpy(), rtol=1e-12)


def test_ensemble_of_train_batch_norm_models_updates_each_models_statistics():
    # torch batches train-mode batch_norm over stacked running statistics: each model's own
    # statistics are used and updated, as running the models one by one does
    import copy

    ms = []
    for i in range(3):
        m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4)).double()
        with ember.no_grad():
            m[0].weight.copy_(ember.tensor(MATS[i, :, :3]))
        ms.append(m)
    params, buffers = ember.func.stack_module_state(ms)
    base = copy.deepcopy(ms[0]).to("meta")
    x = ember.tensor(XS[:, :3])
    out = ember.func.vmap(
        lambda p, b, x: ember.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None)
    )(params, buffers, x)
    loop = ember.stack([m(x) for m in ms])
    np.testing.assert_allclose(out.detach().numpy(), loop.detach().numpy(), rtol=1e-12)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        want = ember.stack([getattr(m[1], name) for m in ms])
        np.testing.assert_allclose(buffers[f"1.{name}"].numpy(), want.numpy(), rtol=1e-12)


def test_ensemble_of_eval_batch_norm_models_against_torch():
    torch = pytest.importorskip("torch")
    got, want = _ensemble(ember)[0], _ensemble(torch)[0]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_tensor_unfold_under_vmap_matches_a_loop():
    x = ember.tensor(RNG.standard_normal((3, 4, 6)))
    got = func.vmap(lambda a: a.unfold(1, 2, 2))(x)
    want = ember.stack([x[i].unfold(1, 2, 2) for i in range(3)])
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = func.vmap(lambda a: a.unfold(-2, 3, 1), in_dims=2)(x)
    want = ember.stack([x[:, :, i].unfold(-2, 3, 1) for i in range(6)])
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _api_errors(T):
    x = T.tensor(X[0])
    m = T.nn.Linear(2, 2)
    fc = T.func.functional_call
    return {
        "grad of a vector": lambda: T.func.grad(lambda a: a * 2)(x),
        "grad of a tuple": lambda: T.func.grad(lambda a: (a.sum(), a))(x),
        "argnum out of range": lambda: T.func.grad(lambda a: a.sum(), argnums=3)(x),
        "argnums tuple out of range": lambda: T.func.grad(lambda a: a.sum(), argnums=(0, 2))(x),
        "strict missing": lambda: fc(m, {"weight": T.zeros(2, 2)}, (T.ones(2),), strict=True),
        "strict both": lambda: fc(
            m, {"weight": T.zeros(2, 2), "bogus": T.ones(1)}, (T.ones(2),), strict=True
        ),
    }


@pytest.mark.parametrize("name", list(_api_errors(ember)))
def test_api_errors_as_torch(name):
    torch = pytest.importorskip("torch")

    def run(T):
        with pytest.raises(Exception) as info:
            _api_errors(T)[name]()
        return type(info.value).__name__, str(info.value)

    assert run(ember) == run(torch)


def _inplace_views(a):
    b = a.clone()
    assert b.unsqueeze_(0) is b
    b.squeeze_(0).t_()
    b.unsqueeze_(-1).squeeze_()
    b.transpose_(0, 1).swapaxes_(0, 1).unsqueeze_(1).squeeze_(1)
    return b


@pytest.mark.parametrize(
    "fn",
    [_inplace_views, lambda a: a.clone()[0].t_(), lambda a: a.clone().unsqueeze_(2).squeeze_(2)],
)
def test_inplace_view_methods_under_vmap_match_a_loop(fn):
    x = ember.tensor(RNG.standard_normal((2, 3, 4)))
    got = func.vmap(fn)(x)
    want = ember.stack([fn(x[i]) for i in range(2)])
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- autograd.functional's strict=True (it was accepted and not checked)


def _strict_cases(T):
    AF = T.autograd.functional
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    y = T.tensor([0.5, -1.0, 2.0], dtype=T.float64)

    def const(a):
        return T.zeros(3, dtype=T.float64)

    def only_a(a, b):
        return a.sin() * 2

    def lin(a):
        return (a * 3).sum()

    def lin2(a, b):
        return (a * 3).sum() + (b * b).sum()

    def sq(a):
        return (a**2).sum()

    return {
        "jacobian const": lambda: AF.jacobian(const, x, strict=True),
        "jacobian independent": lambda: AF.jacobian(only_a, (x, y), strict=True),
        "jacobian vectorize": lambda: AF.jacobian(only_a, (x, y), strict=True, vectorize=True),
        "jacobian linear create": lambda: AF.jacobian(
            lambda a: a * 2, x, strict=True, create_graph=True
        ),
        "jacobian two outputs create": lambda: AF.jacobian(
            lambda a, b: (b.sin(), a * 2), (x, y), strict=True, create_graph=True
        ),
        "hessian linear": lambda: AF.hessian(lin, x, strict=True),
        "hessian half linear": lambda: AF.hessian(lin2, (x, y), strict=True),
        "hessian independent block": lambda: AF.hessian(
            lambda a, b: (b**2).sum() * (a * 3).sum(), (x, y), strict=True, create_graph=True
        ),
        "vjp const": lambda: AF.vjp(const, x, x, strict=True),
        "vjp independent": lambda: AF.vjp(only_a, (x, y), x, strict=True),
        "vjp linear create": lambda: AF.vjp(
            lambda a, b: b.sin() + a * 2, (x, y), x, strict=True, create_graph=True
        ),
        "jvp const": lambda: AF.jvp(const, x, x, strict=True),
        "jvp independent": lambda: AF.jvp(only_a, (x, y), (x, y), strict=True),
        "jvp linear create": lambda: AF.jvp(
            lambda a, b: (a * 2, b.sin()), (x, y), (x, y), strict=True, create_graph=True
        ),
        "vhp linear": lambda: AF.vhp(lin2, (x, y), (x, y), strict=True),
        "hvp linear": lambda: AF.hvp(lin, x, x, strict=True),
        "vhp const": lambda: AF.vhp(lambda a: T.zeros((), dtype=T.float64), x, x, strict=True),
        "vhp ok": lambda: AF.vhp(sq, x, x, strict=True, create_graph=True)[1],
        "hessian ok": lambda: AF.hessian(lambda a: a.sin().sum(), x, strict=True),
        "jacobian ok": lambda: AF.jacobian(lambda a: a.sin(), x, strict=True),
    }


def _outcome(fn):
    try:
        r = fn()
    except RuntimeError as e:
        return str(e)
    return r.detach().numpy()


@pytest.mark.parametrize("name", list(_strict_cases(ember)))
def test_autograd_functional_strict_as_torch(name):
    torch = pytest.importorskip("torch")
    want, got = _outcome(_strict_cases(torch)[name]), _outcome(_strict_cases(ember)[name])
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_autograd_functional_strict_raises_only_where_it_must():
    cases = _strict_cases(ember)
    for name, fn in cases.items():
        out = _outcome(fn)
        assert isinstance(out, str) == (not name.endswith("ok")), name
    np.testing.assert_allclose(_outcome(cases["jacobian ok"]), np.diag(np.cos([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(_outcome(cases["vhp ok"]), 2 * np.array([1.0, 2.0, 3.0]))


def _attention(T, mask):
    mha = T.nn.MultiheadAttention(4, 2, batch_first=True).double()
    with T.no_grad():
        for j, p in enumerate(mha.parameters()):
            p.copy_(T.tensor(np.random.default_rng(80 + j).standard_normal(tuple(p.shape)) * 0.4))
    params = {k: v.detach() for k, v in mha.named_parameters()}
    x = T.tensor(np.random.default_rng(16).standard_normal((3, 5, 4)))
    attn_mask = T.tensor(np.triu(np.full((5, 5), -np.inf), 1)) if mask else None

    def loss(p, x):
        q = x.unsqueeze(0)
        out, w = T.func.functional_call(mha, p, (q, q, q), {"attn_mask": attn_mask})
        return out.pow(2).sum() + w.sin().sum()

    outs = T.func.vmap(lambda x: mha(x, x, x, attn_mask=attn_mask)[0])(x)
    grads = T.func.vmap(T.func.grad(loss), in_dims=(None, 0))(params, x)
    return [outs] + [grads[k] for k in sorted(grads)]


@pytest.mark.parametrize("mask", [False, True])
def test_multihead_attention_under_vmap_matches_a_loop(mask):
    got = _attention(ember, mask)[0]
    mha_out = []
    # the same module and inputs, one example at a time
    T = ember
    mha = T.nn.MultiheadAttention(4, 2, batch_first=True).double()
    with T.no_grad():
        for j, p in enumerate(mha.parameters()):
            p.copy_(T.tensor(np.random.default_rng(80 + j).standard_normal(tuple(p.shape)) * 0.4))
    x = T.tensor(np.random.default_rng(16).standard_normal((3, 5, 4)))
    attn_mask = T.tensor(np.triu(np.full((5, 5), -np.inf), 1)) if mask else None
    for i in range(3):
        mha_out.append(mha(x[i], x[i], x[i], attn_mask=attn_mask)[0])
    np.testing.assert_allclose(got.detach().numpy(), T.stack(mha_out).detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("mask", [False, True])
def test_per_sample_gradients_of_multihead_attention_against_torch(mask):
    torch = pytest.importorskip("torch")
    for g, w in zip(_attention(ember, mask), _attention(torch, mask)):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-9, atol=1e-12)
