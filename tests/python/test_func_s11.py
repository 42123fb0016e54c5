"""ember.func, session 11: nested forward transforms (jvp of jvp, jacfwd of jacfwd, hessian),
jacfwd by vmap over jvp, vmap reaching the batching rules through references taken before the
transform, the new batching rules (linalg, index_add, conv_transpose, group/instance norm, prelu
with a batched weight), dual tensors' printing, and torch.func's documented examples. Each is
checked against loops / finite differences, and against torch.func where torch is installed."""

import numpy as np
import pytest

import ember
import ember.func as func
import ember.nn.functional as F

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(t) for t in x]
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def close(a, b, tol=1e-4):
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def loop(fn, *args, in_dims=0):
    """The Python loop vmap replaces (in_dims 0 or None per argument)."""
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    n = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    outs = [fn(*(a if d is None else a.select(d, i) for a, d in zip(args, dims))) for i in range(n)]
    if isinstance(outs[0], (tuple, list)):
        return [ember.stack([o[k] for o in outs]) for k in range(len(outs[0]))]
    return ember.stack(outs)


def spd(*batch, n=3):
    a = rand(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(n, dtype=np.float32)


# -------------------------------------------------------------------------- new batching rules


@pytest.mark.parametrize("name", ["inv", "det", "cholesky", "qr", "slogdet", "eigvalsh", "svdvals"])
def test_vmap_linalg_against_loop(name):
    fn = getattr(ember.linalg, name)
    a = ember.tensor(spd(4))
    close(func.vmap(fn)(a), loop(fn, a))
    # nested, and with the batch in another dimension
    a2 = ember.tensor(spd(2, 3))
    close(func.vmap(func.vmap(fn))(a2), loop(lambda r: loop(fn, r), a2))
    close(func.vmap(fn, in_dims=1)(a2.movedim(0, 1)), loop(fn, a2))


def test_vmap_linalg_solve_and_unbatched_operand():
    a, b = ember.tensor(spd(5)), ember.tensor(rand(5, 3))
    close(func.vmap(ember.linalg.solve)(a, b), loop(ember.linalg.solve, a, b))
    a1 = ember.tensor(spd())
    got = func.vmap(ember.linalg.solve, in_dims=(None, 0))(a1, b)
    close(got, loop(ember.linalg.solve, a1, b, in_dims=(None, 0)))
    close(func.vmap(ember.inverse)(a), loop(ember.inverse, a))
    close(func.vmap(lambda m: m.det())(a), loop(lambda m: m.det(), a))


def test_vmap_linalg_against_torch():
    torch = pytest.importorskip("torch")
    a = spd(4)
    for name in ("inv", "det", "cholesky"):
        got = func.vmap(getattr(ember.linalg, name))(ember.tensor(a))
        want = torch.func.vmap(getattr(torch.linalg, name))(torch.tensor(a))
        close(got, want)


def test_vmap_index_add_and_copy():
    x, s = ember.tensor(rand(4, 5, 3)), ember.tensor(rand(4, 2, 3))
    idx = ember.tensor([0, 3])

    def f(a, b):
        return a.index_add(0, idx, b, alpha=2.0)

    close(func.vmap(f)(x, s), loop(f, x, s))
    close(func.vmap(f, in_dims=(None, 0))(x[0], s), loop(f, x[0], s, in_dims=(None, 0)))
    g = lambda a, b: ember.index_copy(a, 1, ember.tensor([2]), b)  # noqa: E731
    s2 = ember.tensor(rand(4, 5, 1))
    close(func.vmap(g)(x, s2), loop(g, x, s2))

    def inplace(a, b):
        a = a.clone()
        a.index_add_(-1, ember.tensor([1]), b)
        return a

    s3 = ember.tensor(rand(4, 5, 1))
    close(func.vmap(inplace)(x, s3), loop(inplace, x, s3))
    torch = pytest.importorskip("torch")
    want = torch.func.vmap(lambda a, b: a.index_add(0, torch.tensor([0, 3]), b, alpha=2.0))(
        torch.tensor(x.numpy()), torch.tensor(s.numpy())
    )
    close(func.vmap(f)(x, s), want)


def test_vmap_conv_transpose_batched_input_and_weight():
    x = ember.tensor(rand(3, 2, 4, 5, 5))
    w = ember.tensor(rand(4, 6, 3, 3))
    f = lambda a, k: F.conv_transpose2d(a, k, stride=2, padding=1)  # noqa: E731
    close(func.vmap(f, in_dims=(0, None))(x, w), loop(f, x, w, in_dims=(0, None)))
    ws = ember.tensor(rand(3, 4, 6, 3, 3))
    close(func.vmap(f)(x, ws), loop(f, x, ws))
    x1 = ember.tensor(rand(3, 4, 5))  # conv_transpose1d, unbatched (C, L) examples
    w1 = ember.tensor(rand(3, 4, 2, 3))
    g = lambda a, k: F.conv_transpose1d(a, k)  # noqa: E731
    close(func.vmap(g)(x1, w1), loop(g, x1, w1))


def test_vmap_group_and_instance_norm():
    x = ember.tensor(rand(3, 2, 4, 5))
    w, b = ember.tensor(rand(3, 4)), ember.tensor(rand(3, 4))
    gn = lambda a, ww, bb: F.group_norm(a, 2, ww, bb)  # noqa: E731
    close(func.vmap(gn)(x, w, b), loop(gn, x, w, b))
    close(
        func.vmap(gn, in_dims=(0, None, None))(x, w[0], b[0]),
        loop(gn, x, w[0], b[0], in_dims=(0, None, None)),
    )
    inn = lambda a, ww, bb: F.instance_norm(a, weight=ww, bias=bb)  # noqa: E731
    close(func.vmap(inn)(x, w, b), loop(inn, x, w, b))


def test_vmap_prelu_batched_weight():
    x, w = ember.tensor(rand(4, 2, 3, 5)), ember.tensor(rand(4, 3))
    close(func.vmap(F.prelu)(x, w), loop(F.prelu, x, w))
    w1 = ember.tensor(rand(4, 1))
    close(func.vmap(F.prelu)(x, w1), loop(F.prelu, x, w1))
    torch = pytest.importorskip("torch")
    want = torch.func.vmap(torch.nn.functional.prelu)(
        torch.tensor(x.numpy()), torch.tensor(w.numpy())
    )
    close(func.vmap(F.prelu)(x, w), want)


def test_vmap_error_names_the_op():
    x = ember.tensor(rand(5, 3))
    with pytest.raises(
        RuntimeError, match=r"Batching rule not implemented for ember\.linalg\.solve"
    ):
        func.vmap(lambda v: ember.linalg.solve(ember.tensor(spd(2)), v))(x)


# -------------------------------------------------------------------------- nested forward mode


def _f64(a):
    return ember.tensor(np.asarray(a, dtype=np.float64))


def _fd_jacobian(fn, x, eps=1e-6):
    """Central finite differences of fn (tensor -> tensor) at x (float64)."""
    base = x.numpy().astype(np.float64)
    cols = []
    for i in range(base.size):
        d = np.zeros_like(base).reshape(-1)
        d[i] = eps
        d = d.reshape(base.shape)
        hi = fn(_f64(base + d)).numpy()
        lo = fn(_f64(base - d)).numpy()
        cols.append((hi - lo) / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(hi) + base.shape)


def _scalar_fns(m, fm):
    w = m.tensor(np.random.default_rng(3).standard_normal((3, 4)))
    return {
        "sin_exp": lambda x: (m.sin(x) * x.exp()).sum(),
        "softmax": lambda x: (m.softmax(x, -1) ** 2).sum(),
        "logsumexp": lambda x: m.logsumexp(x * x, 0),
        "mlp": lambda x: m.tanh(w @ x).pow(3).sum(),
        "gelu_logsoftmax": lambda x: fm.gelu(x).sum() + fm.log_softmax(x, -1).sum(),
        "cumsum_prod": lambda x: (x.cumsum(0) * x.sigmoid()).prod(),
    }


@pytest.mark.parametrize("name", list(_scalar_fns(ember, F)))
def test_jacfwd_of_jacfwd_is_the_hessian(name):
    f = _scalar_fns(ember, F)[name]
    x = _f64(np.random.default_rng(4).standard_normal(4))
    h = func.jacfwd(func.jacfwd(f))(x)
    close(h, func.hessian(f)(x), 1e-8)
    close(h, func.jacrev(func.jacrev(f))(x), 1e-8)
    close(h, _fd_jacobian(lambda y: func.jacrev(f)(y), x), 1e-5)
    torch = pytest.importorskip("torch")
    tf = _scalar_fns(torch, torch.nn.functional)[name]
    close(h, torch.func.jacfwd(torch.func.jacfwd(tf))(torch.tensor(x.numpy())), 1e-8)


@pytest.mark.parametrize("name", list(_scalar_fns(ember, F)))
def test_jvp_of_jvp(name):
    f = _scalar_fns(ember, F)[name]
    rng = np.random.default_rng(5)
    x, v, u = (_f64(rng.standard_normal(4)) for _ in range(3))
    got = func.jvp(lambda y: func.jvp(f, (y,), (v,))[1], (x,), (u,))[1]
    h = func.hessian(f)(x)
    close(got, u @ h @ v, 1e-8)
    torch = pytest.importorskip("torch")
    tf = _scalar_fns(torch, torch.nn.functional)[name]
    tx, tv, tu = (torch.tensor(a.numpy()) for a in (x, v, u))
    want = torch.func.jvp(lambda y: torch.func.jvp(tf, (y,), (tv,))[1], (tx,), (tu,))[1]
    close(got, want, 1e-8)


def test_third_order_and_jacfwd_of_hessian():
    def f(m):
        return lambda x: (m.sin(x) * x.exp()).sum() + m.softmax(x, 0)[0] * x[1]

    x = _f64([0.3, -0.7, 1.1])
    third = func.jacfwd(func.jacfwd(func.jacfwd(f(ember))))(x)
    close(third, func.jacfwd(func.hessian(f(ember)))(x), 1e-8)
    close(third, _fd_jacobian(lambda y: func.hessian(f(ember))(y), x), 1e-5)
    torch = pytest.importorskip("torch")
    tj = torch.func.jacfwd
    close(third, tj(tj(tj(f(torch))))(torch.tensor(x.numpy())), 1e-8)


def test_hessian_is_forward_over_reverse_with_argnums():
    def f(a, b):
        return (a.sin() * b).sum() + (a * a * b.exp()).sum()

    a, b = _f64([0.1, 0.5, -1.0]), _f64([2.0, -0.3, 0.7])
    h = func.hessian(f, argnums=(0, 1))(a, b)
    torch = pytest.importorskip("torch")
    want = torch.func.hessian(f, argnums=(0, 1))(torch.tensor(a.numpy()), torch.tensor(b.numpy()))
    close([list(r) for r in h], [list(r) for r in want], 1e-8)


def test_jacfwd_runs_vmap_over_jvp_and_matches_torch():
    rng = np.random.default_rng(6)
    x = _f64(rng.standard_normal(5))
    w = rng.standard_normal((3, 5))

    def fns(m, fm):
        wm = m.tensor(w)
        return [
            lambda y: m.tanh(wm @ y),
            lambda y: m.softmax(y, 0) * y.sin(),
            lambda y: fm.gelu(y).cumsum(0),
            lambda y: (y.exp(), y.sum()),
        ]

    for f in fns(ember, F):
        got = func.jacfwd(f)(x)
        close(got, func.jacrev(f)(x), 1e-8)
    torch = pytest.importorskip("torch")
    for f, tf in zip(fns(ember, F), fns(torch, torch.nn.functional)):
        close(func.jacfwd(f)(x), torch.func.jacfwd(tf)(torch.tensor(x.numpy())), 1e-8)


def test_jacfwd_randomness_as_vmap():
    x = ember.randn(3)
    with pytest.raises(RuntimeError, match="randomness"):
        func.jacfwd(lambda y: y * ember.rand(3))(x)
    ember.manual_seed(0)
    j = func.jacfwd(lambda y: y * ember.rand(()), randomness="same")(x)
    d = j.diagonal()
    close(j, ember.diag(d))
    assert float((d - d[0]).abs().max()) == 0.0  # one random value for every column


def test_jacfwd_argnums_and_has_aux():
    def f(a, b):
        return a * b.sum(), a.detach()

    a, b = _f64([1.0, 2.0]), _f64([3.0, 4.0, 5.0])
    (ja, jb), aux = func.jacfwd(f, argnums=(0, 1), has_aux=True)(a, b)
    close(ja, np.eye(2) * 12.0)
    close(jb, np.outer([1.0, 2.0], np.ones(3)))
    close(aux, a)


def test_dual_tensor_prints_its_tangent():
    import ember.autograd.forward_ad as fwad

    with fwad.dual_level():
        d = fwad.make_dual(ember.ones(2), ember.full((2,), 3.0))
        assert repr(d) == "tensor([1., 1.], tangent=tensor([3., 3.]))"
        u = fwad.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert "tangent=" not in repr(u.primal)
    torch = pytest.importorskip("torch")
    with torch.autograd.forward_ad.dual_level():
        t = torch.autograd.forward_ad.make_dual(torch.ones(2), torch.full((2,), 3.0))
        assert repr(t) == "tensor([1., 1.], tangent=tensor([3., 3.]))"


# -------------------------------------------------------------------------- torch.func's examples


def _nets(m):
    class SimpleCNN(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = m.nn.Conv2d(1, 4, 3)
            self.fc = m.nn.Linear(4 * 4 * 4, 10)

        def forward(self, x):
            x = m.nn.functional.relu(self.conv(x))
            x = m.nn.functional.max_pool2d(x, 2)
            return self.fc(x.flatten(1))

    class MLP(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = m.nn.Linear(6, 16)
            self.fc2 = m.nn.Linear(16, 3)

        def forward(self, x):
            return self.fc2(m.nn.functional.relu(self.fc1(x)))

    return SimpleCNN, MLP


def _same_weights(src, dst, torch):
    dst.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})
    return dst


def _per_sample_grads(m, model, data, targets):
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        out = m.func.functional_call(model, (params, buffers), (batch,))
        return m.nn.functional.cross_entropy(out, target.unsqueeze(0))

    return m.func.vmap(m.func.grad(compute_loss), in_dims=(None, None, 0, 0))(
        params, buffers, data, targets
    )


def test_example_per_sample_gradients():
    cnn, _ = _nets(ember)
    ember.manual_seed(0)
    model = cnn()
    data = ember.tensor(rand(8, 1, 10, 10))
    targets = ember.tensor(RNG.integers(0, 10, 8))
    grads = _per_sample_grads(ember, model, data, targets)
    # the loop it replaces
    for i in (0, 5):
        model.zero_grad()
        F.cross_entropy(model(data[i : i + 1]), targets[i : i + 1]).backward()
        for k, p in model.named_parameters():
            close(grads[k][i], p.grad)
    torch = pytest.importorskip("torch")
    tmodel = _same_weights(model, _nets(torch)[0](), torch)
    want = _per_sample_grads(
        torch, tmodel, torch.tensor(data.numpy()), torch.tensor(targets.numpy())
    )
    for k in want:
        close(grads[k], want[k])


def _ensemble(m, models, minibatches, same_batch):
    import copy

    params, buffers = m.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return m.func.functional_call(base, (params, buffers), (x,))

    if same_batch:
        return m.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0])
    return m.func.vmap(fmodel)(params, buffers, minibatches)


