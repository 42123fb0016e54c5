"""torch's names that programs call and ember lacked (issue 16, drop-in running): each against
torch where it is installed, else against numpy or hand-computed values."""

import numpy as np
import pytest

import ember


def _np(t):
    return t.detach().numpy()


def _torch():
    return pytest.importorskip("torch")


def _pair(shape, seed=0):
    """The same random float32 data as an ember tensor and (when torch is there) a torch one."""
    arr = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return arr, ember.tensor(arr)


# ---- runtime names ---------------------------------------------------------------------------


def test_error_classes_and_grad_scaler():
    assert ember.GradScaler is ember.amp.GradScaler
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert issubclass(ember.AcceleratorError, RuntimeError)
    with pytest.raises(RuntimeError):
        raise ember.OutOfMemoryError("no memory")


def test_stream_and_event_on_cpu_as_torch():
    s = ember.Stream()
    assert s.query() and s.synchronize() is None and s.wait_stream(s) is None
    assert s.device == ember.device("cpu") and s.stream_id == 0 and not s.is_capturing()
    with s:
        pass
    e = ember.Event()
    assert e.query() and e.synchronize() is None and e.wait() is None
    with pytest.raises(RuntimeError, match="doesn't support events"):
        e.record()
    with pytest.raises(RuntimeError, match="doesn't support events"):
        s.record_event()
    with pytest.raises(ValueError, match="enable_timing"):
        e.elapsed_time(e)
    with pytest.raises(RuntimeError, match="not linked with support for cuda"):
        ember.Stream(device="cuda")
    torch = _torch()
    assert repr(s) == repr(torch.Stream())
    assert repr(e) == repr(torch.Event())
    assert repr(ember.Event(enable_timing=True)) == repr(torch.Event(enable_timing=True))


def test_sym_helpers_match_torch():
    cases = [
        ("sym_int", (3.7,)),
        ("sym_int", (-3.7,)),
        ("sym_float", (3,)),
        ("sym_max", (2, 3.0)),
        ("sym_max", (5, 3)),
        ("sym_min", (2, 3)),
        ("sym_min", (2.5, 3)),
        ("sym_not", (True,)),
        ("sym_ite", (False, 1, 2)),
        ("sym_sum", ([1, 2, 3],)),
        ("sym_sqrt", (16,)),
    ]
    expected = [3, -3, 3.0, 3.0, 5, 2, 2.5, False, 2, 6, 4.0]
    for (name, args), want in zip(cases, expected):
        got = getattr(ember, name)(*args)
        assert got == want and type(got) is type(want), name
    torch = _torch()
    for name, args in cases:
        want = getattr(torch, name)(*args)
        got = getattr(ember, name)(*args)
        assert got == want and type(got) is type(want), name


def test_sym_int_is_the_capture_class():
    from ember._dynamo.capture import SymInt

    assert not isinstance(3, ember.SymInt)
    assert issubclass(SymInt, ember.SymInt)

    def f(x):
        assert isinstance(x.shape[0], ember.SymInt) == seen_symbolic
        return x * 2

    # under dynamic capture the sizes are SymInts; in eager code they are ints
    seen_symbolic = False
    f(ember.ones(3))
    seen_symbolic = True
    compiled = ember.compile(f, dynamic=True)
    np.testing.assert_array_equal(_np(compiled(ember.ones(4))), np.full(4, 2.0))


def test_autocast_cpu_queries():
    assert ember.get_autocast_cpu_dtype() == ember.get_autocast_dtype("cpu")
    assert not ember.is_autocast_cpu_enabled()
    with ember.autocast("cpu"):
        assert ember.is_autocast_cpu_enabled()
    ember.set_autocast_cpu_dtype(ember.float16)
    try:
        assert ember.get_autocast_cpu_dtype() == ember.float16
    finally:
        ember.set_autocast_cpu_dtype(ember.bfloat16)
    ember.set_autocast_cpu_enabled(True)
    assert ember.is_autocast_enabled("cpu")
    ember.set_autocast_cpu_enabled(False)
    assert not ember.is_autocast_enabled("cpu")
    assert ember.autocast_increment_nesting() == 1
    assert ember.autocast_decrement_nesting() == 0


