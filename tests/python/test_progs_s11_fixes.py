"""The ember fixes that the session-11 real programs (tests/python/torch_scripts/, listed in
test_real_programs.py) led to, each checked on its own, against torch where it is installed."""

import pytest

import ember
from ember import nn


def _torch():
    return pytest.importorskip("torch")


def test_ema_multi_avg_fn_with_integer_buffers():
    """use_buffers=True hands BatchNorm's long num_batches_tracked to the EMA too: no lerp for
    integers (torch blends them in float and copies back), and one call per dtype group."""
    from ember.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    calls = []
    ema_fn = get_ema_multi_avg_fn(0.5)

    def spy(mine, theirs, n):
        calls.append({t.dtype for t in mine})
        ema_fn(mine, theirs, n)

    ema = AveragedModel(model, multi_avg_fn=spy, use_buffers=True)
    x = ember.arange(8.0).view(4, 2)
    for _ in range(3):
        model(x)
        ema.update_parameters(model)
    assert len(calls) == 4 and calls.count({ember.float32}) == 2 and calls.count({ember.int64}) == 2
    # num_batches_tracked: 1 (copied), then int(0.5 * 1 + 0.5 * 2) = 1, int(0.5 * 1 + 0.5 * 3) = 2
    assert ema.module[1].num_batches_tracked.item() == 2
    w0 = model[0].weight.detach().clone()
    assert ember.allclose(ema.module[0].weight, w0)  # the weights did not change in between


F = nn.functional

