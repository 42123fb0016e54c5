"""nn.utils.prune: torch's reparametrization (weight_orig, weight_mask, the pre-hook), masks
against torch's for the deterministic methods, the defining properties of the random ones."""

import numpy as np
import pytest

import ember
from ember.nn.utils import prune


def _linear(seed=0, torch=None):
    rs = np.random.RandomState(seed)
    w = rs.randn(5, 6).astype(np.float32)
    b = rs.randn(5).astype(np.float32)
    ours = ember.nn.Linear(6, 5)
    ours.load_state_dict({"weight": ember.tensor(w), "bias": ember.tensor(b)})
    if torch is None:
        return ours
    theirs = torch.nn.Linear(6, 5)
    theirs.load_state_dict({"weight": torch.tensor(w), "bias": torch.tensor(b)})
    return ours, theirs


def _conv(seed=1, torch=None):
    rs = np.random.RandomState(seed)
    w = rs.randn(6, 4, 3, 3).astype(np.float32)
    b = rs.randn(6).astype(np.float32)
    ours = ember.nn.Conv2d(4, 6, 3)
    ours.load_state_dict({"weight": ember.tensor(w), "bias": ember.tensor(b)})
    if torch is None:
        return ours
    theirs = torch.nn.Conv2d(4, 6, 3)
    theirs.load_state_dict({"weight": torch.tensor(w), "bias": torch.tensor(b)})
    return ours, theirs


def test_reparametrization_and_remove():
    m = _linear()
    w = m.weight.detach().numpy().copy()
    prune.l1_unstructured(m, "weight", amount=0.3)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    mask = m.weight_mask.numpy()
    assert mask.sum() == 30 - 9  # round(0.3 * 30) entries pruned
    pruned = np.sort(np.abs(w[mask == 0]))
    kept = np.sort(np.abs(w[mask == 1]))
    assert pruned.max() <= kept.min()  # the smallest magnitudes went
    assert np.array_equal(m.weight.detach().numpy(), w * mask)
    assert prune.is_pruned(m)
    # The pre-hook recomputes weight from weight_orig on every forward.
    with ember.no_grad():
        m.weight_orig.mul_(2)
    m(ember.ones(1, 6))
    assert np.array_equal(m.weight.detach().numpy(), 2 * w * mask)
    prune.remove(m, "weight")
    assert list(m.state_dict()) == ["bias", "weight"]
    assert isinstance(m.weight, ember.nn.Parameter)
    assert np.array_equal(m.weight.detach().numpy(), 2 * w * mask)
    assert not prune.is_pruned(m)
    with pytest.raises(ValueError, match="has to be pruned"):
        prune.remove(m, "weight")


def test_gradient_flows_to_orig_through_mask():
    m = _linear()
    prune.l1_unstructured(m, "weight", amount=10)
    m(ember.ones(2, 6)).sum().backward()
    grad = m.weight_orig.grad.numpy()
    assert np.array_equal(grad == 0, m.weight_mask.numpy() == 0)


def test_repeated_pruning_composes_in_a_container():
    m = _linear()
    prune.random_unstructured(m, "weight", amount=0.2)
    first = m.weight_mask.numpy().copy()
    prune.l1_unstructured(m, "weight", amount=5)
    hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 2
    second = m.weight_mask.numpy()
    assert np.all(second <= first)  # never un-prunes
    assert (first - second).sum() == 5  # 5 more among the survivors
    prune.random_structured(m, "weight", amount=2, dim=0)
    rows = m.weight_mask.numpy().sum(1)
    assert (rows == 0).sum() >= 2