def test_flags_and_utilities(tmp_path):
    assert ember.has_lapack and ember.has_spectral and ember.compiled_with_cxx11_abi()
    assert ember.set_flush_denormal(True) in (True, False)
    ember.set_flush_denormal(False)
    t = ember.arange(4.0)
    assert ember.is_storage(t.untyped_storage()) and ember.is_storage(t.storage())
    assert not ember.is_storage(t)
    assert ember.get_device_module("cpu") is ember.cpu
    assert ember.get_device_module(ember.device("cpu")) is ember.cpu
    assert ember.init_num_threads() is None
    assert ember.Tag.pointwise.name == "pointwise"


def test_from_file_copy_and_shared(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    t = ember.from_file(str(path), size=6, dtype=ember.float32)
    np.testing.assert_array_equal(_np(t), np.arange(6, dtype=np.float32))
    shared = ember.from_file(str(path), shared=True, size=6, dtype=ember.float32)
    shared[0] = 42.0
    del shared
    assert np.fromfile(path, dtype=np.float32)[0] == 42.0
    with pytest.raises(RuntimeError, match="from_file"):
        ember.from_file(str(path), size=100, dtype=ember.float32)
    torch = _torch()
    want = torch.from_file(str(path), size=6, dtype=torch.float32)
    np.testing.assert_array_equal(_np(ember.from_file(str(path), size=6)), want.numpy())


def test_functional_module_and_removed_functions():
    import ember.functional as Fn

    assert Fn.einsum is ember.einsum and "meshgrid" in Fn.__all__
    for name in ["solve", "lstsq", "eig", "symeig", "matrix_rank"]:
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            getattr(ember, name)(ember.eye(2), ember.eye(2))


# ---- *_copy view ops and storage helpers ------------------------------------------------------


def test_view_copies_match_views_and_own_memory():
    arr, x = _pair((2, 3, 4))
    cases = {
        "permute_copy": (lambda t: ember.permute_copy(t, (2, 0, 1)), arr.transpose(2, 0, 1)),
        "t_copy": (lambda t: ember.t_copy(t[0]), arr[0].T),
        "transpose_copy": (lambda t: ember.transpose_copy(t, 0, 2), arr.transpose(2, 1, 0)),
        "select_copy": (lambda t: ember.select_copy(t, 1, 2), arr[:, 2]),
        "slice_copy": (lambda t: ember.slice_copy(t, 2, 1, 4, 2), arr[:, :, 1:4:2]),
        "diagonal_copy": (lambda t: ember.diagonal_copy(t[0]), np.diagonal(arr[0])),
        "expand_copy": (lambda t: ember.expand_copy(t[:1], (3, 3, 4)), np.repeat(arr[:1], 3, 0)),
        "unsqueeze_copy": (lambda t: ember.unsqueeze_copy(t, 1), arr[:, None]),
        "squeeze_copy": (lambda t: ember.squeeze_copy(t[:1]), arr[0]),
        "view_copy": (lambda t: ember.view_copy(t, (6, 4)), arr.reshape(6, 4)),
        "alias_copy": (lambda t: ember.alias_copy(t), arr),
        "detach_copy": (lambda t: ember.detach_copy(t), arr),
        "as_strided_copy": (lambda t: ember.as_strided_copy(t, (2, 2), (1, 2)), None),
        "unfold_copy": (lambda t: ember.unfold_copy(t, 2, 2, 2), None),
    }
    for name, (fn, want) in cases.items():
        out = fn(x)
        assert out.is_contiguous(), name
        assert out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr(), name
        if want is not None:
            np.testing.assert_array_equal(_np(out), want, err_msg=name)
    pieces = ember.split_copy(ember.arange(5), 2)
    assert [p.tolist() for p in pieces] == [[0, 1], [2, 3], [4]]
    assert [p.tolist() for p in ember.split_with_sizes_copy(ember.arange(5), [1, 4])] == [
        [0],
        [1, 2, 3, 4],
    ]
    assert [p.tolist() for p in ember.unbind_copy(ember.arange(4).view(2, 2))] == [[0, 1], [2, 3]]
    torch = _torch()
    tx = torch.tensor(arr)
    np.testing.assert_array_equal(
        _np(ember.as_strided_copy(x, (2, 2), (1, 2), 1)),
        torch.as_strided_copy(tx, (2, 2), (1, 2), 1).numpy(),
    )
    np.testing.assert_array_equal(
        _np(ember.unfold_copy(x, 2, 2, 1)), torch.unfold_copy(tx, 2, 2, 1).numpy()
    )


def test_view_copy_grad():
    x = ember.randn(3, 4, requires_grad=True)
    (ember.permute_copy(x, (1, 0)) * ember.arange(4.0).unsqueeze(1)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.tile(np.arange(4.0), (3, 1)))


def test_as_strided_inplace_and_scatter():
    x = ember.arange(6.0)
    y = ember.as_strided_(x, (2, 2), (1, 2), 1)
    assert y is x and x.shape == (2, 2) and x.stride() == (1, 2)
    np.testing.assert_array_equal(_np(x), [[1.0, 3.0], [2.0, 4.0]])
    out = ember.as_strided_scatter(ember.zeros(6), ember.ones(2, 2), (2, 2), (1, 2))
    np.testing.assert_array_equal(_np(out), [1, 1, 1, 1, 0, 0])
    with pytest.raises(RuntimeError, match="as_strided_scatter"):
        ember.as_strided_scatter(ember.zeros(6), ember.ones(3), (2, 2), (1, 2))


def test_empty_permuted_nonzero_static_resize_as():
    e = ember.empty_permuted((2, 3, 4), (0, 2, 1))
    assert e.shape == (2, 3, 4) and e.stride() == (12, 1, 3)
    nz = ember.nonzero_static(ember.tensor([0, 1, 1]), size=4)
    assert nz.tolist() == [[1], [2], [-1], [-1]]
    assert ember.nonzero_static(ember.tensor([[0, 1], [1, 1]]), size=2).tolist() == [[0, 1], [1, 0]]
    assert ember.nonzero_static(ember.tensor([1, 1]), size=3, fill_value=7).tolist() == [
        [0],
        [1],
        [7],
    ]
    r = ember.zeros(2)
    assert ember.resize_as_(r, ember.zeros(3, 2)).shape == (3, 2)
    parts = ember.unsafe_split_with_sizes(ember.arange(5), [2, 3])
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3, 4]]
    torch = _torch()
    assert (
        ember.empty_permuted((2, 3, 4), (2, 0, 1)).stride()
        == torch.empty_permuted((2, 3, 4), (2, 0, 1)).stride()
    )


