"""torch.nn names programs call and ember lacked (issue 16, drop-in running): SyncBatchNorm,
FractionalMaxPool2d/3d, CrossMapLRN2d, nn.grad, factory_kwargs, the legacy ao aliases, the
weight memory-format converters and nn.init.sparse; against torch where it is installed."""

import numpy as np
import pytest
from _dist_util import run_workers

import ember
from ember import nn
from ember.nn import functional as F


def _np(t):
    return t.detach().numpy()


def _torch():
    return pytest.importorskip("torch")


def test_fractional_max_pool_windows_are_maxima_and_grad():
    x = ember.randn(2, 3, 11, 9, requires_grad=True)
    out, idx = F.fractional_max_pool2d(x, 3, output_size=(5, 4), return_indices=True)
    assert out.shape == (2, 3, 5, 4) and idx.shape == (2, 3, 5, 4) and idx.dtype == ember.int64
    flat = _np(x).reshape(2, 3, -1)
    np.testing.assert_array_equal(
        _np(out), np.take_along_axis(flat, _np(idx).reshape(2, 3, -1), 2).reshape(2, 3, 5, 4)
    )
    # every output is the maximum of a 3x3 window containing its index
    xs = _np(x)
    for (n, c, i, j), pos in np.ndenumerate(_np(idx)):
        h, w = divmod(int(pos), 9)
        h0, w0 = max(0, h - 2), max(0, w - 2)
        assert any(
            xs[n, c, a : a + 3, b : b + 3].max() == xs[n, c, h, w]
            for a in range(h0, h + 1)
            for b in range(w0, w + 1)
            if a + 3 <= 11 and b + 3 <= 9
        )
    out.sum().backward()
    grad = np.zeros_like(flat)
    for (n, c, _, _), pos in np.ndenumerate(_np(idx)):
        grad[n, c, pos] += 1
    np.testing.assert_array_equal(_np(x.grad).reshape(2, 3, -1), grad)
    assert F.fractional_max_pool2d(ember.randn(3, 10, 10), 2, output_ratio=(0.5, 0.5)).shape == (
        3,
        5,
        5,
    )
    with pytest.raises(ValueError, match="output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="pool height 5 too large"):
        F.fractional_max_pool2d(ember.randn(1, 1, 7, 7), 5, output_size=4)
    with pytest.raises(RuntimeError, match="_random_samples.size\\(2\\) equals to 2"):
        F.fractional_max_pool2d(x, 2, output_size=4, _random_samples=ember.rand(2, 3, 3))


def test_fractional_max_pool_random_samples_equal_torch():
    torch = _torch()
    rng = np.random.default_rng(0)
    x2 = rng.standard_normal((2, 3, 17, 13)).astype(np.float32)
    s2 = rng.random((2, 3, 2)).astype(np.float32)
    want = torch.nn.functional.fractional_max_pool2d_with_indices(
        torch.tensor(x2), 3, output_ratio=(0.5, 0.6), _random_samples=torch.tensor(s2)
    )
    got = F.fractional_max_pool2d_with_indices(
        ember.tensor(x2), 3, output_ratio=(0.5, 0.6), _random_samples=ember.tensor(s2)
    )
    np.testing.assert_array_equal(_np(got[0]), want[0].numpy())
    np.testing.assert_array_equal(_np(got[1]), want[1].numpy())
    x3 = rng.standard_normal((2, 2, 9, 8, 7)).astype(np.float64)
    s3 = rng.random((2, 2, 3))
    want = torch.nn.functional.fractional_max_pool3d(
        torch.tensor(x3),
        (2, 3, 2),
        (4, 5, 3),
        return_indices=True,
        _random_samples=torch.tensor(s3),
    )
    got = F.fractional_max_pool3d(
        ember.tensor(x3),
        (2, 3, 2),
        (4, 5, 3),
        return_indices=True,
        _random_samples=ember.tensor(s3),
    )
    np.testing.assert_array_equal(_np(got[0]), want[0].numpy())
    np.testing.assert_array_equal(_np(got[1]), want[1].numpy())
    m = nn.FractionalMaxPool2d(2, output_size=3, return_indices=True)
    assert m(ember.randn(1, 2, 7, 7))[0].shape == (1, 2, 3, 3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)


def test_cross_map_lrn2d_matches_torch():
    torch = _torch()
    x = np.random.default_rng(1).standard_normal((2, 7, 3, 3)).astype(np.float32)
    for size in (3, 4, 5):
        got = nn.CrossMapLRN2d(size, 1e-2, 0.75, 2)(ember.tensor(x))
        want = torch.nn.CrossMapLRN2d(size, 1e-2, 0.75, 2)(torch.tensor(x))
        np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))