# (call, torch's grad_fn name): composites ember builds from smaller ops.
_NAMED = [
    (lambda x, t: F.mse_loss(x, t), "MseLossBackward0"),
    (lambda x, t: F.mse_loss(x, t, reduction="none"), "MseLossBackward0"),
    (lambda x, t: F.mse_loss(x, t, reduction="sum"), "MseLossBackward0"),
    (lambda x, t: F.smooth_l1_loss(x, t), "SmoothL1LossBackward0"),
    (lambda x, t: F.huber_loss(x, t, reduction="none"), "HuberLossBackward0"),
    (lambda x, t: F.binary_cross_entropy(x.sigmoid(), t.sigmoid()), "BinaryCrossEntropyBackward0"),
    (
        lambda x, t: F.binary_cross_entropy_with_logits(x, t.sigmoid()),
        "BinaryCrossEntropyWithLogitsBackward0",
    ),
    (lambda x, t: F.soft_margin_loss(x, t.sign()), "SoftMarginLossBackward0"),
    (lambda x, t: F.multi_margin_loss(x, ember.tensor([0, 1, 2, 3])), "MultiMarginLossBackward0"),
    (lambda x, t: F.cross_entropy(x, ember.tensor([0, 1, 2, 3])), "NllLossBackward0"),
    (
        lambda x, t: F.cross_entropy(x, ember.tensor([0, 1, 2, 3]), reduction="none"),
        "NllLossBackward0",
    ),
    (
        lambda x, t: F.cross_entropy(x, ember.tensor([0, 1, 2, 3]), label_smoothing=0.1),
        "AddBackward0",
    ),
    (
        lambda x, t: F.cross_entropy(x.view(1, 4, 5), ember.zeros(1, 5, dtype=ember.int64)),
        "NllLoss2DBackward0",
    ),
    (lambda x, t: F.nll_loss(x, ember.tensor([0, 1, 2, 3]), reduction="none"), "NllLossBackward0"),
    (lambda x, t: F.glu(x[:, :4]), "GluBackward0"),
    (lambda x, t: F.celu(x), "CeluBackward0"),
    (lambda x, t: F.prelu(x, ember.tensor([0.25])), "PreluKernelBackward0"),
    (lambda x, t: F.group_norm(x.view(4, 5, 1), 5), "NativeGroupNormBackward0"),
    (lambda x, t: F.pairwise_distance(x, t), "NormBackward1"),
    (lambda x, t: F.pixel_shuffle(x.view(1, 4, 5, 1), 2), "PixelShuffleBackward0"),
    (lambda x, t: F.pad(x, (1, 1)), "ConstantPadNdBackward0"),
    (lambda x, t: F.pad(x.view(1, 4, 5), (1, 2), mode="reflect"), "ReflectionPad1DBackward0"),
    (
        lambda x, t: F.pad(x.view(1, 1, 4, 5), (1, 1, 1, 1), mode="replicate"),
        "ReplicationPad2DBackward0",
    ),
    (lambda x, t: F.interpolate(x.view(1, 4, 5), scale_factor=2), "UpsampleNearest1DBackward0"),
    (
        lambda x, t: F.interpolate(x.view(1, 1, 4, 5), scale_factor=2, mode="bilinear"),
        "UpsampleBilinear2DBackward0",
    ),
    (lambda x, t: F.conv1d(x.view(1, 4, 5), ember.ones(2, 4, 3)), "ConvolutionBackward0"),
    (
        lambda x, t: F.scaled_dot_product_attention(*[x.view(1, 1, 4, 5)] * 3),
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),
    (lambda x, t: F.scaled_dot_product_attention(*[x.view(1, 4, 5)] * 3), "UnsafeViewBackward0"),
    (lambda x, t: x.norm(), "LinalgVectorNormBackward0"),
    (lambda x, t: ember.linalg.vector_norm(x, dim=1), "LinalgVectorNormBackward0"),
    (lambda x, t: ember.dist(x, t), "DistBackward0"),
    (lambda x, t: ember.cdist(x, t), "CdistBackward0"),
    (lambda x, t: x.var(), "VarBackward0"),
    (lambda x, t: ember.std(x, dim=1), "StdBackward0"),
    (lambda x, t: x.max(), "MaxBackward1"),
    (lambda x, t: ember.min(x), "MinBackward1"),
    # session 19 (progs14): composites of the C++ ops and of ember.linalg's Functions
    (lambda x, t: x.clamp(0, 1), "ClampBackward1"),
    (lambda x, t: ember.clamp(x, min=t), "ClampBackward0"),
    (lambda x, t: x.clamp_min(0.5), "ClampMinBackward0"),
    (lambda x, t: x.clamp_max(t), "ClampMaxBackward1"),
    (lambda x, t: 1 - x, "RsubBackward1"),
    (lambda x, t: ember.rsub(x, t), "RsubBackward0"),
    (lambda x, t: ember.stack([x, t]), "StackBackward0"),
    (lambda x, t: x.repeat(2, 1), "RepeatBackward0"),
    (lambda x, t: ember.roll(x, 1), "RollBackward0"),
    (lambda x, t: x.tril(), "TrilBackward0"),
    (lambda x, t: ember.triu(x, 1), "TriuBackward0"),
    (lambda x, t: x.diag(), "DiagonalBackward0_copy"),
    (lambda x, t: ember.diag(x[0]), "DiagEmbedBackward0"),
    (lambda x, t: x.trace(), "TraceBackward0"),
    (lambda x, t: ember.addcmul(x, x, t), "AddcmulBackward0"),
    (lambda x, t: ember.addcdiv(x, x, t.abs() + 1), "AddcdivBackward0"),
    (lambda x, t: ember.lerp(x, t, 0.3), "LerpBackward0"),
    (lambda x, t: ember.lerp(x, t, ember.tensor(0.3)), "LerpBackward1"),
    (lambda x, t: x.T.reshape(-1), "UnsafeViewBackward0"),
    (lambda x, t: ember.xlogy(x, t.abs()), "XlogyBackward0"),
    (lambda x, t: ember.logaddexp(x, t), "LogaddexpBackward0"),
    (lambda x, t: ember.std_mean(x, 0)[0], "StdMeanBackward0"),
    (lambda x, t: x.nansum(0), "NansumBackward0"),
    (lambda x, t: ember.rot90(x), "Rot90Backward0"),
    (lambda x, t: ember.block_diag(x, t), "BlockDiagBackward0"),
    (lambda x, t: F.linear(x[0], t[:3], t[0, :3]), "ViewBackward0"),
    (lambda x, t: F.cross_entropy(x, t.softmax(1)), "DivBackward1"),
    (lambda x, t: F.cross_entropy(x, t.softmax(1), reduction="sum"), "NegBackward0"),
    (lambda x, t: ember.linalg.inv(x[:, :4] + 3 * ember.eye(4)), "LinalgInvExBackward0"),
    (lambda x, t: ember.det(x[:, :4]), "LinalgDetBackward0"),
    (lambda x, t: ember.linalg.slogdet(x[:, :4]).sign, "LinalgSlogdetBackward0"),
    (lambda x, t: ember.linalg.solve(x[:, :4] + 3 * ember.eye(4), t), "LinalgSolveExBackward0"),
    (lambda x, t: ember.linalg.svd(x)[0], "LinalgSvdBackward0"),
    (lambda x, t: ember.linalg.qr(x)[1], "LinalgQrBackward0"),
    (lambda x, t: ember.linalg.eigvalsh(x[:, :4] @ x[:, :4].T), "LinalgEighBackward0"),
    (
        lambda x, t: ember.linalg.cholesky(x[:, :4] @ x[:, :4].T + ember.eye(4)),
        "LinalgCholeskyExBackward0",
    ),
    (lambda x, t: ember.matrix_exp(x[:, :4] / 4), "LinalgMatrixExpBackward0"),
    (
        lambda x, t: F.affine_grid(x[None, :2, :3], [1, 1, 2, 2], False),
        "AffineGridGeneratorBackward0",
    ),
    (
        lambda x, t: F.grid_sample(x.view(1, 1, 4, 5), t[:2].reshape(1, 1, 5, 2).tanh()),
        "GridSampler2DBackward0",
    ),
    # session 19 (progs15)
    (lambda x, t: ember.einsum("ij->j", x), "SumBackward1"),
    (lambda x, t: ember.einsum("ii", x[:, :4]), "SumBackward1"),
    (lambda x, t: ember.einsum("ij->ji", x), "PermuteBackward0"),
    (lambda x, t: x.masked_select(t > 0), "MaskedSelectBackward0"),
    (lambda x, t: x.take(ember.tensor([0, 7])), "TakeBackward0"),
    (lambda x, t: x.index_fill(1, ember.tensor([0]), 2.0), "IndexFillBackward0"),
    (lambda x, t: x.index_fill(1, ember.tensor([0]), ember.tensor(2.0)), "IndexFillBackward1"),
    (lambda x, t: x.scatter(1, ember.tensor([[0], [1], [2], [3]]), 3.0), "ScatterBackward1"),
    (lambda x, t: ember.kron(x[0], t[1]), "UnsafeViewBackward0"),
    (lambda x, t: ember.cov(x), "SqueezeBackward0"),
    (lambda x, t: ember.trapezoid(x), "MulBackward1"),
    (lambda x, t: ember.trapezoid(x, t[0]), "DivBackward1"),
    (lambda x, t: ember.cross(x[:, :3], t[:, :3], dim=1), "LinalgCrossBackward0"),
    (lambda x, t: ember.logit(x.sigmoid(), 1e-3), "LogitBackward0"),
    (lambda x, t: ember.polar(x, t), "PolarBackward0"),
    (lambda x, t: F.pdist(x), "PdistBackward0"),
    (lambda x, t: ember.linalg.matrix_power(x[:, :4], 0), "CopyBackwards"),
    (lambda x, t: ember.linalg.matrix_power(x[:, :4], 1), "CloneBackward0"),
]


