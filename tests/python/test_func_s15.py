"""torch.func, session 15: recurrent layers under vmap, torch's errors for what vmap cannot
batch, old-style autograd.Functions refused by the transforms, in_dims/out_dims structure
errors, functional_call's tied weights, and torch.func's documented uses against torch."""

import copy

import numpy as np
import pytest

import ember
from ember import func, nn

RS = np.random.RandomState(15)
X = RS.randn(4, 5, 3)


def _init(m, T, seed=0):
    rs = np.random.RandomState(seed)
    for p in m.parameters():
        with T.no_grad():
            p.copy_(T.tensor(rs.randn(*p.shape)).to(p.dtype) * 0.3)
    return m


# -- recurrent layers under vmap (Note [RNN layer under vmap])


def _rnn_modules(T, dtype="float64"):
    d = getattr(T, dtype)
    return {
        "gru": _init(T.nn.GRU(3, 6, batch_first=True, dtype=d), T),
        "lstm2": _init(T.nn.LSTM(3, 6, num_layers=2, batch_first=True, dtype=d), T),
        "lstm_bi": _init(T.nn.LSTM(3, 4, bidirectional=True, dtype=d), T),
        "rnn_relu": _init(T.nn.RNN(3, 6, nonlinearity="relu", dtype=d), T),
        "grucell": _init(T.nn.GRUCell(3, 6, dtype=d), T),
        "lstmcell": _init(T.nn.LSTMCell(3, 6, dtype=d), T),
        "rnncell": _init(T.nn.RNNCell(3, 6, dtype=d), T),
    }


def _call(name, m, x):
    """The module's outputs on one example x (5, 3): sequence models see (seq, batch 1)."""
    if name.endswith("cell"):
        out = m(x[0])
        return out if isinstance(out, tuple) else (out,)
    out, state = m(x.unsqueeze(1) if not m.batch_first else x.unsqueeze(0))
    return (out, *(state if isinstance(state, tuple) else (state,)))


@pytest.mark.parametrize("name", list(_rnn_modules(ember)))
def test_recurrent_modules_under_vmap_equal_a_loop(name):
    m = _rnn_modules(ember)[name]
    x = ember.tensor(X)
    got = func.vmap(lambda e: _call(name, m, e))(x)
    for k, g in enumerate(got):
        want = np.stack([_call(name, m, ember.tensor(X[i]))[k].detach().numpy() for i in range(4)])
        np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["gru", "lstm2", "lstm_bi", "lstmcell"])
def test_recurrent_per_sample_gradients_equal_a_loop(name):
    m = _rnn_modules(ember)[name]
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, x):
        return sum(o.pow(2).sum() for o in _call(name, _Bound(m, p), x))

    got = func.vmap(func.grad(loss), in_dims=(None, 0))(params, ember.tensor(X))
    for i in range(4):
        leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
        grads = ember.autograd.grad(loss(leaves, ember.tensor(X[i])), list(leaves.values()))
        for (k, _), g in zip(leaves.items(), grads):
            np.testing.assert_allclose(got[k][i].numpy(), g.numpy(), rtol=1e-10, atol=1e-12)


class _Bound:
    """m called through functional_call with p (keeps _call's batch_first test working)."""

    def __init__(self, m, p):
        self.m, self.p, self.batch_first = m, p, getattr(m, "batch_first", False)

    def __call__(self, *args):
        return func.functional_call(self.m, self.p, args)


def test_recurrent_layer_nested_vmap_and_batched_state():
    m = _rnn_modules(ember)["lstm2"]
    xs = ember.tensor(RS.randn(2, 3, 5, 3))
    h0 = ember.tensor(RS.randn(3, 2, 1, 6))
    c0 = ember.tensor(RS.randn(3, 2, 1, 6))

    def one(x, h, c):
        return m(x.unsqueeze(0), (h, c))[0]

    got = func.vmap(func.vmap(one, in_dims=(0, 0, 0)), in_dims=(0, None, None))(xs, h0, c0)
    for a in range(2):
        for b in range(3):
            want = one(xs[a, b], h0[b], c0[b]).detach().numpy()
            np.testing.assert_allclose(got[a, b].detach().numpy(), want, rtol=1e-12)