def test_nn_grad_matches_autograd_and_torch():
    torch = _torch()
    rng = np.random.default_rng(2)
    for n in (1, 2, 3):
        x = rng.standard_normal((2, 4) + (7,) * n).astype(np.float32)
        w = rng.standard_normal((6, 2) + (3,) * n).astype(np.float32)
        kw = dict(stride=2, padding=1, dilation=1, groups=2)
        tconv = getattr(torch.nn.functional, f"conv{n}d")
        go = rng.standard_normal(tconv(torch.tensor(x), torch.tensor(w), **kw).shape).astype(
            np.float32
        )
        gi = getattr(nn.grad, f"conv{n}d_input")(x.shape, ember.tensor(w), ember.tensor(go), **kw)
        gw = getattr(nn.grad, f"conv{n}d_weight")(ember.tensor(x), w.shape, ember.tensor(go), **kw)
        ti = getattr(torch.nn.grad, f"conv{n}d_input")(
            x.shape, torch.tensor(w), torch.tensor(go), **kw
        )
        tw = getattr(torch.nn.grad, f"conv{n}d_weight")(
            torch.tensor(x), w.shape, torch.tensor(go), **kw
        )
        np.testing.assert_allclose(_np(gi), ti.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(_np(gw), tw.numpy(), rtol=1e-4, atol=1e-4)
    assert F.grad is nn.grad


def test_factory_kwargs_and_aliases():
    assert nn.factory_kwargs(None) == {}
    assert nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": ember.float64}}) == {
        "device": "cpu",
        "dtype": ember.float64,
    }
    with pytest.raises(TypeError, match="unexpected kwargs"):
        nn.factory_kwargs({"bogus": 1})
    with pytest.raises(TypeError, match="specified twice"):
        nn.factory_kwargs({"dtype": ember.float32, "factory_kwargs": {"dtype": ember.float64}})
    assert nn.qat.Linear is ember.ao.nn.qat.Linear
    assert nn.intrinsic.ConvReLU2d is ember.ao.nn.intrinsic.ConvReLU2d
    assert nn.quantized.Linear is ember.ao.nn.quantized.Linear
    assert nn.common_types.Tensor is ember.Tensor


def test_weight_memory_format_and_init_sparse():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Sequential(nn.ConvTranspose2d(4, 2, 3)))
    p = m[0].weight
    before = _np(p).copy()
    assert nn.utils.convert_conv2d_weight_memory_format(m, ember.channels_last) is m
    assert m[0].weight is p and p.is_contiguous(memory_format=ember.channels_last)
    assert m[1][0].weight.is_contiguous(memory_format=ember.channels_last)
    np.testing.assert_array_equal(_np(p), before)
    m3 = nn.Conv3d(2, 2, 2)
    nn.utils.convert_conv3d_weight_memory_format(m3, ember.channels_last_3d)
    assert m3.weight.is_contiguous(memory_format=ember.channels_last_3d)
    w = ember.empty(10, 4)
    with pytest.warns(FutureWarning, match="nn.init.sparse_"):
        nn.init.sparse(w, 0.3)
    assert ((_np(w) == 0).sum(0) >= 3).all()


def test_sync_batchnorm_without_process_group_is_batchnorm():
    torch = _torch()
    x = np.random.default_rng(3).standard_normal((4, 3, 5)).astype(np.float32)
    sbn, tbn = nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    for train in (True, False):
        sbn.train(train)
        tbn.train(train)
        np.testing.assert_allclose(
            _np(sbn(ember.tensor(x))), tbn(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5
        )
    np.testing.assert_allclose(_np(sbn.running_var), tbn.running_var.numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="at least 2D"):
        sbn(ember.randn(3))


def test_convert_sync_batchnorm_keeps_parameters():
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Sequential(nn.BatchNorm2d(2)))
    weight = model[1].weight
    model[1].running_mean.fill_(0.5)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=None)
    assert converted is model
    assert type(model[1]) is nn.SyncBatchNorm and type(model[2][0]) is nn.SyncBatchNorm
    assert model[1].weight is weight and float(model[1].running_mean[0]) == 0.5
    single = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm3d(2).eval())
    assert type(single) is nn.SyncBatchNorm and not single.training
    torch = _torch()
    tmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(
        torch.nn.Sequential(torch.nn.BatchNorm1d(3))
    )
    assert repr(model[1]) == repr(tmodel[0])


SYNC_BODY = """
dist.init_process_group("gloo")
nn = M.nn
rng = np.random.default_rng(5)
full = rng.standard_normal((4 * WORLD, 3, 5)).astype(np.float32)
mine = full[4 * RANK : 4 * RANK + 4]
bn = nn.SyncBatchNorm(3)
try:
    bn(M.tensor(mine))
    raise SystemExit("expected ValueError for CPU input")
except ValueError as e:
    assert "expected input tensor to be on GPU" in str(e), e
bn.eval()
assert bn(M.tensor(mine)).shape == (4, 3, 5)   # evaluation needs no synchronization
if not AGAINST_TORCH:
    from ember.nn.modules.syncbatchnorm import _sync_batch_norm
    x = M.tensor(mine, requires_grad=True)
    rm, rv = M.zeros(3), M.ones(3)
    out = _sync_batch_norm(x, None, None, rm, rv, 1e-5, 0.1, dist.group.WORLD)
    mean = full.mean((0, 2)); var = full.var((0, 2))
    want = (full - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
    mine_want = want[4 * RANK : 4 * RANK + 4]
    np.testing.assert_allclose(out.detach().numpy(), mine_want, rtol=1e-4, atol=1e-4)
    n = full.shape[0] * full.shape[2]
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * var * n / (n - 1), rtol=1e-5)
    # the gradient covers every rank's batch: a loss summed over ranks of out * w
    w = rng.standard_normal(full.shape).astype(np.float32)
    (out * M.tensor(w[4 * RANK : 4 * RANK + 4])).sum().backward()
    std = np.sqrt(var[None, :, None] + 1e-5)
    xhat = (full.astype(np.float64) - mean[None, :, None]) / std
    g = w.astype(np.float64)
    gm = g.mean((0, 2), keepdims=True); gx = (g * xhat).mean((0, 2), keepdims=True)
    want_grad = ((g - gm - xhat * gx) / std)[4 * RANK : 4 * RANK + 4]
    np.testing.assert_allclose(x.grad.numpy(), want_grad, rtol=1e-3, atol=1e-3)
dist.destroy_process_group()
print("OK")
"""


def test_sync_batchnorm_across_processes(tmp_path):
    for _, out in run_workers(tmp_path, SYNC_BODY, 2, timeout=120):
        assert "OK" in out, out