@pytest.mark.parametrize("call,name", _NAMED, ids=[n for _, n in _NAMED])
def test_composite_grad_fn_names_are_torchs(call, name):
    x = ember.linspace(-1.5, 2.0, 20).view(4, 5).requires_grad_()
    t = ember.linspace(0.5, -1.0, 20).view(4, 5)
    assert type(call(x, t).grad_fn).__name__ == name
    with ember.no_grad():
        assert call(x, t).grad_fn is None


def test_composite_grad_fn_names_match_torch_live():
    torch = _torch()
    xs = [1.5 * ((i * 0.37) % 1.0) - 0.6 for i in range(20)]
    ts = [((i * 0.53) % 1.0) - 0.4 for i in range(20)]
    for call, _ in _NAMED:
        got = call(ember.tensor(xs).view(4, 5).requires_grad_(), ember.tensor(ts).view(4, 5))
        ref = _torch_call(torch, call, xs, ts)
        assert type(got.grad_fn).__name__ == type(ref.grad_fn).__name__


def _torch_call(torch, call, xs, ts):
    """Runs `call`, written against ember, on torch (its globals rebound to torch)."""
    import types

    g = dict(call.__globals__, ember=torch, F=torch.nn.functional)
    fn = types.FunctionType(call.__code__, g)
    return fn(torch.tensor(xs).view(4, 5).requires_grad_(), torch.tensor(ts).view(4, 5))


def test_matrix_power_zero_and_one_are_new_tensors_in_the_graph():
    # torch: A**0 is the identity copied into a clone of A (requires grad, zero gradient) and
    # A**1 a clone, not A itself
    a = ember.linspace(-1.0, 1.0, 9).view(3, 3).requires_grad_()
    p0, p1 = ember.linalg.matrix_power(a, 0), ember.linalg.matrix_power(a, 1)
    assert p0.requires_grad and p1 is not a
    assert ember.equal(p0, ember.eye(3)) and ember.equal(p1, a)
    (p0.sum() + 2 * p1.sum()).backward()
    assert ember.equal(a.grad, ember.full((3, 3), 2.0))