def test_lstm_per_sample_gradients_against_torch():
    torch = pytest.importorskip("torch")
    out = {}
    for T in (ember, torch):
        # float32: torch's float64 LSTM has no path under vmap (its fallback loop fails)
        m = _rnn_modules(T, "float32")["lstm2"]
        params = {k: v.detach() for k, v in m.named_parameters()}

        def loss(p, x, m=m, T=T):
            return T.func.functional_call(m, p, (x.unsqueeze(0),))[0].pow(2).sum()

        grads = T.func.vmap(T.func.grad(loss), in_dims=(None, 0))(params, T.tensor(X).float())
        out[T.__name__] = {k: v.numpy() for k, v in grads.items()}
    for k, v in out["torch"].items():
        np.testing.assert_allclose(out["ember"][k], v, rtol=1e-4, atol=1e-5)


def test_ensemble_of_grus_from_stack_module_state_equals_each_model():
    models = [_init(nn.GRU(3, 6, dtype=ember.float64), ember, seed=s) for s in range(3)]
    params, buffers = func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    x = ember.tensor(X[0]).unsqueeze(1)
    got = func.vmap(lambda p, b: func.functional_call(base, (p, b), (x,))[0])(params, buffers)
    for i, m in enumerate(models):
        np.testing.assert_allclose(got[i].detach().numpy(), m(x)[0].detach().numpy(), rtol=1e-12)


# -- torch's errors for what vmap cannot batch