@pytest.mark.parametrize("same_batch", [False, True])
def test_example_model_ensembling(same_batch):
    _, mlp = _nets(ember)
    ember.manual_seed(1)
    models = [mlp() for _ in range(4)]
    batches = ember.tensor(rand(4, 5, 6))
    got = _ensemble(ember, models, batches, same_batch)
    for i, model in enumerate(models):
        close(got[i], model(batches[0] if same_batch else batches[i]))
    torch = pytest.importorskip("torch")
    tmlp = _nets(torch)[1]
    tmodels = [_same_weights(mod, tmlp(), torch) for mod in models]
    want = _ensemble(torch, tmodels, torch.tensor(batches.numpy()), same_batch)
    close(got, want)


def _jacobian_examples(m, weight, bias, x, v):
    func_ = m.func

    def predict(weight, bias, x):
        return m.nn.functional.linear(x, weight, bias).tanh()

    def f(x):
        return x.sin().sum()

    return {
        "jacrev": func_.jacrev(predict, argnums=2)(weight, bias, x[0]),
        "jacfwd": func_.jacfwd(predict, argnums=2)(weight, bias, x[0]),
        "batched_jacrev": func_.vmap(func_.jacrev(predict, argnums=2), in_dims=(None, None, 0))(
            weight, bias, x
        ),
        "jac_wb": func_.jacrev(predict, argnums=(0, 1))(weight, bias, x[0]),
        "hessian": func_.hessian(predict, argnums=2)(weight, bias, x[0]),
        "hess_fwdrev": func_.jacfwd(func_.jacrev(predict, argnums=2), argnums=2)(
            weight, bias, x[0]
        ),
        "hvp": func_.jvp(func_.grad(f), (x[0],), (v,))[1],
    }