# ---- ATen-named nn ops --------------------------------------------------------------------


def test_aten_losses_match_torch():
    torch = _torch()
    a, x = _pair((4, 5), 1)
    b, y = _pair((4, 5), 2)
    tgt = np.sign(np.random.default_rng(3).standard_normal((4, 5))).astype(np.float32)
    tgt1 = np.sign(np.random.default_rng(4).standard_normal(4)).astype(np.float32)
    ta, tb, tt, tt1 = map(torch.tensor, (a, b, tgt, tgt1))
    et, et1 = ember.tensor(tgt), ember.tensor(tgt1)
    sig = 1 / (1 + np.exp(-b))
    for red in (None, 0, 1, 2):
        extra = () if red is None else (red,)
        pairs = [
            (
                ember.binary_cross_entropy_with_logits(x, ember.tensor(sig), None, None, *extra),
                torch.binary_cross_entropy_with_logits(ta, torch.tensor(sig), None, None, *extra),
            ),
            (
                ember.kl_div(x, y.exp(), *extra),
                torch.kl_div(ta, tb.exp(), *extra),
            ),
            (
                ember.hinge_embedding_loss(x, et, 1.0, *extra),
                torch.hinge_embedding_loss(ta, tt, 1.0, *extra),
            ),
            (
                ember.margin_ranking_loss(x, y, et, 0.1, *extra),
                torch.margin_ranking_loss(ta, tb, tt, 0.1, *extra),
            ),
            (
                ember.cosine_embedding_loss(x, y, et1, 0.0, *extra),
                torch.cosine_embedding_loss(ta, tb, tt1, 0.0, *extra),
            ),
            (
                ember.triplet_margin_loss(x, y, x.flip(0), 1.0, 2, 1e-6, False, *extra),
                torch.triplet_margin_loss(ta, tb, ta.flip(0), 1.0, 2, 1e-6, False, *extra),
            ),
        ]
        if red is not None:
            pairs.append(
                (
                    ember.poisson_nll_loss(x, y.abs(), True, False, 1e-8, red),
                    torch.poisson_nll_loss(ta, tb.abs(), True, False, 1e-8, red),
                )
            )
        for i, (got, want) in enumerate(pairs):
            assert tuple(got.shape) == tuple(want.shape), (red, i)
            np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-5, atol=1e-6)
    lp = torch.randn(6, 2, 4).log_softmax(2)
    targets = torch.tensor([[1, 2], [1, 1]])
    for extra in ((), (0, 1), (0, 2)):
        want = torch.ctc_loss(lp, targets, [6, 6], [2, 2], *extra)
        got = ember.ctc_loss(
            ember.tensor(lp.numpy()), ember.tensor(targets.numpy()), [6, 6], [2, 2], *extra
        )
        np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-5)