def _vmap_errors(T):
    v = T.func.vmap
    x = T.tensor(RS.randn(3, 4))
    xi = T.tensor([[0, 1], [2, 0], [1, 1]])
    mask = x > 0

    class Old(T.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoRule(T.autograd.Function):
        @staticmethod
        def forward(t):
            return t * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return {
        "item": lambda: v(lambda t: t.sum().item())(x),
        "if": lambda: v(lambda t: t if t.sum() > 0 else -t)(x),
        "float": lambda: v(lambda t: float(t.sum()))(x),
        "int": lambda: v(lambda t: int(t.sum()))(x),
        "index_int": lambda: v(lambda t: [1, 2, 3][t[0]])(xi),
        "index_float": lambda: v(lambda t: [1, 2, 3][t[0]])(x),
        "tolist": lambda: v(lambda t: t.tolist())(x),
        "numpy": lambda: v(lambda t: t.numpy())(x),
        "nonzero": lambda: v(lambda t: t.nonzero())(x),
        "nonzero_tuple": lambda: v(lambda t: t.nonzero(as_tuple=True))(x),
        "unique": lambda: v(lambda t: t.unique())(x),
        "unique_consecutive": lambda: v(lambda t: t.unique_consecutive())(x),
        "masked_select_batched_mask": lambda: v(T.masked_select)(x, mask),
        "bool_mask_index": lambda: v(lambda t, m: t[m])(x, mask),
        "rand": lambda: v(lambda t: t + T.rand(4, dtype=t.dtype))(x),
        "dropout": lambda: v(lambda t: T.nn.functional.dropout(t, 0.5))(x),
        "old_function_vmap": lambda: v(Old.apply)(x),
        "old_function_grad": lambda: T.func.grad(lambda t: Old.apply(t).sum())(x[0]),
        "old_function_jvp": lambda: T.func.jvp(Old.apply, (x[0],), (x[1],)),
        "function_without_vmap": lambda: v(NoRule.apply)(x),
        "grad_of_int_input": lambda: T.func.grad(lambda t: t.sum())(xi[0]),
    }


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class and text are what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", list(_vmap_errors(ember)))
def test_vmap_errors_as_torch(name):
    torch = pytest.importorskip("torch")
    want = _error(_vmap_errors(torch)[name])
    assert want is not None
    assert _error(_vmap_errors(ember)[name]) == want


class _Double(ember.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_old_function_outside_transforms_and_ember_functions_inside_still_work():
    x = ember.tensor(RS.randn(3, 3)).requires_grad_()
    _Double.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0)
    # ember's own Functions (linalg) keep working under the transforms
    a = ember.tensor(RS.randn(2, 3, 3) + 3 * np.eye(3))
    got = func.vmap(func.grad(lambda m: ember.linalg.det(m)))(a).numpy()
    want = np.stack([np.linalg.det(m) * np.linalg.inv(m).T for m in a.numpy()])
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_masked_select_with_an_unbatched_mask_against_numpy():
    x = RS.randn(3, 4)
    mask = np.array([True, False, True, True])
    got = func.vmap(lambda t: ember.masked_select(t, ember.tensor(mask)))(ember.tensor(x))
    np.testing.assert_allclose(got.numpy(), x[:, mask])
    got = func.vmap(lambda t: ember.masked_select(t, ember.tensor(mask[None, :])))(
        ember.tensor(x[:, :1])
    )
    np.testing.assert_allclose(got.numpy(), np.broadcast_to(x[:, :1], (3, 4))[:, mask])


# -- in_dims/out_dims and cotangent structures as torch reports them


def _structure_errors(T):
    v, M = T.func.vmap, T.ones(3, 4)
    return {
        "in_none": lambda: v(T.sum, in_dims=None)(M),
        "in_all_none": lambda: v(T.sum, in_dims=(None,))(M),
        "in_list": lambda: v(T.sum, in_dims=[0])(M),
        "in_float_leaf": lambda: v(T.sum, in_dims=(1.0,))(M),
        "in_too_many": lambda: v(T.sum, in_dims=(0, 1))(M),
        "in_nested": lambda: v(lambda a, b: a, in_dims=(0, (0, None)))(M, {"a": M, "b": M}),
        "out_pair": lambda: v(T.sum, out_dims=(0, 0))(M),
        "out_range": lambda: v(lambda r: r, out_dims=3)(M),
        "out_negative": lambda: v(T.sum, out_dims=-3)(M),
        "out_float": lambda: v(T.sum, out_dims=1.0)(M),
        "out_nested": lambda: v(lambda r: (r, [r, r]), out_dims=(0, (0,)))(M),
        "out_dict": lambda: v(lambda r: {"k": r}, out_dims=(0, 1))(M),
        "no_inputs": lambda: v(lambda: M)(),
        "vjp_cotangents": lambda: T.func.vjp(lambda q: (q, [q]), M)[1]((M, M)),
        "vjp_cotangent_single": lambda: T.func.vjp(lambda q: (q, q), M)[1](M),
    }


@pytest.mark.parametrize("name", list(_structure_errors(ember)))
def test_structure_errors_as_torch(name):
    torch = pytest.importorskip("torch")
    want = _error(_structure_errors(torch)[name])
    assert want is not None
    assert _error(_structure_errors(ember)[name]) == want


# -- functional_call: tied weights, names that are not parameters, duplicate keys


def _tied_programs(T):
    class Tied(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = T.nn.Linear(2, 2, bias=False)
            self.b = T.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight
            self.register_buffer("buf", T.ones(2))

        def forward(self, x):
            return self.a(x) + self.b(x) + self.buf * getattr(self, "scale", 1.0)

    m = Tied()
    with T.no_grad():
        m.a.weight.copy_(T.tensor([[0.5, -1.0], [2.0, 0.25]]))
    x, w, w2 = T.ones(1, 2), T.full((2, 2), 2.0), T.full((2, 2), 3.0)
    fc = T.func.functional_call
    return {
        "tie_a": lambda: fc(m, {"a.weight": w}, (x,)),
        "tie_b": lambda: fc(m, {"b.weight": w}, (x,)),
        "untied": lambda: fc(m, {"a.weight": w}, (x,), tie_weights=False),
        "tied_two_values": lambda: fc(m, {"a.weight": w, "b.weight": w2}, (x,)),
        "tied_same_value": lambda: fc(m, {"a.weight": w, "b.weight": w}, (x,)),
        "untied_two_values": lambda: fc(
            m, {"a.weight": w, "b.weight": w2}, (x,), tie_weights=False
        ),
        "strict_tied": lambda: fc(m, {"a.weight": w, "buf": T.zeros(2)}, (x,), strict=True),
        "new_attribute": lambda: (fc(m, {"scale": T.tensor(5.0)}, (x,)), hasattr(m, "scale")),
        "missing_submodule": lambda: fc(m, {"nope.foo": w}, (x,)),
        "duplicates": lambda: fc(m, ({"buf": w, "a.weight": w}, {"a.weight": w}, {"buf": w}), (x,)),
        "after": lambda: m(x),
    }


@pytest.mark.parametrize("name", list(_tied_programs(ember)))
def test_functional_call_tied_weights_against_torch(name):
    torch = pytest.importorskip("torch")

    def result(T):
        try:
            out = _tied_programs(T)[name]()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        out = out if isinstance(out, tuple) else (out,)
        return [o.detach().numpy().tolist() if hasattr(o, "numpy") else o for o in out]

    assert result(ember) == result(torch)


# -- torch.func's documented uses, values against torch


def _doc_programs(T):
    F, tf, rs = T.nn.functional, T.func, np.random.RandomState(3)

    def t(*s):
        return T.tensor(rs.randn(*s))

    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(4, 8, dtype=T.float64)
            self.fc2 = T.nn.Linear(8, 3, dtype=T.float64)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    models = [_init(Net(), T, seed=s) for s in range(3)]
    params, buffers = tf.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(p, b, x):
        return tf.functional_call(base, (p, b), (x,))

    model = models[0]
    pd = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, s, y):
        return F.cross_entropy(tf.functional_call(model, p, (s.unsqueeze(0),)), y.unsqueeze(0))

    data, tgt = t(6, 4), T.tensor(rs.randint(0, 3, 6))
    w, b, xx, xb = t(5, 5), t(5), t(5), t(4, 5)

    def predict(w, b, x):
        return F.linear(x, w, b).tanh()

    return {
        "ensemble_same_batch": lambda: tf.vmap(fmodel, in_dims=(0, 0, None))(
            params, buffers, t(5, 4)
        ),
        "ensemble_own_batches": lambda: tf.vmap(fmodel)(params, buffers, t(3, 5, 4)),
        "per_sample_grads": lambda: tf.vmap(tf.grad(loss), in_dims=(None, 0, 0))(pd, data, tgt),
        "per_sample_grads_chunked": lambda: tf.vmap(
            tf.grad_and_value(loss), in_dims=(None, 0, 0), chunk_size=4
        )(pd, data, tgt),
        "jacrev": lambda: tf.jacrev(predict, argnums=2)(w, b, xx),
        "jacfwd_weights": lambda: tf.jacfwd(predict, argnums=(0, 1))(w, b, xx),
        "hessian": lambda: tf.hessian(predict, argnums=2)(w, b, xx),
        "batch_jacobian": lambda: tf.vmap(tf.jacrev(predict, argnums=2), in_dims=(None, None, 0))(
            w, b, xb
        ),
        "batch_jacobian_sum_trick": lambda: tf.jacrev(lambda q: predict(w, b, q).sum(0))(xb),
        "jacrev_chunked": lambda: tf.jacrev(predict, argnums=2, chunk_size=2)(w, b, xx),
        "model_hessian": lambda: tf.hessian(
            lambda p: tf.functional_call(model, p, (data,)).pow(2).sum()
        )(pd),
        "vjp": lambda: tf.vjp(lambda a, c: (a * c, a + c), xx, b)[1]((T.ones(5), T.ones(5))),
        "jvp_aux": lambda: tf.jvp(lambda q: (q.sin(), q.cos()), (xx,), (T.ones(5),), has_aux=True),
        "linearize": lambda: tf.linearize(lambda a, c: a * c.exp(), xx, b)[1](xx, b),
        "vmap_out_dims": lambda: tf.vmap(lambda r: (r, r.sum()), out_dims=(1, 0))(t(3, 4)),
        "vmap_nested_in_dims": lambda: tf.vmap(
            lambda d: d["x"] + d["y"], in_dims=({"x": 0, "y": None},)
        )({"x": t(3, 4), "y": t(4)}),
        "vmap_hessian": lambda: tf.vmap(tf.hessian(lambda q: q.sin().sum()))(t(2, 3)),
        "jacrev_of_vmap": lambda: tf.jacrev(tf.vmap(T.sin))(t(2, 3)),
    }


def _flat(out):
    if isinstance(out, dict):
        return [a for k in sorted(out) for a in _flat(out[k])]
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _flat(o)]
    return [out.detach().numpy()]