def test_random_methods_properties():
    m = _conv()
    prune.random_unstructured(m, "weight", amount=0.25)
    assert m.weight_mask.numpy().size - m.weight_mask.numpy().sum() == round(0.25 * 216)
    c = _conv()
    prune.random_structured(c, "weight", amount=0.5, dim=1)
    per_channel = c.weight_mask.numpy().sum(axis=(0, 2, 3))
    assert sorted(per_channel.tolist()) == [0, 0, 54, 54]
    with pytest.raises(ValueError, match="should be smaller"):
        prune.random_unstructured(_linear(), "weight", amount=31)
    with pytest.raises(ValueError, match="float in the range"):
        prune.l1_unstructured(_linear(), "weight", amount=1.5)
    with pytest.raises(ValueError, match="multidimensional"):
        prune.ln_structured(_linear(), "bias", amount=1, n=2, dim=0)
    m = _linear()
    prune.identity(m, "weight")
    assert m.weight_mask.numpy().all()


def test_custom_from_mask_and_global():
    m = _linear()
    mask = ember.tensor((np.arange(30).reshape(5, 6) % 2).astype(np.float32))
    prune.custom_from_mask(m, "weight", mask)
    assert np.array_equal(m.weight_mask.numpy(), mask.numpy())
    a, b = _linear(3), _conv(4)
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=50)
    assert (1 - a.weight_mask.numpy()).sum() + (1 - b.weight_mask.numpy()).sum() == 50
    with pytest.raises(TypeError, match="unstructured"):
        prune.global_unstructured([(a, "bias")], prune.RandomStructured, amount=1)


def test_state_dict_round_trip():
    m = _linear()
    prune.l1_unstructured(m, "weight", amount=0.5)
    sd = m.state_dict()
    fresh = _linear(9)
    prune.identity(fresh, "weight")
    fresh.load_state_dict(sd)
    fresh(ember.ones(1, 6))
    assert np.array_equal(fresh.weight.detach().numpy(), m.weight.detach().numpy())


def test_deterministic_masks_match_torch():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as tprune

    a, b = _linear(torch=torch)
    prune.l1_unstructured(a, "weight", 0.3)
    tprune.l1_unstructured(b, "weight", 0.3)
    prune.ln_structured(a, "weight", 2, 2, 0)
    tprune.ln_structured(b, "weight", 2, 2, 0)
    prune.l1_unstructured(a, "weight", 3)
    tprune.l1_unstructured(b, "weight", 3)
    assert np.array_equal(a.weight_mask.numpy(), b.weight_mask.numpy())
    assert list(a.state_dict()) == list(b.state_dict())
    prune.remove(a, "weight")
    tprune.remove(b, "weight")
    assert np.array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())

    c, d = _conv(torch=torch)
    prune.ln_structured(c, "weight", 0.5, 1, 1)
    tprune.ln_structured(d, "weight", 0.5, 1, 1)
    prune.ln_structured(c, "weight", 1, float("inf"), 0)
    tprune.ln_structured(d, "weight", 1, float("inf"), 0)
    assert np.array_equal(c.weight_mask.numpy(), d.weight_mask.numpy())

    scores = np.random.RandomState(5).rand(5, 6).astype(np.float32)
    e, f = _linear(torch=torch)
    prune.l1_unstructured(e, "weight", 7, importance_scores=ember.tensor(scores))
    tprune.l1_unstructured(f, "weight", 7, importance_scores=torch.tensor(scores))
    assert np.array_equal(e.weight_mask.numpy(), f.weight_mask.numpy())

    m1, t1 = _linear(6, torch=torch)
    m2, t2 = _conv(7, torch=torch)
    prune.global_unstructured(
        [(m1, "weight"), (m2, "weight"), (m1, "bias")], prune.L1Unstructured, amount=0.4
    )
    tprune.global_unstructured(
        [(t1, "weight"), (t2, "weight"), (t1, "bias")], tprune.L1Unstructured, amount=0.4
    )
    for x, y in (
        (m1.weight_mask, t1.weight_mask),
        (m2.weight_mask, t2.weight_mask),
        (m1.bias_mask, t1.bias_mask),
    ):
        assert np.array_equal(x.numpy(), y.numpy())