def test_native_norms_and_dropout():
    torch = _torch()
    a, x = _pair((2, 3, 4), 5)
    w, b = np.ones(4, np.float32) * 2, np.ones(4, np.float32)
    got = ember.native_layer_norm(x, [4], ember.tensor(w), ember.tensor(b), 1e-5)
    want = torch.native_layer_norm(torch.tensor(a), [4], torch.tensor(w), torch.tensor(b), 1e-5)
    for g, t in zip(got, want):
        np.testing.assert_allclose(_np(g), t.detach().numpy(), rtol=1e-5, atol=1e-6)
    rm, rv = ember.zeros(3), ember.ones(3)
    trm, trv = torch.zeros(3), torch.ones(3)
    for training in (True, False):
        got = ember.native_batch_norm(x, None, None, rm, rv, training, 0.1, 1e-5)
        want = torch.native_batch_norm(torch.tensor(a), None, None, trm, trv, training, 0.1, 1e-5)
        for g, t in zip(got, want):
            assert tuple(g.shape) == tuple(t.shape)
            np.testing.assert_allclose(_np(g), t.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(rm), trm.numpy(), rtol=1e-5, atol=1e-6)
    got = ember.native_group_norm(x, None, None, 2, 3, 4, 1, 1e-5)
    want = torch.native_group_norm(torch.tensor(a), None, None, 2, 3, 4, 1, 1e-5)
    for g, t in zip(got, want):
        np.testing.assert_allclose(_np(g), t.numpy(), rtol=1e-5, atol=1e-6)
    out, mask = ember.native_dropout(x, 0.5, True)
    assert mask.dtype == ember.bool
    np.testing.assert_allclose(_np(out), np.where(_np(mask), a * 2, 0), rtol=1e-6)
    out, mask = ember.native_dropout(x, 0.5, False)
    assert bool(mask.all()) and out is not x
    np.testing.assert_array_equal(_np(out), a)


def test_cells_conv_grid_match_torch():
    torch = _torch()
    rng = np.random.default_rng(7)

    def r(*s):
        return rng.standard_normal(s).astype(np.float32)

    inp, h, c = r(3, 4), r(3, 5), r(3, 5)
    for name, g in (("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("gru_cell", 3), ("lstm_cell", 4)):
        w_ih, w_hh, b_ih, b_hh = r(g * 5, 4), r(g * 5, 5), r(g * 5), r(g * 5)
        args = (w_ih, w_hh, b_ih, b_hh)
        hx_e = (ember.tensor(h), ember.tensor(c)) if g == 4 else ember.tensor(h)
        hx_t = (torch.tensor(h), torch.tensor(c)) if g == 4 else torch.tensor(h)
        got = getattr(ember, name)(ember.tensor(inp), hx_e, *map(ember.tensor, args))
        want = getattr(torch, name)(torch.tensor(inp), hx_t, *map(torch.tensor, args))
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for ge, wt in zip(got, want):
            np.testing.assert_allclose(_np(ge), wt.numpy(), rtol=1e-5, atol=1e-5, err_msg=name)
    i, w, b = r(5, 2, 3), r(3, 3, 4), r(4)
    np.testing.assert_allclose(
        _np(ember.conv_tbc(ember.tensor(i), ember.tensor(w), ember.tensor(b), 1)),
        torch.conv_tbc(torch.tensor(i), torch.tensor(w), torch.tensor(b), 1).numpy(),
        rtol=1e-5,
        atol=1e-5,
    )
    i, w = r(1, 2, 5, 5), r(4, 2, 3, 3)
    for transposed in (False, True):
        wt = r(2, 4, 3, 3) if transposed else w
        args = ([2, 1], [1, 0], [1, 1], transposed, [1, 0] if transposed else [0, 0], 1)
        got = ember.convolution(ember.tensor(i), ember.tensor(wt), None, *args)
        want = torch.convolution(torch.tensor(i), torch.tensor(wt), None, *args)
        np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-4, atol=1e-5)
    theta = r(1, 2, 3) * 0.5
    grid_e = ember.affine_grid_generator(ember.tensor(theta), [1, 2, 4, 4], False)
    grid_t = torch.affine_grid_generator(torch.tensor(theta), [1, 2, 4, 4], False)
    np.testing.assert_allclose(_np(grid_e), grid_t.numpy(), rtol=1e-5, atol=1e-6)
    img = r(1, 2, 5, 5)
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            got = ember.grid_sampler(ember.tensor(img), grid_e, mode, pad, False)
            want = torch.grid_sampler(torch.tensor(img), grid_t, mode, pad, False)
            np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-4, atol=1e-5)


