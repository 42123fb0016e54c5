"""Sparse gradients: Embedding(sparse=True) / EmbeddingBag(sparse=True) / F.embedding(sparse=True)
make sparse COO .grad tensors; SGD, Adagrad and SparseAdam step with them as torch's do, and the
other optimizers refuse them with torch's error."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

W = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
IDX = [[0, 3, 2], [2, 5, 4]]


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
    return torch


def _embedding(lib, **kwargs):
    emb = lib.nn.Embedding(6, 3, sparse=True, **kwargs)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(W))
    return emb


def _loss(lib, emb):
    out = emb(lib.tensor(IDX))
    return (out * lib.arange(18.0).reshape(2, 3, 3) / 10).sum() + (out**2).sum()


def test_embedding_gradient_is_sparse_and_uncoalesced():
    emb = _embedding(ember)
    _loss(ember, emb).backward()
    g = emb.weight.grad
    assert g.is_sparse and not g.is_coalesced() and g._nnz() == 6
    assert g._indices().tolist() == [[0, 3, 2, 2, 5, 4]]
    dense = ember.nn.Embedding(6, 3)
    with ember.no_grad():
        dense.weight.copy_(ember.tensor(W))
    _loss(ember, dense).backward()
    np.testing.assert_allclose(g.to_dense().tolist(), dense.weight.grad.tolist(), rtol=1e-6)


def test_two_sparse_gradients_accumulate():
    emb = _embedding(ember)
    _loss(ember, emb).backward()
    first = emb.weight.grad.to_dense().tolist()
    _loss(ember, emb).backward()
    g = emb.weight.grad
    assert g.is_sparse and g._nnz() == 12
    np.testing.assert_allclose(g.to_dense().tolist(), 2 * np.array(first), rtol=1e-6)
    emb.zero_grad()
    assert emb.weight.grad is None


def test_embedding_gradient_matches_torch_with_padding():
    torch = _torch()
    grads = {}
    for lib in (ember, torch):
        emb = _embedding(lib, padding_idx=2)
        _loss(lib, emb).backward()
        g = emb.weight.grad
        assert g.is_sparse
        grads[lib.__name__] = (g._indices().tolist(), g.to_dense().tolist())
    assert grads["ember"][0] == grads["torch"][0] == [[0, 3, 5, 4]]
    np.testing.assert_allclose(grads["ember"][1], grads["torch"][1], rtol=1e-6)


def test_sparse_embedding_refuses_frequency_scaling_as_torch():
    emb = _embedding(ember, scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
        _loss(ember, emb).backward()


def test_functional_embedding_with_a_plain_leaf():
    w = ember.tensor(W, requires_grad=True)
    F.embedding(ember.tensor([1, 1, 4]), w, sparse=True).sum().backward()
    assert w.grad.is_sparse
    expected = np.zeros_like(W)
    expected[1] = 2
    expected[4] = 1
    np.testing.assert_array_equal(w.grad.to_dense().tolist(), expected)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_gradient_matches_torch(mode):
    torch = _torch()
    results = {}
    for lib in (ember, torch):
        bag = lib.nn.EmbeddingBag(6, 3, mode=mode, sparse=True, padding_idx=1)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(W))
        out = bag(lib.tensor([0, 2, 1, 5, 2, 4]), lib.tensor([0, 3]))
        (out * lib.arange(6.0).reshape(2, 3)).sum().backward()
        assert bag.weight.grad.is_sparse
        results[lib.__name__] = (out.tolist(), bag.weight.grad.to_dense().tolist())
    np.testing.assert_allclose(results["ember"][0], results["torch"][0], rtol=1e-6)
    np.testing.assert_allclose(results["ember"][1], results["torch"][1], rtol=1e-6)


def test_embedding_bag_max_mode_refuses_sparse():
    bag = ember.nn.EmbeddingBag(6, 3, mode="max", sparse=True)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        bag(ember.tensor([0, 2]), ember.tensor([0]))


def _train(lib, make_opt, steps=3, **emb_kwargs):
    emb = _embedding(lib, **emb_kwargs)
    opt = make_opt(lib, emb.parameters())
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, emb).backward()
        opt.step()
    return np.array(emb.weight.tolist())


OPTIMIZERS = {
    "sgd": lambda lib, p: lib.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1),
    "sgd_nesterov": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "sgd_maximize": lambda lib, p: lib.optim.SGD(p, lr=0.01, maximize=True),
    "adagrad": lambda lib, p: lib.optim.Adagrad(p, lr=0.1, lr_decay=0.01),
    "sparse_adam": lambda lib, p: lib.optim.SparseAdam(p, lr=0.1),
    "sparse_adam_maximize": lambda lib, p: lib.optim.SparseAdam(p, lr=0.05, maximize=True),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizers_with_sparse_gradients_match_torch(name):
    torch = _torch()
    ours = _train(ember, OPTIMIZERS[name])
    ref = _train(torch, OPTIMIZERS[name])
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)


def test_sgd_sparse_step_touches_only_the_rows_used():
    emb = _embedding(ember)
    opt = ember.optim.SGD(emb.parameters(), lr=0.5)
    _loss(ember, emb).backward()
    grad = emb.weight.grad.to_dense().numpy()
    opt.step()
    np.testing.assert_allclose(emb.weight.detach().numpy(), W - 0.5 * grad, rtol=1e-6)
    np.testing.assert_array_equal(emb.weight.detach().numpy()[1], W[1])


@pytest.mark.parametrize(
    "cls, message",
    [
        ("Adam", "Adam does not support sparse gradients, please consider SparseAdam instead"),
        ("RMSprop", "RMSprop does not support sparse gradients"),
        ("Adadelta", "Adadelta does not support sparse gradients"),
    ],
)
def test_other_optimizers_refuse_sparse_gradients(cls, message):
    emb = _embedding(ember)
    opt = getattr(ember.optim, cls)(emb.parameters())
    _loss(ember, emb).backward()
    with pytest.raises(RuntimeError, match=message):
        opt.step()


def test_sparse_option_errors_as_torch():
    emb = _embedding(ember)
    _loss(ember, emb).backward()
    with pytest.raises(RuntimeError, match="not compatible with sparse gradients"):
        ember.optim.Adagrad(emb.parameters(), weight_decay=0.1).step()
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        ember.optim.SGD(emb.parameters(), lr=0.1, weight_decay=0.1).step()
    p = ember.nn.Parameter(ember.ones(3))
    p.grad = ember.ones(3)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        ember.optim.SparseAdam([p]).step()
    with pytest.raises(ValueError, match="Invalid learning rate"):
        ember.optim.SparseAdam([p], lr=-1.0)


def test_setting_a_sparse_grad_by_hand():
    p = ember.nn.Parameter(ember.zeros(4, 2))
    g = ember.sparse_coo_tensor([[1, 3]], ember.ones(2, 2), (4, 2))
    p.grad = g
    assert p.grad is g
    ember.optim.SGD([p], lr=1.0).step()
    assert p.detach().tolist() == [[0, 0], [-1, -1], [0, 0], [-1, -1]]
    p.grad = None
    assert p.grad is None


def test_zero_grad_without_set_to_none_empties_a_sparse_grad():
    emb = _embedding(ember)
    _loss(ember, emb).backward()
    opt = ember.optim.SGD(emb.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=False)
    g = emb.weight.grad
    assert g.is_sparse and g._nnz() == 0
    _loss(ember, emb).backward()
    assert emb.weight.grad._nnz() == 6


def test_sgd_momentum_state_saves_and_loads(tmp_path):
    emb = _embedding(ember)
    opt = ember.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
    _loss(ember, emb).backward()
    opt.step()
    path = tmp_path / "opt.pt"
    ember.save(opt.state_dict(), path)
    state = ember.load(path)["state"][0]["momentum_buffer"]
    assert state.is_sparse
    np.testing.assert_allclose(
        state.to_dense().tolist(), opt.state[emb.weight]["momentum_buffer"].to_dense().tolist()
    )


def test_embedding_bag_per_sample_weights_sparse_gradient_matches_torch():
    torch = _torch()
    results = {}
    for lib in (ember, torch):
        bag = lib.nn.EmbeddingBag(6, 3, mode="sum", sparse=True)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(W))
        weights = lib.tensor([0.5, 2.0, -1.0, 1.5])
        out = bag(lib.tensor([[0, 2], [2, 5]]), per_sample_weights=weights.reshape(2, 2))
        (out**2).sum().backward()
        results[lib.__name__] = (out.tolist(), bag.weight.grad.to_dense().tolist())
    np.testing.assert_allclose(results["ember"][0], results["torch"][0], rtol=1e-6)
    np.testing.assert_allclose(results["ember"][1], results["torch"][1], rtol=1e-6)
