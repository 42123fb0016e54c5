"""Sparse COO and CSR tensors: construction, conversions, printing, products, elementwise ops,
reductions, autograd and save/load, against dense equivalents, numpy and torch."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import ember


def _coo(dtype=ember.float32):
    i = ember.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    v = ember.tensor([3.0, 4.0, 5.0, 1.0], dtype=dtype)
    return ember.sparse_coo_tensor(i, v, (2, 3))


DENSE = np.array([[0.0, 0.0, 4.0], [4.0, 0.0, 5.0]], dtype=np.float32)


def _np(t):
    return np.asarray(t.detach().tolist())


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
    return torch


def _random_sparse(m, k, density, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    mask = rng.random((m, k)) < density
    dense = np.where(mask, rng.standard_normal((m, k)), 0).astype(dtype)
    return dense


# --- construction and attributes ---------------------------------------------------------------


def test_coo_is_a_tensor_with_torch_attributes():
    s = _coo()
    assert isinstance(s, ember.Tensor)
    assert ember.is_tensor(s)
    assert s.is_sparse and not s.is_sparse_csr
    assert s.layout is ember.sparse_coo
    assert repr(ember.sparse_coo) == "torch.sparse_coo" and repr(ember.strided) == "torch.strided"
    assert s.shape == (2, 3) and s.size(1) == 3 and s.dim() == 2 and s.ndim == 2
    assert s.numel() == 6 and len(s) == 2
    assert s.sparse_dim() == 2 and s.dense_dim() == 0 and s._nnz() == 4
    assert s.dtype == ember.float32 and not s.is_coalesced()
    assert s.type() == "torch.sparse.FloatTensor"
    np.testing.assert_array_equal(_np(s.to_dense()), DENSE)
    dense = ember.ones(2, 2)
    assert not dense.is_sparse and not dense.is_sparse_csr and dense.layout is ember.strided
    assert dense.to_dense() is dense and dense.sparse_dim() == 0 and dense.dense_dim() == 2


def test_coo_constructor_checks_and_infers_size():
    s = ember.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, 2.0])
    assert s.shape == (3, 2)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ember.sparse_coo_tensor([[0, 3]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="same nnz"):
        ember.sparse_coo_tensor([[0, 1]], [1.0], (3,))
    with pytest.raises(RuntimeError, match="negative index"):
        ember.sparse_coo_tensor([[-1]], [1.0], (3,))
    with pytest.raises(RuntimeError, match="Sparse tensors do not have strides"):
        s.stride()
    with pytest.raises(NotImplementedError, match="not supported for sparse tensors"):
        s.exp()


def test_values_and_indices_need_coalescing():
    s = _coo()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.values()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    assert s._values().shape == (4,) and s._indices().shape == (2, 4)
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == 3
    assert c.indices().tolist() == [[0, 1, 1], [2, 0, 2]]
    assert c.values().tolist() == [4.0, 4.0, 5.0]
    assert c.coalesce() is c


def test_hybrid_coo_and_to_sparse_with_sparse_dim():
    x = ember.tensor([[0.0, 0.0], [1.0, 2.0], [0.0, 3.0]])
    s = x.to_sparse(1)
    assert s.sparse_dim() == 1 and s.dense_dim() == 1 and s._nnz() == 2
    assert s.indices().tolist() == [[1, 2]]
    np.testing.assert_array_equal(_np(s.to_dense()), _np(x))
    full = x.to_sparse()
    assert full.sparse_dim() == 2 and full._nnz() == 3 and full.is_coalesced()


def test_csr_construction_and_conversions():
    c = ember.sparse_csr_tensor([0, 1, 3], [2, 0, 2], [4.0, 4.0, 5.0], (2, 3))
    assert c.is_sparse_csr and not c.is_sparse and c.layout is ember.sparse_csr
    assert c.crow_indices().tolist() == [0, 1, 3] and c.col_indices().tolist() == [2, 0, 2]
    np.testing.assert_array_equal(_np(c.to_dense()), DENSE)
    from_coo = _coo().to_sparse_csr()
    assert from_coo.crow_indices().tolist() == [0, 1, 3]
    assert from_coo.values().tolist() == [4.0, 4.0, 5.0]
    back = c.to_sparse()
    assert back.layout is ember.sparse_coo and back.is_coalesced()
    np.testing.assert_array_equal(_np(back.to_dense()), DENSE)
    np.testing.assert_array_equal(_np(ember.tensor(DENSE).to_sparse_csr().to_dense()), DENSE)
    with pytest.raises(RuntimeError, match="crow_indices"):
        ember.sparse_csr_tensor([0, 2, 1], [0, 1], [1.0, 2.0], (2, 2))


def test_printing_matches_torch():
    torch = _torch()
    for make in (
        lambda lib: lib.sparse_coo_tensor(
            lib.tensor([[0, 1, 1], [2, 0, 2]]), lib.tensor([3.0, 4.0, 5.0]), (2, 3)
        ),
        lambda lib: lib.sparse_coo_tensor(
            lib.tensor([[0, 1, 1], [2, 0, 2]]), lib.tensor([3.0, 4.0, 5.0]), (2, 3)
        ).double(),
        lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.ones(2, 2), (3, 2)),
        lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 3)),
        lambda lib: lib.eye(3).to_sparse_csr(),
        lambda lib: lib.eye(2, dtype=lib.float64).to_sparse_csr(),
        lambda lib: lib.sparse_coo_tensor(
            lib.tensor([[0, 1]]), lib.tensor([1.0, 2.0]), (2,), requires_grad=True
        ),
    ):
        assert repr(make(ember)) == repr(make(torch))


# --- products -----------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 16, 64, 100])
def test_sparse_mm_matches_dense(layout, dtype, n):
    a = _random_sparse(37, 29, 0.2, n, dtype)
    b = np.random.default_rng(1).standard_normal((29, n)).astype(dtype)
    s = ember.tensor(a).to_sparse()
    if layout == "csr":
        s = s.to_sparse_csr()
    for out in (
        ember.sparse.mm(s, ember.tensor(b)),
        ember.mm(s, ember.tensor(b)),
        s @ ember.tensor(b),
    ):
        assert out.layout is ember.strided
        np.testing.assert_allclose(_np(out), a @ b, rtol=1e-5, atol=1e-5)


def test_mm_with_uncoalesced_and_integer_operands():
    s = _coo()
    d = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_allclose(_np(s @ ember.tensor(d)), DENSE @ d)
    si = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2, 3], (2, 2))
    assert (si @ ember.tensor([[1, 2], [3, 4]])).tolist() == [[6, 8], [3, 6]]


def test_dense_at_sparse_matmul_and_addmm():
    s = _coo()
    left = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(_np(ember.tensor(left) @ s), left @ DENSE)
    np.testing.assert_allclose(_np(ember.matmul(s, ember.ones(3))), DENSE.sum(1))
    d = np.ones((3, 2), dtype=np.float32)
    out = ember.addmm(ember.ones(2, 2), s, ember.tensor(d), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(_np(out), 0.5 + 2.0 * (DENSE @ d))
    out = ember.sparse.addmm(ember.ones(2, 2), s, ember.tensor(d))
    np.testing.assert_allclose(_np(out), 1.0 + DENSE @ d)
    ss = s @ s.t()
    assert ss.is_sparse
    np.testing.assert_allclose(_np(ss.to_dense()), DENSE @ DENSE.T)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        s @ ember.ones(2, 2)


def test_large_mm_matches_torch():
    torch = _torch()
    a = _random_sparse(512, 384, 0.01, 3)
    b = np.random.default_rng(4).standard_normal((384, 64)).astype(np.float32)
    ours = ember.tensor(a).to_sparse_csr() @ ember.tensor(b)
    ref = torch.tensor(a).to_sparse_csr() @ torch.tensor(b)
    np.testing.assert_allclose(_np(ours), ref.numpy(), rtol=1e-5, atol=1e-5)


# --- elementwise, shape and reductions ---------------------------------------------------------


def test_elementwise_ops_keep_sparsity():
    s = _coo()
    other = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = [
        (s * 2, DENSE * 2, True),
        (2 * s, DENSE * 2, True),
        (s * ember.tensor(other), DENSE * other, True),
        (ember.tensor(other) * s, DENSE * other, True),
        (ember.mul(s, 3), DENSE * 3, True),
        (s / 2, DENSE / 2, True),
        (s + s, DENSE * 2, True),
        (ember.add(s, s, alpha=2), DENSE * 3, True),
        (s - s, DENSE * 0, True),
        (-s, -DENSE, True),
        (s.abs(), np.abs(DENSE), True),
        (ember.sqrt(s), np.sqrt(DENSE), True),
        (s.tanh(), np.tanh(DENSE), True),
        (s.pow(2), DENSE**2, True),
        (s * s, DENSE * DENSE, True),
        (ember.ones(2, 3) + s, 1 + DENSE, False),
        (s + ember.ones(2, 3), 1 + DENSE, False),
        (s - ember.ones(2, 3), DENSE - 1, False),
    ]
    for out, expected, sparse in cases:
        assert out.is_sparse == sparse
        got = out.to_dense() if sparse else out
        np.testing.assert_allclose(_np(got), expected, rtol=1e-6)
    with pytest.raises(RuntimeError, match="scalar"):
        s + 1


def test_transpose_and_dtype_conversion():
    s = _coo()
    for t in (s.t(), s.transpose(0, 1), ember.t(s)):
        np.testing.assert_array_equal(_np(t.to_dense()), DENSE.T)
    assert s.double().dtype == ember.float64 and s.double().is_sparse
    assert s.to(ember.float64).dtype == ember.float64
    c = s.to_sparse_csr().t()
    np.testing.assert_array_equal(_np(c.to_dense()), DENSE.T)


def test_sparse_sum_matches_dense():
    s = _coo()
    assert ember.sparse.sum(s).item() == DENSE.sum()
    assert s.sum().item() == DENSE.sum()
    for dim in (0, 1):
        out = ember.sparse.sum(s, dim)
        assert out.is_sparse
        np.testing.assert_allclose(_np(out.to_dense()), DENSE.sum(dim))
    np.testing.assert_allclose(_np(ember.sparse.sum(s, (0, 1))), DENSE.sum())
    hybrid = ember.sparse_coo_tensor([[0, 2, 0]], ember.ones(3, 2), (3, 2))
    np.testing.assert_allclose(_np(ember.sparse.sum(hybrid, 1).to_dense()), [4.0, 0.0, 2.0])


@pytest.mark.parametrize("log", [False, True])
def test_sparse_softmax_matches_torch(log):
    torch = _torch()
    a = _random_sparse(6, 5, 0.5, 7)
    for dim in (0, 1, -1):
        fn_e = ember.sparse.log_softmax if log else ember.sparse.softmax
        fn_t = torch.sparse.log_softmax if log else torch.sparse.softmax
        ours = fn_e(ember.tensor(a).to_sparse(), dim)
        ref = fn_t(torch.tensor(a).to_sparse(), dim)
        assert ours.is_sparse
        np.testing.assert_allclose(_np(ours.to_dense()), ref.to_dense().numpy(), rtol=1e-5)


# --- autograd ----------------------------------------------------------------------------------


def test_sparse_mm_gradients_match_torch():
    torch = _torch()
    i = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]
    v = [3.0, 4.0, 5.0, 1.0, -2.0]
    d = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    grads = {}
    for lib in (ember, torch):
        s = lib.sparse_coo_tensor(lib.tensor(i), lib.tensor(v), (3, 3), requires_grad=True)
        dd = lib.tensor(d).requires_grad_(True)
        (lib.sparse.mm(s, dd) ** 2).sum().backward()
        assert s.grad.is_sparse
        grads[lib.__name__] = (s.grad.to_dense().tolist(), dd.grad.tolist())
    np.testing.assert_allclose(grads["ember"][0], grads["torch"][0], rtol=1e-5)
    np.testing.assert_allclose(grads["ember"][1], grads["torch"][1], rtol=1e-5)


def test_csr_mm_gradient_by_finite_differences():
    a = _random_sparse(5, 4, 0.5, 2, np.float64)
    s = ember.tensor(a).to_sparse_csr().detach().requires_grad_(True)
    d = ember.tensor(np.random.default_rng(3).standard_normal((4, 3)))
    d.requires_grad_(True)
    w = ember.tensor(np.random.default_rng(5).standard_normal((5, 3)))
    (ember.sparse.mm(s, d) * w).sum().backward()
    # d/dd (w . (S d)) = S^T w; d/dS at the pattern = (w d^T) at the pattern
    np.testing.assert_allclose(_np(d.grad), a.T @ _np(w), rtol=1e-10)
    mask = a != 0
    np.testing.assert_allclose(_np(s.grad.to_dense()), np.where(mask, _np(w) @ _np(d).T, 0))


def test_values_gradient_through_constructor_and_to_dense():
    v = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = ember.sparse_coo_tensor([[0, 1, 1], [0, 0, 2]], v, (2, 3))
    assert not s.is_leaf and s.requires_grad
    weights = ember.arange(6.0).reshape(2, 3)
    (s.to_dense() * weights).sum().backward()
    assert v.grad.tolist() == [0.0, 3.0, 5.0]
    x = ember.tensor([[0.0, 2.0], [1.0, 0.0]], requires_grad=True)
    (x.to_sparse() * 3).to_dense().sum().backward()
    assert x.grad.tolist() == [[0.0, 3.0], [3.0, 0.0]]


def test_gradcheck_of_sparse_mm_values():
    v = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64, requires_grad=True)
    d = ember.tensor(np.random.default_rng(9).standard_normal((3, 2)), requires_grad=True)

    def f(v, d):
        s = ember.sparse_coo_tensor([[0, 1, 2], [1, 2, 0]], v, (3, 3))
        return ember.sparse.mm(s, d)

    assert ember.autograd.gradcheck(f, (v, d))


# --- save and load -------------------------------------------------------------------------------


def test_pickle_and_deepcopy_round_trip():
    for s in (_coo(), _coo().coalesce().to_sparse_csr()):
        for back in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
            assert back.layout is s.layout
            np.testing.assert_array_equal(_np(back.to_dense()), DENSE)


def test_save_load_round_trip_with_weights_only(tmp_path):
    path = tmp_path / "sparse.pt"
    s = _coo()
    ember.save({"coo": s, "csr": s.to_sparse_csr()}, path)
    out = ember.load(path, weights_only=True)
    assert out["coo"].is_sparse and not out["coo"].is_coalesced()
    assert out["csr"].is_sparse_csr
    for t in out.values():
        np.testing.assert_array_equal(_np(t.to_dense()), DENSE)


def test_files_travel_between_ember_and_torch(tmp_path):
    torch = _torch()
    ours = tmp_path / "ember.pt"
    ember.save({"coo": _coo(), "csr": _coo().to_sparse_csr()}, ours)
    loaded = torch.load(ours, weights_only=True)
    assert loaded["coo"].layout == torch.sparse_coo and loaded["csr"].layout == torch.sparse_csr
    np.testing.assert_array_equal(loaded["coo"].to_dense().numpy(), DENSE)
    np.testing.assert_array_equal(loaded["csr"].to_dense().numpy(), DENSE)
    theirs = tmp_path / "torch.pt"
    ts = torch.tensor(DENSE).to_sparse()
    torch.save({"coo": ts, "csr": ts.to_sparse_csr()}, theirs)
    back = ember.load(theirs)
    assert back["coo"].is_sparse and back["coo"].is_coalesced()
    assert back["csr"].is_sparse_csr
    np.testing.assert_array_equal(_np(back["coo"].to_dense()), DENSE)
    np.testing.assert_array_equal(_np(back["csr"].to_dense()), DENSE)


def test_hostile_sparse_record_is_refused(tmp_path):
    torch = _torch()
    bad = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([1.0, 2.0]), (2,))
    bad._indices()[0, 1] = 7  # out of bounds after construction
    path = tmp_path / "bad.pt"
    torch.save(bad, path)
    with pytest.raises(RuntimeError, match="size is inconsistent"):
        ember.load(path)


def test_sparse_mask_reads_a_dense_tensor_at_the_pattern():
    dense = ember.arange(6.0).reshape(2, 3)
    out = dense.sparse_mask(_coo())
    assert out.is_sparse and out.is_coalesced()
    assert out.indices().tolist() == [[0, 1, 1], [2, 0, 2]]
    assert out.values().tolist() == [2.0, 3.0, 5.0]


def test_dense_operations_are_untouched_by_the_sparse_paths():
    a, b = ember.ones(2, 2), ember.full((2, 2), 2.0)
    assert ember.add(a, b).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert ember.mm(a, b).tolist() == [[4.0, 4.0], [4.0, 4.0]]
    assert ember.sum(b, axis=1).tolist() == [4.0, 4.0]
    # the dense path stays in C++: mm is a chain of C guards (the argument parser's, then the
    # sparse paths') in front of the binding, with no Python frame
    guards, f = [], ember.mm
    while type(f).__name__.endswith("Guard"):
        guards.append(type(f).__name__)
        f = f.__wrapped__
    assert "_SparseGuard" in guards and type(f).__name__ == "nb_func" and ember.mm.__name__ == "mm"