def test_embedding_renorm():
    w = np.random.default_rng(8).standard_normal((5, 3)).astype(np.float32) * 3
    got = ember.embedding_renorm_(ember.tensor(w), ember.tensor([0, 2, 2]), 1.0, 2.0)
    want = w.copy()
    for row in (0, 2):
        n = np.linalg.norm(want[row])
        if n > 1.0:
            want[row] *= 1.0 / (n + 1e-7)
    np.testing.assert_allclose(_np(got), want, rtol=1e-5)


# ---- math ----------------------------------------------------------------------------------


def test_norms_igamma():
    a, x = _pair((2, 3, 4), 9)
    np.testing.assert_allclose(
        _np(ember.frobenius_norm(x, [1, 2])), np.sqrt((a**2).sum((1, 2))), rtol=1e-5
    )
    np.testing.assert_allclose(
        _np(ember.nuclear_norm(x[0])), np.linalg.norm(a[0], "nuc"), rtol=1e-5
    )
    np.testing.assert_allclose(
        _np(ember.nuclear_norm(x, [1, 2])), [np.linalg.norm(m, "nuc") for m in a], rtol=1e-5
    )
    assert ember.norm_except_dim(x, 2, 0).shape == (2, 1, 1)
    np.testing.assert_allclose(
        _np(ember.norm_except_dim(x, 2, 0)).ravel(), np.sqrt((a**2).sum((1, 2))), rtol=1e-5
    )
    s, t = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([0.5, 2.0, 4.0])
    np.testing.assert_allclose(_np(ember.igamma(s, t) + ember.igammac(s, t)), [1, 1, 1], rtol=1e-6)
    torch = _torch()
    ts, tt = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 2.0, 4.0])
    np.testing.assert_allclose(_np(ember.igamma(s, t)), torch.igamma(ts, tt).numpy(), rtol=1e-5)
    np.testing.assert_allclose(_np(ember.igammac(s, t)), torch.igammac(ts, tt).numpy(), rtol=1e-5)


def test_geqrf_orgqr_ormqr():
    a, x = _pair((5, 3), 10)
    qr_a, tau = ember.geqrf(x)
    q = ember.orgqr(qr_a, tau)
    r = np.triu(_np(qr_a))[:3]
    np.testing.assert_allclose(_np(q) @ r, a, rtol=1e-4, atol=1e-5)
    c = ember.randn(5, 2)
    full_q = _np(ember.ormqr(qr_a, tau, ember.eye(5)))
    np.testing.assert_allclose(full_q.T @ full_q, np.eye(5), atol=1e-5)
    np.testing.assert_allclose(
        _np(ember.ormqr(qr_a, tau, c, True, True)), full_q.T @ _np(c), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        _np(ember.ormqr(qr_a, tau, c.T, False, False)), _np(c).T @ full_q, rtol=1e-4, atol=1e-5
    )
    torch = _torch()
    ta, ttau = torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(_np(qr_a), ta.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(tau), ttau.numpy(), rtol=1e-4, atol=1e-5)
    want = torch.ormqr(ta, ttau, torch.tensor(_np(c)), True, True)
    np.testing.assert_allclose(
        _np(ember.ormqr(qr_a, tau, c, True, True)), want.numpy(), rtol=1e-4, atol=1e-5
    )