@pytest.mark.parametrize("name", list(_doc_programs(ember)))
def test_documented_uses_against_torch(name):
    torch = pytest.importorskip("torch")
    got = _flat(_doc_programs(ember)[name]())
    want = _flat(_doc_programs(torch)[name]())
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


# -- index_put under vmap (indexed assignment through __setitem__'s rule)


def _index_put_programs(T):
    x = T.tensor(np.arange(12.0).reshape(3, 4))
    i, i2 = T.tensor([0, 1, 3]), T.tensor([[0, 2], [1, 1], [3, 0]])
    v = T.tensor([[1.0], [2.0], [3.0]], dtype=T.float64)
    vmap = T.func.vmap
    return {
        "batched_index": lambda: vmap(lambda r, j: r.index_put((j,), T.tensor(-1.0).double()))(
            x, i
        ),
        "batched_index_values": lambda: vmap(
            lambda r, j: r.index_put((j,), T.tensor([7.0, 8.0]).double())
        )(x, i2),
        "unbatched_index": lambda: vmap(
            lambda r: r.index_put((i,), T.tensor([5.0, 6.0, 7.0]).double())
        )(x),
        "in_place": lambda: vmap(lambda r, w: r.clone().index_put_((T.tensor([1]),), w))(x, v),
        "unbatched_self": lambda: vmap(
            lambda w: T.zeros(4, dtype=w.dtype).index_put((T.tensor([2]),), w)
        )(v),
    }


@pytest.mark.parametrize("name", list(_index_put_programs(ember)))
def test_index_put_under_vmap_equals_a_loop(name):
    got = _index_put_programs(ember)[name]().numpy()
    x = np.arange(12.0).reshape(3, 4)
    want = {
        "batched_index": lambda: np.where(np.eye(4)[[0, 1, 3]] > 0, -1.0, x),
        "batched_index_values": lambda: np.array([[7.0, 1, 8, 3], [4, 8, 6, 7], [8, 9, 10, 7]]),
        "unbatched_index": lambda: np.array([[5.0, 6, 2, 7], [5, 6, 6, 7], [5, 6, 10, 7]]),
        "in_place": lambda: np.array([[0.0, 1, 2, 3], [4, 2, 6, 7], [8, 3, 10, 11]]),
        "unbatched_self": lambda: np.array([[0.0, 0, 1, 0], [0, 0, 2, 0], [0, 0, 3, 0]]),
    }[name]()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(_index_put_programs(ember)))
def test_index_put_under_vmap_against_torch(name):
    torch = pytest.importorskip("torch")
    got = _index_put_programs(ember)[name]().numpy()
    np.testing.assert_array_equal(got, _index_put_programs(torch)[name]().numpy())