def test_example_jacobians_hessians_hvp():
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in ((4, 3), (4,), (5, 3), (3,))]
    got = _jacobian_examples(ember, *(_f64(a) for a in arrays))
    close(got["jacfwd"], got["jacrev"], 1e-8)
    close(got["batched_jacrev"][2], got["jacrev"] * 0 + _jac_at(arrays, 2), 1e-8)
    close(got["hessian"], got["hess_fwdrev"], 1e-8)
    close(got["hvp"], -np.sin(arrays[2][0]) * arrays[3], 1e-8)
    torch = pytest.importorskip("torch")
    want = _jacobian_examples(torch, *(torch.tensor(a) for a in arrays))
    for k in want:
        close(got[k], want[k], 1e-8)


def _jac_at(arrays, i):
    w, b, x = arrays[0], arrays[1], arrays[2][i]
    y = np.tanh(w @ x + b)
    return (1 - y**2)[:, None] * w


def _ntk(m, net, x1, x2, method):
    func_ = m.func
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return func_.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    if method == "jacobian":
        jac1 = func_.vmap(func_.jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = [j.flatten(2) for j in jac1.values()]
        jac2 = func_.vmap(func_.jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = [j.flatten(2) for j in jac2.values()]
        return sum(m.einsum("Naf,Mbf->NMab", a, b) for a, b in zip(jac1, jac2))

    def get_ntk(x1, x2):
        def func_x1(params):
            return fnet_single(params, x1)

        def func_x2(params):
            return fnet_single(params, x2)

        output, vjp_fn = func_.vjp(func_x1, params)

        def get_ntk_slice(vec):
            (vjps,) = vjp_fn(vec)
            return func_.jvp(func_x2, (params,), (vjps,))[1]

        basis = m.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
        return func_.vmap(get_ntk_slice)(basis)

    return func_.vmap(func_.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)


@pytest.mark.parametrize("method", ["jacobian", "vjp_jvp"])
def test_example_neural_tangent_kernel(method):
    _, mlp = _nets(ember)
    ember.manual_seed(2)
    net = mlp()
    x1, x2 = ember.tensor(rand(3, 6)), ember.tensor(rand(2, 6))
    got = _ntk(ember, net, x1, x2, method)
    assert tuple(got.shape) == (3, 2, 3, 3)
    if method == "vjp_jvp":
        close(got, _ntk(ember, net, x1, x2, "jacobian"))
    torch = pytest.importorskip("torch")
    tnet = _same_weights(net, _nets(torch)[1](), torch)
    want = _ntk(torch, tnet, torch.tensor(x1.numpy()), torch.tensor(x2.numpy()), method)
    close(got, want)


# -------------------------------------------------------------------------- references taken early

from ember import add as _add_early  # noqa: E402
from ember import sum as _sum_early  # noqa: E402

_softmax_early = F.softmax
_gelu_early = F.gelu
_logsigmoid_early = F.logsigmoid
_relu_early = F.relu
_det_early = ember.linalg.det
_tensor_sum_early = ember.Tensor.sum


@pytest.mark.parametrize(
    "name,fn",
    [
        ("from ember import sum", lambda a: _sum_early(a, 0)),
        ("from ember import add", lambda a: _add_early(a, a, alpha=2.0)),
        ("Tensor.sum taken early", lambda a: _tensor_sum_early(a, -1)),
        ("F.softmax taken early", lambda a: _softmax_early(a, -1)),
        ("F.gelu taken early", lambda a: _gelu_early(a)),
        ("F.logsigmoid taken early", lambda a: _logsigmoid_early(a)),
        ("F.relu taken early", lambda a: _relu_early(a)),
        ("bound method", lambda a: a.sum),  # returns the method: called below
    ],
)
def test_references_taken_before_vmap_reach_the_rules(name, fn):
    x = ember.tensor(rand(4, 3, 5))
    if name == "bound method":

        def f(a):
            return fn(a)(0)

    else:
        f = fn
    close(func.vmap(f)(x), loop(f, x))
    close(func.vmap(func.vmap(f), in_dims=1)(x), loop(lambda r: loop(f, r), x.movedim(1, 0)))


def test_linalg_reference_and_default_argument_reach_the_rules():
    a = ember.tensor(spd(4))

    def f(m, det=_det_early):
        return det(m)

    close(func.vmap(f)(a), loop(f, a))
    # and per-example gradients through a captured F function
    w = ember.tensor(rand(3, 5))
    x = ember.tensor(rand(6, 5))

    def loss(w, xi):
        return _softmax_early(w @ xi, 0)[0]

    g = func.vmap(func.grad(loss), in_dims=(None, 0))(w, x)
    close(g, loop(lambda xi: func.grad(loss)(w, xi), x))


# -------------------------------------------------------------------------- jacrev runs f once


def test_jacrev_runs_the_function_once_and_composes_with_jacfwd():
    calls = []

    def f(x):
        calls.append(1)
        return x.sin() * x.sum()

    x = _f64([0.2, -0.4, 0.9])
    j = func.jacrev(f)(x)
    assert len(calls) == 1  # rows by backward passes over the one recorded graph
    close(j, func.jacfwd(f)(x), 1e-10)

    def g(y):
        return (y.sin() * y).sum() + F.softmax(y, 0)[1]

    close(func.jacrev(func.jacfwd(g))(x), func.hessian(g)(x), 1e-8)
    # per-example Jacobians: jacrev under an outer vmap
    xs = _f64(np.random.default_rng(8).standard_normal((4, 3)))
    close(func.vmap(func.jacrev(f))(xs), loop(func.jacrev(f), xs), 1e-10)
    torch = pytest.importorskip("torch")
    tg = lambda y: (y.sin() * y).sum() + torch.softmax(y, 0)[1]  # noqa: E731
    close(
        func.jacrev(func.jacfwd(g))(x),
        torch.func.jacrev(torch.func.jacfwd(tg))(torch.tensor(x.numpy())),
        1e-8,
    )


# -------------------------------------------------------------------------- vmap over jvp


def _vj_fns(m):
    w = m.tensor(np.random.default_rng(9).standard_normal((3, 5)))
    return {
        "tanh_mlp": lambda x: m.tanh(w @ x),
        "softmax_sin": lambda x: m.softmax(x, 0) * x.sin(),
        "logsumexp": lambda x: m.logsumexp(x.exp() * x, 0),
        "methods": lambda x: x.cumsum(0) * x.sigmoid() + x.exp().sum(),
    }


@pytest.mark.parametrize("name", list(_vj_fns(ember)))
def test_vmap_over_jvp_with_batched_primals(name):
    f = _vj_fns(ember)[name]
    rng = np.random.default_rng(10)
    xs, vs = _f64(rng.standard_normal((4, 5))), _f64(rng.standard_normal((4, 5)))
    got = func.vmap(lambda x, v: func.jvp(f, (x,), (v,))[1])(xs, vs)
    close(got, loop(lambda x, v: func.jvp(f, (x,), (v,))[1], xs, vs), 1e-10)
    got1 = func.vmap(lambda x: func.jvp(f, (x,), (vs[0],))[1])(xs)
    close(got1, loop(lambda x: func.jvp(f, (x,), (vs[0],))[1], xs), 1e-10)
    jac = func.vmap(func.jacfwd(f))(xs)
    close(jac, loop(func.jacrev(f), xs), 1e-10)
    torch = pytest.importorskip("torch")
    tf = _vj_fns(torch)[name]
    tx, tv = torch.tensor(xs.numpy()), torch.tensor(vs.numpy())
    want = torch.func.vmap(lambda x, v: torch.func.jvp(tf, (x,), (v,))[1])(tx, tv)
    close(got, want, 1e-10)