def test_histogramdd_and_segment_reduce():
    a, x = _pair((50, 2), 11)
    hist, edges = ember.histogramdd(x, bins=[3, 4])
    want_h, want_e = np.histogramdd(a, bins=[3, 4])
    np.testing.assert_allclose(_np(hist), want_h)
    for e, w in zip(edges, want_e):
        np.testing.assert_allclose(_np(e), w, rtol=1e-6, atol=1e-6)
    data = ember.arange(6.0, requires_grad=True)
    lengths = ember.tensor([2, 0, 4])
    expect = {
        "sum": [1, 0, 14],
        "max": [1, -np.inf, 5],
        "min": [0, np.inf, 2],
        "prod": [0, 1, 120],
        "mean": [0.5, np.nan, 3.5],
    }
    for reduce, want in expect.items():
        np.testing.assert_allclose(_np(ember.segment_reduce(data, reduce, lengths=lengths)), want)
    offsets = ember.tensor([0, 2, 2, 6])
    ember.segment_reduce(data, "sum", offsets=offsets).sum().backward()
    np.testing.assert_allclose(_np(data.grad), np.ones(6))
    torch = _torch()
    th, te = torch.histogramdd(torch.tensor(a), bins=[3, 4])
    np.testing.assert_allclose(_np(hist), th.numpy())
    np.testing.assert_allclose(_np(edges[1]), te[1].numpy(), rtol=1e-6, atol=1e-6)
    for reduce in expect:
        for initial in (None, 2.0):
            want = torch.segment_reduce(
                torch.arange(6.0), reduce, lengths=torch.tensor([2, 0, 4]), initial=initial
            )
            got = ember.segment_reduce(data, reduce, lengths=lengths, initial=initial)
            np.testing.assert_allclose(_np(got), want.numpy(), err_msg=f"{reduce} {initial}")


# ---- Tensor methods ------------------------------------------------------------------------


def test_tensor_methods():
    a, x = _pair((2, 3), 12)
    assert x.cfloat().dtype == ember.complex64 and x.cdouble().dtype == ember.complex128
    np.testing.assert_allclose(_np(x.cfloat().real), a)
    s, t = ember.tensor([1.0, 2.0]), ember.tensor([0.5, 3.0])
    np.testing.assert_allclose(_np(s.igamma(t)), _np(ember.igamma(s, t)))
    np.testing.assert_allclose(_np(s.igammac(t)), _np(ember.igammac(s, t)))
    s2 = s.clone()
    s2.igamma_(t)
    np.testing.assert_allclose(_np(s2), _np(ember.igamma(s, t)))
    assert x.is_nested is False
    assert x.const_data_ptr() == x.data_ptr()
    assert x.record_stream(ember.Stream()) is None
    assert x.nonzero_static(size=8).shape == (8, 2)
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert x.resize_as(ember.zeros(3, 2)).shape == (3, 2)
    parts = ember.arange(5).unsafe_split_with_sizes([1, 4])
    assert [p.tolist() for p in parts] == [[0], [1, 2, 3, 4]]
    m = ember.randn(4, 3)
    qa, tau = m.geqrf()
    np.testing.assert_allclose(_np(qa.orgqr(tau)), _np(ember.orgqr(qa, tau)))
    np.testing.assert_allclose(
        _np(qa.ormqr(tau, ember.eye(4))), _np(ember.ormqr(qa, tau, ember.eye(4)))
    )
    y = ember.arange(6.0)
    assert y.as_strided_((3,), (2,)) is y and y.tolist() == [0.0, 2.0, 4.0]
    out = ember.zeros(4).as_strided_scatter(ember.ones(2), (2,), (2,))
    assert out.tolist() == [1.0, 0.0, 1.0, 0.0]
    A = ember.randn(3, 3) + 3 * ember.eye(3)
    LU, piv = ember.linalg.lu_factor(A)
    b = ember.randn(3, 2)
    np.testing.assert_allclose(_np(A @ b.lu_solve(LU, piv)), _np(b), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="deprecated since version 1.9"):
        x.solve(x)


