"""torch names that ember lacked (session 12): Tensor methods and properties, the multi-layer
recurrent functions with flat weights (lstm, gru, rnn_tanh, rnn_relu), SyncBatchNorm's
statistics functions, lobpcg, while_loop, SymFloat/SymBool and the size constraints, the legacy
sparse products, nn.quantizable and NLLLoss2d. Each against torch where torch computes it on
the CPU, else against numpy or an identity with ember's own ops."""

import warnings

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(12)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def E(a):
    return ember.tensor(np.asarray(a))


def close(a, b, tol=1e-4):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# -- Tensor


SPARSE_ACCESSORS = [
    "indices",
    "values",
    "coalesce",
    "is_coalesced",
    "crow_indices",
    "col_indices",
    "ccol_indices",
    "row_indices",
]


@pytest.mark.parametrize("name", SPARSE_ACCESSORS)
def test_sparse_accessors_on_a_dense_tensor_raise_as_torch(name):
    x = ember.randn(3, 4)
    with pytest.raises(RuntimeError) as e:
        getattr(x, name)()
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as t:
        getattr(torch.randn(3, 4), name)()
    assert str(e.value) == str(t.value)


def test_sparse_accessors_still_work_on_sparse_tensors():
    s = E([[0.0, 1.0], [2.0, 0.0]]).to_sparse()
    assert s.indices().tolist() == [[0, 1], [1, 0]]
    assert s.values().tolist() == [1.0, 2.0]
    assert s.coalesce().is_coalesced()


def test_device_queries_and_constants():
    x = ember.randn(2)
    for name in ("is_ipu", "is_maia", "is_mkldnn", "is_mtia", "is_vulkan", "is_xla"):
        assert getattr(x, name) is False
    assert x.is_distributed() is False
    assert x.name is None
    assert x.grad_dtype == x.dtype and x.int().grad_dtype == ember.int32
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert x.volatile is False
    with pytest.raises(RuntimeError, match="not linked with support for ipu"):
        x.ipu()
    with pytest.raises(AssertionError, match="XPU"):
        x.xpu()
    with pytest.raises(AssertionError, match="MTIA"):
        x.mtia()
    with pytest.raises(NotImplementedError, match="to_padded_tensor"):
        x.to_padded_tensor(0.0)
    with pytest.raises(NotImplementedError, match="sparse_resize_"):
        x.sparse_resize_((2,), 1, 0)
    with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
        x.reinforce(1.0)
    assert x.storage_type() is type(x.storage())


def test_is_set_to_and_slice_inverse_match_torch():
    torch = pytest.importorskip("torch")
    for m in (ember, torch):
        x = m.arange(12.0).reshape(3, 4)
        assert x.is_set_to(x)
        assert not x.is_set_to(x.view(4, 3))
        assert not x.is_set_to(x.clone())
        assert not x[1:].is_set_to(x)
    base_e = ember.arange(24.0).reshape(6, 4)
    base_t = torch.arange(24.0).reshape(6, 4)
    got = base_e[::2].slice_inverse(base_e, 0, 0, 6, 2)
    want = base_t[::2].slice_inverse(base_t, 0, 0, 6, 2)
    close(got, want.numpy())
    assert got._storage_ptr() == base_e._storage_ptr()
    close(ember.slice_inverse(base_e[1:], base_e, 0, 1), base_e)


