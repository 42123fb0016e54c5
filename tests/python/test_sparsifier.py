"""ao.pruning.WeightNormSparsifier: masks through parametrizations, against torch's masks for the
same weights and configs, and the block-sparsity properties without torch."""

import numpy as np
import pytest

import ember
from ember.ao.pruning import BaseSparsifier, WeightNormSparsifier
from ember.nn.utils import parametrize


def _model(lib, seed=0):
    nn = lib.nn
    m = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4))
    rs = np.random.RandomState(seed)
    m.load_state_dict(
        {k: lib.tensor(rs.randn(*v.shape).astype(np.float32)) for k, v in m.state_dict().items()}
    )
    return m


def test_prepare_step_squash():
    m = _model(ember)
    w = m[0].weight.detach().numpy().copy()
    s = WeightNormSparsifier(sparsity_level=0.5, sparse_block_shape=(1, 4), zeros_per_block=4)
    s.prepare(m, config=None)  # every Linear's weight
    assert sorted(g["tensor_fqn"] for g in s.groups) == ["0.weight", "2.weight"]
    assert parametrize.is_parametrized(m[0], "weight")
    s.step()
    mask = m[0].parametrizations.weight[0].mask.numpy()
    blocks = mask.reshape(8, 4, 4)
    assert np.all((blocks.sum(-1) == 0) | (blocks.sum(-1) == 4))  # whole 1x4 blocks
    assert (blocks.sum(-1) == 0).sum() == 16  # half of the 32 blocks
    norms = (w.reshape(8, 4, 4) ** 2).mean(-1)
    assert norms[blocks.sum(-1) == 0].max() <= norms[blocks.sum(-1) == 4].min()
    assert np.array_equal(m[0].weight.detach().numpy(), w * mask)
    sd = s.state_dict()
    assert set(sd["state"]) == {"0.weight", "2.weight"} and "module" not in sd["groups"][0]
    s.squash_mask()
    assert not parametrize.is_parametrized(m[0])
    assert sorted(m.state_dict()) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert np.array_equal(m[0].weight.detach().numpy(), w * mask)


def test_zeros_per_block():
    m = _model(ember, 1)
    s = WeightNormSparsifier(sparsity_level=0.25, sparse_block_shape=(1, 4), zeros_per_block=2)
    s.prepare(m, [{"tensor_fqn": "0.weight"}])
    s.step()
    blocks = m[0].parametrizations.weight[0].mask.numpy().reshape(8, 4, 4).sum(-1)
    # The quarter of blocks with the smallest norm keep only their 2 largest entries.
    assert (blocks == 2).sum() == 8 and np.all((blocks == 2) | (blocks == 4))
    bad = WeightNormSparsifier(sparse_block_shape=(1, 2), zeros_per_block=3)
    bad.prepare(_model(ember), None)
    with pytest.raises(ValueError, match="cannot be more"):
        bad.step()


def test_base_sparsifier_is_abstract():
    with pytest.raises(TypeError):
        BaseSparsifier()


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"sparsity_level": 0.3, "sparse_block_shape": (2, 2), "zeros_per_block": 2},
        {"sparsity_level": 0.6, "sparse_block_shape": (1, 4), "zeros_per_block": 1},
        {"sparsity_level": 0.5, "sparse_block_shape": (1, 3)},
        {"sparsity_level": 0.5, "sparse_block_shape": (2, 4), "zeros_per_block": 3, "norm": 1},
        {"sparsity_level": 1.0},
        {"sparsity_level": 0.0},
    ],
)
def test_masks_match_torch(kw):
    torch = pytest.importorskip("torch")
    from torch.ao.pruning import WeightNormSparsifier as TorchSparsifier

    ours, theirs = _model(ember, 3), _model(torch, 3)
    a, b = WeightNormSparsifier(**kw), TorchSparsifier(**kw)
    config = [{"tensor_fqn": "0.weight"}, {"tensor_fqn": "2.weight"}]
    a.prepare(ours, config)
    b.prepare(theirs, [dict(c) for c in config])
    for _ in range(2):
        a.step()
        b.step()
        for i in (0, 2):
            ma = ours[i].parametrizations.weight[0].mask.numpy().astype(bool)
            mb = theirs[i].parametrizations.weight[0].mask.numpy().astype(bool)
            assert np.array_equal(ma, mb)
    a.squash_mask()
    b.squash_mask()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert np.array_equal(ours[0].weight.detach().numpy(), theirs[0].weight.detach().numpy())