def test_renamed_nodes_keep_gradients_views_and_double_backward():
    x = ember.linspace(-1.0, 1.0, 12).view(3, 4).requires_grad_()
    t = ember.linspace(0.3, -0.7, 12).view(3, 4)
    loss = F.mse_loss(x, t)
    (g,) = ember.autograd.grad(loss, x, create_graph=True)
    assert ember.allclose(g, 2 * (x - t) / 12)
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert ember.allclose(gg, ember.full((3, 4), 2.0 / 12))
    names = [type(n).__name__ for n, _ in loss.grad_fn.next_functions]
    assert names == ["MeanBackward0"]  # the composite's own nodes are still below
    y = F.pixel_shuffle(x.view(1, 4, 3, 1) * 1.0, 2)
    y.mul_(3)  # an in-place write on the renamed view result
    y.sum().backward()
    assert ember.allclose(x.grad, ember.full((3, 4), 3.0))


_WINDOWS = [
    ("bartlett", {}),
    ("blackman", {}),
    ("cosine", {}),
    ("exponential", {"tau": 2.5}),
    ("gaussian", {"std": 1.7}),
    ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_hamming", {"alpha": 0.6}),
    ("hamming", {}),
    ("hann", {}),
    ("kaiser", {"beta": 5.0}),
    ("nuttall", {}),
]


def test_signal_windows_by_hand():
    import math

    W = ember.signal.windows
    assert W.hann(5).tolist() == pytest.approx([0.0, 0.5, 1.0, 0.5, 0.0], abs=1e-7)
    assert W.hann(4, sym=False).tolist() == pytest.approx([0.0, 0.5, 1.0, 0.5], abs=1e-7)
    assert W.bartlett(5).tolist() == pytest.approx([0.0, 0.5, 1.0, 0.5, 0.0])
    assert W.gaussian(3, std=1.0).tolist() == pytest.approx([math.exp(-0.5), 1.0, math.exp(-0.5)])
    assert W.cosine(2).tolist() == pytest.approx([math.sin(math.pi / 4)] * 2)
    assert W.kaiser(3, beta=0.0).tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert W.hamming(1).tolist() == [1.0] and W.hamming(0).shape == (0,)
    assert W.blackman(3, dtype=ember.float64).dtype == ember.float64
    assert W.nuttall(4, requires_grad=True).requires_grad
    with pytest.raises(ValueError, match="non-negative window length"):
        W.hann(-1)
    with pytest.raises(ValueError, match="float32 or float64"):
        W.hann(3, dtype=ember.int64)
    with pytest.raises(ValueError, match="Center must be None"):
        W.exponential(3, center=1.0)
    with pytest.raises(TypeError, match="list/tuple"):
        W.general_cosine(3, a=3)


@pytest.mark.parametrize("name,kw", _WINDOWS, ids=[n for n, _ in _WINDOWS])
def test_signal_windows_match_torch(name, kw):
    torch = _torch()
    for M in (1, 2, 7, 16):
        for sym in (True, False):
            got = getattr(ember.signal.windows, name)(M, sym=sym, **kw).tolist()
            ref = getattr(torch.signal.windows, name)(M, sym=sym, **kw).tolist()
            assert got == pytest.approx(ref, abs=1e-6), (M, sym)


def test_squeeze_overloads_name_their_nodes_as_torch():
    x = ember.ones(1, 3, 1, requires_grad=True)
    assert type(x.squeeze().grad_fn).__name__ == "SqueezeBackward0"
    assert type(x.squeeze(0).grad_fn).__name__ == "SqueezeBackward1"
    assert type(x.squeeze((0, 2)).grad_fn).__name__ == "SqueezeBackward2"
    assert type(F.avg_pool1d(x.view(1, 1, 3), 1).grad_fn).__name__ == "SqueezeBackward1"
    x.squeeze((0, 2)).sum().backward()
    assert x.grad.shape == (1, 3, 1)


def test_slogdet_sign_is_an_output_of_the_node():
    """As torch's, the sign carries the node (printed with its grad_fn); a backward from the
    sign alone leaves the input's gradient undefined, with logabsdet it is inv(A)^T."""
    a = ember.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    sign, logabs = ember.linalg.slogdet(a)
    assert sign.requires_grad and sign.item() == -1.0
    sign.backward(retain_graph=True)
    assert a.grad is None
    (sign + logabs).backward()
    assert ember.allclose(a.grad, ember.linalg.inv(a.detach()).mT)


def test_broadcast_error_names_the_last_mismatching_dim_as_torch():
    # torch's infer_size walks the dims from the right and reports the first mismatch it meets
    with pytest.raises(
        RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\) "
    ):
        ember.ones(2, 3) + ember.ones(3, 2)
    with pytest.raises(RuntimeError, match="The size of tensor a .* at non-singleton dimension 1"):
        ember.broadcast_tensors(ember.ones(2, 3), ember.ones(3, 2))
