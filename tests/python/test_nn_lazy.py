"""Lazy modules: shapes inferred from the first input, then the plain class; load_state_dict
materializes from the checkpoint's shapes."""

import copy

import numpy as np
import pytest

import ember
import ember.nn as nn


def net():
    return nn.Sequential(
        nn.LazyConv2d(8, 3, padding=1),
        nn.LazyBatchNorm2d(),
        nn.ReLU(),
        nn.Flatten(),
        nn.LazyLinear(10),
    )


def test_first_forward_infers_shapes_and_becomes_plain():
    m = net()
    assert nn.parameter.is_lazy(m[0].weight) and m[0].has_uninitialized_params()
    assert repr(m[4].weight) == "<UninitializedParameter>"
    out = m(ember.randn(2, 3, 5, 5))
    assert out.shape == (2, 10)
    assert [type(x).__name__ for x in m] == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten", "Linear"]
    assert (m[0].in_channels, m[1].num_features, m[4].in_features) == (3, 8, 200)
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert shapes == {
        "0.weight": (8, 3, 3, 3),
        "0.bias": (8,),
        "1.weight": (8,),
        "1.bias": (8,),
        "1.running_mean": (8,),
        "1.running_var": (8,),
        "1.num_batches_tracked": (),
        "4.weight": (10, 200),
        "4.bias": (10,),
    }
    assert type(m[0].weight) is nn.Parameter and type(m[1].running_mean) is ember.Tensor
    # initialized like the plain modules: kaiming-uniform bound 1/sqrt(fan_in), BN ones/zeros
    assert float(m[4].weight.abs().max()) <= 1 / np.sqrt(200)
    np.testing.assert_array_equal(m[1].weight.detach().numpy(), np.ones(8))
    assert int(m[1].num_batches_tracked) == 1  # the first forward already updated the stats
    out.sum().backward()
    assert m[0].weight.grad.shape == (8, 3, 3, 3)


def test_load_state_dict_materializes_from_the_checkpoint():
    trained = net()
    trained(ember.randn(2, 3, 5, 5))
    fresh = net()
    fresh.load_state_dict(trained.state_dict())
    x = ember.randn(1, 3, 5, 5)
    trained.eval(), fresh.eval()
    np.testing.assert_allclose(fresh(x).detach().numpy(), trained(x).detach().numpy())
    assert type(fresh[0]).__name__ == "Conv2d"


def test_other_lazy_layers():
    t = nn.LazyConvTranspose2d(4, 3, stride=2, groups=2)
    assert t(ember.randn(1, 6, 4, 4)).shape == (1, 4, 9, 9) and t.weight.shape == (6, 2, 3, 3)
    c = nn.LazyConv1d(5, 2)
    assert c(ember.randn(3, 7)).shape == (5, 6) and c.in_channels == 3  # unbatched input
    i = nn.LazyInstanceNorm1d(affine=True)
    assert i(ember.randn(2, 3, 7)).shape == (2, 3, 7) and i.weight.shape == (3,)
    lin = nn.LazyLinear(3, bias=False)
    assert lin(ember.randn(4, 5)).shape == (4, 3) and lin.bias is None
    with pytest.raises(ValueError, match="uninitialized parameter"):
        nn.LazyLinear(3).weight.numel()
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(ember.randn(1, 3, 5, 5))
    assert isinstance(copy.deepcopy(nn.LazyLinear(2)).weight, nn.UninitializedParameter)


def test_lazy_matches_torch_module_structure(torch):
    for build in (
        lambda t: t.nn.LazyLinear(4),
        lambda t: t.nn.LazyConv2d(4, 3),
        lambda t: t.nn.LazyBatchNorm1d(),
    ):
        e, r = build(ember), build(torch)
        x = np.random.randn(2, 3, 6, 6) if isinstance(e, nn.Conv2d) else np.random.randn(5, 3)
        e(ember.tensor(x, dtype=ember.float32)), r(torch.tensor(x, dtype=torch.float32))
        assert type(e).__name__ == type(r).__name__
        assert {k: tuple(v.shape) for k, v in e.state_dict().items()} == {
            k: tuple(v.shape) for k, v in r.state_dict().items()
        }