def test_dim_order_matches_torch():
    x = ember.randn(2, 3, 4)
    cases = [x, x.permute(2, 0, 1), x.transpose(0, 1), ember.randn(1, 3, 1), x[:, :1]]
    want = [(0, 1, 2), (1, 2, 0), (1, 0, 2), (0, 1, 2), (0, 1, 2)]
    assert [c.dim_order() for c in cases] == want
    with pytest.raises(RuntimeError, match="unique dim order"):
        ember.randn(1, 3, 1).dim_order(ambiguity_check=True)
    torch = _torch()
    tx = torch.randn(2, 3, 4)
    tcases = [tx, tx.permute(2, 0, 1), tx.transpose(0, 1), torch.randn(1, 3, 1), tx[:, :1]]
    assert [c.dim_order() for c in tcases] == want


# ---- overrides, swap_tensors, assert_allclose -------------------------------------------------


class _Logged:
    """A tensor-like that records the functions offered to it."""

    seen = []

    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return ("handled", func.__name__)


class _Declines(_Logged):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def test_torch_function_helpers():
    from ember import overrides

    t = ember.ones(2)
    assert not overrides.has_torch_function((t, 1)) and overrides.has_torch_function(
        (t, _Logged(1))
    )
    assert overrides.has_torch_function_unary(
        _Logged(1)
    ) and not overrides.has_torch_function_unary(t)
    assert overrides.has_torch_function_variadic(t, _Logged(1))
    assert overrides.is_tensor_like(t) and overrides.is_tensor_like(_Logged(1))
    assert not overrides.is_tensor_like(1)

    def dispatcher(a, b=None):
        return (a, b)

    @overrides.wrap_torch_function(dispatcher)
    def scaled(a, b=None):
        return a * 2

    assert scaled(t).tolist() == [2.0, 2.0]
    assert scaled(_Logged(1)) == ("handled", "scaled")
    # subclasses first: _Declines (a subclass) is asked before _Logged, declines, _Logged takes it
    _Logged.seen.clear()
    assert overrides.handle_torch_function(scaled, (_Logged(1), _Declines(2)), 1) == (
        "handled",
        "scaled",
    )
    with pytest.raises(TypeError, match="no implementation found"):
        overrides.handle_torch_function(scaled, (_Declines(1),), 1)

    class Mode(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return ("mode", func(*args, **(kwargs or {})))

    with Mode():
        assert overrides.has_torch_function((t,))
        out = scaled(t)
    assert out[0] == "mode" and out[1].tolist() == [2.0, 2.0]


def test_overridable_listings():
    from ember import overrides

    assert overrides.resolve_name(ember.add) == "torch.add"
    assert overrides.resolve_name(ember.Tensor.add) == "torch.Tensor.add"
    assert overrides.resolve_name(ember.nn.functional.relu) == "torch.nn.functional.relu"
    assert overrides.resolve_name(ember.Tensor.shape.__get__) == "torch.Tensor.shape.__get__"
    assert overrides.resolve_name(len) is None
    table = overrides.get_overridable_functions()
    assert ember.add in table[ember] and ember.nn.functional.relu in table[ember.nn.functional]
    assert ember.Tensor.add in table[ember.Tensor]
    ignored = overrides.get_ignored_functions()
    assert ember.manual_seed in ignored and ember.add not in ignored
    dummies = overrides.get_testing_overrides()
    assert dummies[ember.add](ember.ones(1), 1) == -1
    assert overrides.is_tensor_method_or_property(ember.Tensor.add)
    assert not overrides.is_tensor_method_or_property(ember.add)
    torch = _torch()
    from torch import overrides as to

    for name in ("add", "matmul", "relu"):
        fn = getattr(ember, name)
        assert overrides.resolve_name(fn) == to.resolve_name(getattr(torch, name))


def test_swap_tensors():
    a = ember.ones(2, requires_grad=True)
    b = ember.zeros(3, dtype=ember.float64)
    a.tag = "a"
    ida, idb = id(a), id(b)
    ember.utils.swap_tensors(a, b)
    assert id(a) == ida and id(b) == idb
    assert a.dtype == ember.float64 and a.shape == (3,) and not a.requires_grad
    assert b.tolist() == [1.0, 1.0] and b.requires_grad and b.tag == "a"
    assert not hasattr(a, "tag")
    with pytest.raises(RuntimeError, match="leaf"):
        ember.utils.swap_tensors(b * 2, a)
    torch = _torch()
    ta, tb = torch.ones(2, requires_grad=True), torch.zeros(3, dtype=torch.float64)
    torch.utils.swap_tensors(ta, tb)
    assert (ta.dtype, tuple(ta.shape), ta.requires_grad) == (torch.float64, (3,), False)
    assert (tb.dtype, tuple(tb.shape), tb.requires_grad) == (torch.float32, (2,), True)


def test_assert_allclose():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        ember.testing.assert_allclose(ember.tensor([1.0, float("nan")]), [1.00001, float("nan")])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        ember.testing.assert_allclose(ember.tensor([1.0]), [1.1])
    with pytest.warns(FutureWarning):
        ember.testing.assert_allclose(ember.tensor([1, 2]), ember.tensor([1.0, 2.0]))


# ---- quasirandom ---------------------------------------------------------------------------


def test_sobol_engine_properties():
    from ember.quasirandom import SobolEngine

    e = SobolEngine(3)
    first = e.draw(4, dtype=ember.float64).numpy()
    np.testing.assert_array_equal(first[:, 0], [0.0, 0.5, 0.75, 0.25])  # van der Corput
    assert e.num_generated == 4
    pts = SobolEngine(6, scramble=True, seed=7).draw_base2(7).numpy()
    assert pts.shape == (128, 6) and (pts >= 0).all() and (pts < 1).all()
    for d in range(6):  # (0, m, s)-net: one point per interval of width 1/128 in each dimension
        assert len(set((pts[:, d] * 128).astype(int))) == 128
    again = SobolEngine(6, scramble=True, seed=7).draw_base2(7).numpy()
    np.testing.assert_array_equal(pts, again)
    eng = SobolEngine(2)
    eng.draw(3)
    with pytest.raises(ValueError, match="power of 2"):
        eng.draw_base2(2)
    with pytest.raises(ValueError, match="Supported range of dimensionality"):
        SobolEngine(0)
    a = SobolEngine(4).fast_forward(9).draw(5)
    b = SobolEngine(4).draw(14)[9:]
    np.testing.assert_array_equal(_np(a), _np(b))
    r = SobolEngine(2)
    x = _np(r.draw(5))
    np.testing.assert_array_equal(_np(r.reset().draw(5)), x)
    assert (
        repr(SobolEngine(2, scramble=True, seed=1))
        == "SobolEngine(dimension=2, scramble=True, seed=1)"
    )


def test_sobol_engine_equals_torch():
    torch = _torch()
    from ember.quasirandom import SobolEngine

    for dim in (1, 5, 300, 1111):
        e, t = SobolEngine(dim), torch.quasirandom.SobolEngine(dim)
        np.testing.assert_array_equal(_np(e.draw(33)), t.draw(33).numpy())
        e.fast_forward(7)
        t.fast_forward(7)
        got = e.draw(9, dtype=ember.float64)
        np.testing.assert_array_equal(_np(got), t.draw(9, dtype=torch.float64).numpy())
    e, t = SobolEngine(3), torch.quasirandom.SobolEngine(3)
    np.testing.assert_array_equal(_np(e.draw_base2(4)), t.draw_base2(4).numpy())


def test_fork_wait_and_small_names():
    fut = ember.fork(lambda x, y=1: x + y, 2, y=3)
    assert ember.wait(fut) == 5 and ember.jit.wait(ember.jit.fork(lambda: 7)) == 7

    def boom():
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        ember.wait(ember.fork(boom))
    with pytest.raises(TypeError, match="expected a Future"):
        ember.wait(3)
    assert not ember.is_distributed(ember.ones(1)) and not ember.is_vulkan_available()
    x = ember.ones(2)
    assert ember.addmv_(x, ember.ones(2, 3), ember.ones(3), beta=2) is x
    assert x.tolist() == [5.0, 5.0]
    c = ember.tensor([1 + 2j])
    assert ember.conj_physical_(c) is c and c.tolist() == [1 - 2j]
    r = ember.ones(2)
    assert ember.conj_physical_(r) is r and r.conj_physical_() is r
    shuffled = ember.native_channel_shuffle(ember.arange(4.0).view(1, 4, 1, 1), 2)
    assert shuffled.view(-1).tolist() == [0.0, 2.0, 1.0, 3.0]
    assert ember.to_dlpack is ember.utils.dlpack.to_dlpack