def test_resize_module_load_map2_match_torch():
    torch = pytest.importorskip("torch")
    a = rand(3, 4)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        got = E(a).resize(2, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.tensor(a).resize(2, 6)
        with pytest.raises(RuntimeError) as t:
            torch.tensor(a).resize(5)
        with pytest.raises(RuntimeError) as e:
            E(a).resize(5)
    close(got, want.numpy())
    assert str(e.value) == str(t.value)
    # resize is differentiable
    x = E(a).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.resize(12).sum().backward()
    close(x.grad, np.ones((3, 4)))

    p, o = E(rand(3)), E(rand(3))
    assert p.module_load(o, assign=True) is not o
    close(p.module_load(o, assign=True), o)
    loaded = p.module_load(o)
    close(loaded, o)
    close(p, o)  # copied in place

    x, y, z = rand(2, 3), rand(3), rand(2, 1)
    fn = lambda a, b, c: a * b + c  # noqa: E731
    got = E(x).map2_(E(y), E(z), fn)
    want = torch.tensor(x).map2_(torch.tensor(y), torch.tensor(z), fn)
    close(got, want.numpy())


def test_smm_sspaddmm_spmm_match_torch():
    torch = pytest.importorskip("torch")
    a = rand(4, 5) * (RNG.random((4, 5)) < 0.4)
    b, c = rand(5, 3), rand(4, 3) * (RNG.random((4, 3)) < 0.5)
    es, ts = E(a).to_sparse(), torch.tensor(a).to_sparse()
    got = es.smm(E(b))
    assert got.is_sparse
    close(got.to_dense(), ts.smm(torch.tensor(b)).to_dense().numpy())
    close(ember.smm(es, E(b)).to_dense(), torch.smm(ts, torch.tensor(b)).to_dense().numpy())
    ec, tc = E(c).to_sparse(), torch.tensor(c).to_sparse()
    got = ec.sspaddmm(es, E(b), beta=0.5, alpha=2.0)
    want = tc.sspaddmm(ts, torch.tensor(b), beta=0.5, alpha=2.0)
    close(got.to_dense(), want.to_dense().numpy())
    close(
        ember.sspaddmm(ec, es, E(b)).to_dense(), torch.sspaddmm(tc, ts, torch.tensor(b)).to_dense()
    )
    close(ember.spmm(es, E(b)), torch.spmm(ts, torch.tensor(b)).numpy())
    close(ember.dsmm(es, E(b)), torch.dsmm(ts, torch.tensor(b)).numpy())
    got = ember.hspmm(es, E(b))
    assert got.is_sparse
    close(got.to_dense(), torch.hspmm(ts, torch.tensor(b)).to_dense().numpy())
    with pytest.raises(RuntimeError, match="can only be called on sparse tensors"):
        E(a).smm(E(b))


# -- recurrent functions with flat weights


def _flat(m):
    return [E(p.detach().numpy()) for p in m._flat_weights]


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_flat_weight_rnn_functions_match_torch(kind, bidirectional, batch_first, bias):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(kind, torch.nn.RNN)
    kw = {"nonlinearity": kind[4:]} if kind.startswith("rnn") else {}
    m = module(
        5, 6, num_layers=2, bidirectional=bidirectional, batch_first=batch_first, bias=bias, **kw
    )
    x = rand(3, 4, 5)
    d = 2 if bidirectional else 1
    h0 = rand(2 * d, 3 if batch_first else 4, 6)
    args = (bias, 2, 0.0, False, bidirectional, batch_first)
    if kind == "lstm":
        c0 = rand(*h0.shape)
        want = torch.lstm(
            torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)), m._flat_weights, *args
        )
        got = ember.lstm(E(x), (E(h0), E(c0)), _flat(m), *args)
    else:
        want = getattr(torch, kind)(torch.tensor(x), torch.tensor(h0), m._flat_weights, *args)
        got = getattr(ember, kind)(E(x), E(h0), _flat(m), *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(g, w.detach().numpy())


def test_lstm_with_projection_and_gradients_match_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    m = torch.nn.LSTM(5, 7, num_layers=2, proj_size=3)
    x, h0, c0 = rand(4, 2, 5), rand(2, 2, 3), rand(2, 2, 7)
    tx = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.lstm(
            tx,
            (torch.tensor(h0), torch.tensor(c0)),
            m._flat_weights,
            True,
            2,
            0.0,
            False,
            False,
            False,
        )
    ex = E(x).requires_grad_()
    got = ember.lstm(ex, (E(h0), E(c0)), _flat(m), True, 2, 0.0, False, False, False)
    for g, w in zip(got, want):
        close(g, w.detach().numpy())
    want[0].sum().backward()
    got[0].sum().backward()
    close(ex.grad, tx.grad.numpy())


def test_flat_weight_rnn_errors():
    with pytest.raises(RuntimeError, match="expected 4 weights"):
        ember.gru(
            ember.randn(3, 2, 4),
            ember.zeros(1, 2, 5),
            [ember.randn(15, 4)],
            True,
            1,
            0.0,
            False,
            False,
            False,
        )
    with pytest.raises(NotImplementedError, match="packed-sequence"):
        ember.lstm(
            ember.randn(6, 4),
            ember.tensor([3, 2, 1]),
            (ember.zeros(1, 3, 5),),
            [],
            True,
            1,
            0.0,
            False,
            False,
        )


# -- SyncBatchNorm's statistics (CUDA-only in torch except update_stats: checked against
# F.batch_norm and numpy)


def test_batch_norm_stats_and_elemt_equal_batch_norm():
    torch = pytest.importorskip("torch")
    x, w, b = rand(6, 3, 4, 5), rand(3), rand(3)
    mean, invstd = ember.batch_norm_stats(E(x), 1e-5)
    close(mean, x.mean((0, 2, 3)), 1e-5)
    close(invstd, 1 / np.sqrt(x.var((0, 2, 3)) + 1e-5))
    got = ember.batch_norm_elemt(E(x), E(w), E(b), mean, invstd, 1e-5)
    want = torch.nn.functional.batch_norm(
        torch.tensor(x), None, None, torch.tensor(w), torch.tensor(b), True, 0.1, 1e-5
    )
    close(got, want.numpy())


def test_batch_norm_gather_stats_combines_processes():
    torch = pytest.importorskip("torch")
    x = rand(6, 3, 4, 5)
    m1, i1 = ember.batch_norm_stats(E(x[:2]), 1e-5)
    m2, i2 = ember.batch_norm_stats(E(x[2:]), 1e-5)
    rm, rv = ember.zeros(3), ember.ones(3)
    gm, gi = ember.batch_norm_gather_stats_with_counts(
        E(x), ember.stack([m1, m2]), ember.stack([i1, i2]), rm, rv, 0.1, 1e-5, E([40.0, 80.0])
    )
    close(gm, x.mean((0, 2, 3)))
    close(gi, 1 / np.sqrt(x.var((0, 2, 3)) + 1e-5))
    trm, trv = torch.zeros(3), torch.ones(3)
    torch.nn.functional.batch_norm(torch.tensor(x), trm, trv, None, None, True, 0.1, 1e-5)
    close(rm, trm.numpy())
    close(rv, trv.numpy())
    # equal counts: batch_norm_gather_stats
    m3, i3 = ember.batch_norm_stats(E(x[:3]), 1e-5)
    m4, i4 = ember.batch_norm_stats(E(x[3:]), 1e-5)
    gm, gi = ember.batch_norm_gather_stats(
        E(x), ember.stack([m3, m4]), ember.stack([i3, i4]), None, None, 0.1, 1e-5, 60
    )
    close(gm, x.mean((0, 2, 3)))
    close(gi, 1 / np.sqrt(x.var((0, 2, 3)) + 1e-5))


def test_batch_norm_update_stats_matches_torch():
    torch = pytest.importorskip("torch")
    x = rand(6, 3, 4)
    rm, rv = ember.zeros(3), ember.ones(3)
    trm, trv = torch.zeros(3), torch.ones(3)
    got = ember.batch_norm_update_stats(E(x), rm, rv, 0.1)
    want = torch.batch_norm_update_stats(torch.tensor(x), trm, trv, 0.1)
    for g, w in zip(list(got) + [rm, rv], list(want) + [trm, trv]):
        close(g, w.numpy())


def test_batch_norm_backward_reduce_and_elemt_equal_autograd():
    torch = pytest.importorskip("torch")
    x, w, b, g = rand(6, 3, 4, 5), rand(3), rand(3), rand(6, 3, 4, 5)
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    torch.nn.functional.batch_norm(tx, None, None, tw, tb, True, 0.1, 1e-5).backward(
        torch.tensor(g)
    )
    mean, invstd = ember.batch_norm_stats(E(x), 1e-5)
    sum_dy, sum_dy_xmu, gw, gb = ember.batch_norm_backward_reduce(
        E(g), E(x), mean, invstd, E(w), True, True, True
    )
    close(gw, tw.grad.numpy())
    close(gb, tb.grad.numpy())
    count = ember.tensor([72, 48], dtype=ember.int32)
    gx = ember.batch_norm_backward_elemt(E(g), E(x), mean, invstd, E(w), sum_dy, sum_dy_xmu, count)
    close(gx, tx.grad.numpy())
    none = ember.batch_norm_backward_reduce(E(g), E(x), mean, invstd, E(w), False, False, False)
    assert none == (None, None, None, None)


# -- lobpcg


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("generalized", [False, True])
def test_lobpcg_matches_torch(largest, generalized):
    torch = pytest.importorskip("torch")
    m = RNG.standard_normal((40, 40))
    a = m @ m.T + 40 * np.eye(40)
    bm = RNG.standard_normal((40, 40))
    b = bm @ bm.T / 40 + np.eye(40)
    kw_t = {"k": 3, "largest": largest}
    kw_e = dict(kw_t)
    if generalized:
        kw_t["B"], kw_e["B"] = torch.tensor(b), E(b)
    want_e, _ = torch.lobpcg(torch.tensor(a), **kw_t)
    got_e, got_x = ember.lobpcg(E(a), **kw_e)
    close(got_e, want_e.numpy(), 1e-6)
    bn = b if generalized else np.eye(40)
    x = got_x.numpy()
    np.testing.assert_allclose(a @ x, bn @ x * got_e.numpy(), atol=1e-4)
    np.testing.assert_allclose(x.T @ bn @ x, np.eye(3), atol=1e-8)


def test_lobpcg_batched_and_errors():
    m = RNG.standard_normal((2, 30, 30))
    a = m @ m.transpose(0, 2, 1) + 30 * np.eye(30)
    e, x = ember.lobpcg(E(a), k=2)
    assert tuple(e.shape) == (2, 2) and tuple(x.shape) == (2, 30, 2)
    for i in range(2):
        close(e[i], np.sort(np.linalg.eigvalsh(a[i]))[::-1][:2], 1e-6)
    with pytest.raises(ValueError, match="not applicable"):
        ember.lobpcg(ember.eye(5, dtype=ember.float64), k=2)


# -- control flow and symbolic numbers


def test_while_loop_matches_torch():
    torch = pytest.importorskip("torch")
    got = ember.while_loop(
        lambda i, x: i < 5, lambda i, x: (i + 1, x * 2), (ember.tensor(0), ember.ones(2))
    )
    want = torch.while_loop(
        lambda i, x: i < 5, lambda i, x: (i + 1, x * 2), (torch.tensor(0), torch.ones(2))
    )
    assert int(got[0]) == int(want[0])
    close(got[1], want[1].numpy())
    with pytest.raises(RuntimeError, match="keep each carried tensor's shape"):
        ember.while_loop(lambda x: x.sum() < 10, lambda x: (ember.cat([x, x]),), (ember.ones(2),))


def test_sym_types_and_constraints_as_torch():
    torch = pytest.importorskip("torch")
    for m in (ember, torch):
        assert not isinstance(2.5, m.SymFloat) and not isinstance(True, m.SymBool)
    f, b = ember.SymFloat(2.5), ember.SymBool(True)
    assert isinstance(f, ember.SymFloat) and isinstance(b, ember.SymBool)
    assert float(f) + 1 == 3.5 and f * 2 == 5.0 and f.as_integer_ratio() == (5, 2) and bool(b)
    with pytest.raises(RuntimeError) as e:
        ember.sym_constrain_range(5, min=0, max=3)
    with pytest.raises(RuntimeError) as t:
        torch.sym_constrain_range(5, min=0, max=3)
    assert str(e.value) == str(t.value)
    assert ember.sym_constrain_range(2, min=0, max=3) is None
    assert ember.sym_constrain_range_for_size(5, max=9) is None
    assert ember.sym_fresh_size(7) == 7
    assert ember.legacy_contiguous_format is ember.contiguous_format
    assert ember.thread_safe_generator() is None


# -- nn


@pytest.mark.parametrize("layers,bidirectional", [(2, False), (1, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_quantizable_lstm_matches_torch(layers, bidirectional, batch_first):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm = torch.nn.quantizable.LSTM(
        3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first
    )
    em = ember.nn.quantizable.LSTM(
        3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first
    )
    em.load_state_dict({k: E(v.numpy()) for k, v in tm.state_dict().items()})
    x = rand(5, 2, 3)
    d, n = (2 if bidirectional else 1), (5 if batch_first else 2)
    h0, c0 = rand(layers * d, n, 4), rand(layers * d, n, 4)
    for hidden_t, hidden_e in (
        (None, None),
        ((torch.tensor(h0), torch.tensor(c0)), (E(h0), E(c0))),
    ):
        yt, (ht, ct) = tm(torch.tensor(x), hidden_t)
        ye, (he, ce) = em(E(x), hidden_e)
        for g, w in ((ye, yt), (he, ht), (ce, ct)):
            close(g, w.detach().numpy())


def test_quantizable_from_float_and_cell():
    fl = ember.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    q = ember.nn.quantizable.LSTM.from_float(fl)
    x = ember.randn(5, 2, 3)
    close(q(x)[0], fl(x)[0])
    cell = ember.nn.quantizable.LSTMCell.from_params(
        fl.weight_ih_l0, fl.weight_hh_l0, fl.bias_ih_l0, fl.bias_hh_l0
    )
    h, c = ember.lstm_cell(
        x[0],
        (ember.zeros(2, 4), ember.zeros(2, 4)),
        fl.weight_ih_l0,
        fl.weight_hh_l0,
        fl.bias_ih_l0,
        fl.bias_hh_l0,
    )
    hq, cq = cell(x[0])
    close(hq, h)
    close(cq, c)
    mha = ember.nn.MultiheadAttention(8, 2)
    qm = ember.nn.quantizable.MultiheadAttention.from_float(mha)
    q_in = ember.randn(3, 1, 8)
    close(qm(q_in, q_in, q_in)[0], mha(q_in, q_in, q_in)[0])


def test_nll_loss_2d_is_nll_loss_with_a_warning():
    torch = pytest.importorskip("torch")
    x, t = rand(2, 3, 4, 4), RNG.integers(0, 3, (2, 4, 4))
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        loss = ember.nn.NLLLoss2d()
    assert isinstance(loss, ember.nn.NLLLoss)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.nn.NLLLoss2d()(torch.tensor(x), torch.tensor(t))
    close(loss(E(x), E(t)), want.numpy())
