"""ember.onnx.export, the gaps closed in session 11: boolean-mask indexing and index assignment,
train-mode dropout, max pooling with indices and MaxUnpool, LSTM with proj_size,
MultiheadAttention with add_bias_kv / add_zero_attn, and custom_translation_table. Each model is
checked with onnx.checker and run with onnxruntime against ember's eager outputs (and against
torch's exporter where torch and onnxscript are installed)."""

import numpy as np
import pytest

import ember
import ember.nn as nn

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from test_onnx import _run, roundtrip  # noqa: E402

F = nn.functional


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)


def _ops(proto):
    return [n.op_type for n in proto.graph.node]


# -- boolean masks and index assignment ------------------------------------------------------------


class _Mask(nn.Module):
    def forward(self, x, m):
        return x[m] * 2


class _RowMask(nn.Module):
    def forward(self, x):
        return x[x.sum(1) > 0]


class _ColumnMask(nn.Module):
    def forward(self, x):
        return x[:, x[0] > 0] + 1


def test_mask_after_slices():
    roundtrip(_ColumnMask(), ember.randn(3, 6, 2), run_args=ember.randn(3, 6, 2))


def test_mask_select_counts_vary_at_run_time():
    x = ember.randn(4, 3)
    proto = roundtrip(_Mask(), (x, x > 0), run_args=(ember.randn(4, 3), ember.randn(4, 3) > 1))
    assert "NonZero" in _ops(proto) and "GatherND" in _ops(proto)
    dim = proto.graph.output[0].type.tensor_type.shape.dim[0]
    assert not dim.HasField("dim_value")  # the selected count is not baked in
    roundtrip(_RowMask(), ember.randn(5, 3), run_args=ember.randn(5, 3))
    # no element selected
    got = _run(proto.SerializeToString(), [x, ember.zeros(4, 3, dtype=ember.bool)])[0]
    assert got.shape == (0,)


class _AssignMask(nn.Module):
    def forward(self, x):
        x[x < 0] = 0.0
        return x + 1


class _AssignIndex(nn.Module):
    def forward(self, x, v):
        x[:, 1] = v
        x[0] = 5.0
        x[1:3, ::2] = v[:2].unsqueeze(1)
        return x * 2


class _AssignRows(nn.Module):
    def forward(self, x, m, v):
        x[m] = v
        return x


def _assigning(model, args, *others):
    """Exports a model that assigns into its input; compares ORT and eager on fresh copies."""
    before = [a.clone() for a in args]
    proto = ember.onnx.export(model, args, None, dynamo=False)
    onnx.checker.check_model(proto, full_check=True)
    assert all(a.equal(b) for a, b in zip(args, before))  # the capture left the example alone
    for inputs in (args,) + others:
        got = _run(proto.SerializeToString(), [a.clone() for a in inputs])[0]
        want = model(*[a.clone() for a in inputs])
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)


def test_index_assignment():
    _assigning(_AssignMask(), (ember.randn(4, 3),), (ember.randn(4, 3),))
    _assigning(_AssignIndex(), (ember.randn(4, 3), ember.randn(4)))
    m = ember.tensor([True, False, True, False])
    _assigning(_AssignRows(), (ember.randn(4, 3), m, ember.randn(2, 3)))


def test_mask_against_torch_exporter():
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")

    class T(torch.nn.Module):
        def forward(self, x):
            x = x.clone()
            x[x < 0] = 0.0
            return x + 1

    xn = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    tp = torch.onnx.export(T(), (torch.from_numpy(xn),), dynamo=True, verbose=False)
    want = _run(tp.model_proto.SerializeToString(), [torch.from_numpy(xn)])[0]
    ep = ember.onnx.export(_AssignMask(), (ember.from_numpy(xn.copy()),))
    got = _run(ep.model_proto.SerializeToString(), [ember.from_numpy(xn)])[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- train-mode dropout ----------------------------------------------------------------------------


def _dropped(got, x, p):
    kept = got != 0
    frac = 1 - kept.mean()
    assert 0.3 < frac < 0.7  # p = 0.5 over thousands of elements
    np.testing.assert_allclose(got[kept], x[kept] / (1 - p), rtol=1e-5)
    return kept


def test_dropout_training_mode():
    x = ember.randn(64, 40) + 5.0  # no zeros in the input itself
    model = nn.Sequential(nn.Identity(), nn.Dropout(0.5))
    model.train()
    program = ember.onnx.export(model, (x,))  # the dynamo form: as the model is
    assert "Dropout" in _ops(program.model_proto)
    (got,) = _run(program.model_proto.SerializeToString(), [x])
    _dropped(got, x.numpy(), 0.5)
    model.eval()  # the legacy form with training=TRAINING
    proto = ember.onnx.export(
        model, (x,), None, dynamo=False, training=ember.onnx.TrainingMode.TRAINING
    )
    onnx.checker.check_model(proto, full_check=True)
    (got,) = _run(proto.SerializeToString(), [x])
    _dropped(got, x.numpy(), 0.5)
    assert not model.training  # restored
    # channel dropout drops whole (n, c) planes
    x4 = ember.randn(16, 32, 3, 3) + 5.0
    model = nn.Dropout2d(0.5).train()
    (got,) = ember.onnx.export(model, (x4,))(x4)
    got = got.numpy()
    kept = _dropped(got, x4.numpy(), 0.5)
    planes = kept.reshape(16, 32, 9)
    assert (planes.all(-1) | (~planes).all(-1)).all()
    # eval mode stays the identity
    (got,) = ember.onnx.export(model.eval(), (x4,))(x4)
    np.testing.assert_array_equal(got.numpy(), x4.numpy())


# -- pooling indices and MaxUnpool -----------------------------------------------------------------


class _PoolUnpool(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2)

    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i), i


class _UnpoolSized(nn.Module):
    def forward(self, x):
        y, i = F.max_pool1d(x, 3, stride=2, return_indices=True)
        return F.max_unpool1d(y, i, 3, stride=2, output_size=x.shape)


def test_max_pool_indices_and_unpool():
    roundtrip(nn.MaxPool2d(2, return_indices=True), ember.randn(2, 3, 4, 6))
    roundtrip(nn.MaxPool2d(3, 2, 1, return_indices=True), ember.randn(1, 2, 7, 7))
    roundtrip(nn.MaxPool1d(3, stride=2, padding=1, return_indices=True), ember.randn(2, 3, 9))
    roundtrip(nn.MaxPool3d(2, return_indices=True), ember.randn(1, 2, 4, 4, 4))
    proto = roundtrip(_PoolUnpool(), ember.randn(2, 3, 4, 6))
    assert "MaxUnpool" in _ops(proto)
    roundtrip(_UnpoolSized(), ember.randn(2, 3, 10))
    roundtrip(nn.MaxPool2d(2, return_indices=True), ember.randn(3, 4, 6))  # unbatched


def test_max_pool_indices_match_torch():
    torch = pytest.importorskip("torch")
    xn = np.random.RandomState(1).randn(2, 3, 6, 6).astype(np.float32)
    _, want = torch.nn.functional.max_pool2d(torch.from_numpy(xn), 2, return_indices=True)
    proto = ember.onnx.export(
        nn.MaxPool2d(2, return_indices=True), (ember.from_numpy(xn),), None, dynamo=False
    )
    got = _run(proto.SerializeToString(), [ember.from_numpy(xn)])[1]
    np.testing.assert_array_equal(got, want.numpy())


# -- LSTM proj_size, MultiheadAttention extras ---------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(batch_first=True), dict(num_layers=2, bidirectional=True), dict(bias=False)],
)
def test_lstm_proj_size(kw):
    m = nn.LSTM(5, 6, proj_size=3, **kw)
    x = ember.randn(2, 4, 5)
    roundtrip(m, x)
    dirs = 2 if m.bidirectional else 1
    batch = 2 if m.batch_first else 4
    h0 = ember.randn(m.num_layers * dirs, batch, 3)
    c0 = ember.randn(m.num_layers * dirs, batch, 6)
    roundtrip(m, (x, (h0, c0)))


def test_lstm_proj_size_unbatched():
    roundtrip(nn.LSTM(5, 6, proj_size=2), ember.randn(3, 5))


class _MHA(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, q, mask, kpm):
        return self.m(q, q, q, attn_mask=mask, key_padding_mask=kpm)


@pytest.mark.parametrize(
    "kw",
    [
        dict(add_bias_kv=True),
        dict(add_zero_attn=True),
        dict(add_bias_kv=True, add_zero_attn=True, batch_first=True),
    ],
)
def test_multihead_attention_bias_kv_zero_attn(kw):
    m = nn.MultiheadAttention(8, 2, **kw)
    q = ember.randn(2, 3, 8) if kw.get("batch_first") else ember.randn(3, 2, 8)
    roundtrip(m, (q, q, q))
    mask = ember.tensor([[False, True, False], [False, False, True], [True, False, False]])
    kpm = ember.tensor([[False, False, True], [False, True, False]])
    roundtrip(_MHA(m), (q, mask, kpm))
    roundtrip(_MHA(m), (q, ember.randn(3, 3), kpm))


# -- custom_translation_table ----------------------------------------------------------------------


class _Act(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.lin(x)) + F.gelu(x) + x.add(1.0)


def _sigmoid_gelu(x, ops):
    return ops.Mul(ops.Sigmoid(ops.Mul(x, 1.702)), x)


def _expected(model, x):
    h = model.lin(x)
    return (h * ember.sigmoid(1.702 * h) + x * ember.sigmoid(1.702 * x) + x + 1).detach()


def test_custom_translation_table_with_ember_ops():
    from ember.onnx import ops

    model, x = _Act().eval(), ember.randn(3, 4)
    seen = []

    def gelu(x, approximate="none"):
        seen.append(approximate)
        return _sigmoid_gelu(x, ops)

    def add(a, b, alpha=1):
        seen.append("add")
        return ops.Add(a, b)

    table = {ember.ops.aten.gelu: gelu, ember.ops.aten.add.Tensor: add}
    program = ember.onnx.export(model, (x,), custom_translation_table=table)
    onnx.checker.check_model(program.model_proto, full_check=True)
    assert seen.count("none") == 2 and seen.count("add") == 3  # module, function, method, a + b
    assert "Gelu" not in _ops(program.model_proto)
    (got,) = program(x)
    np.testing.assert_allclose(got.numpy(), _expected(model, x).numpy(), rtol=1e-5, atol=1e-6)
    # a function key covers that function (and the modules of the same operator)
    program = ember.onnx.export(model, (x,), custom_translation_table={F.gelu: [gelu]})
    (got,) = program(x)
    np.testing.assert_allclose(got.numpy(), _expected(model, x).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="outside of an export"):
        ops.Relu(x)


def test_custom_translation_table_with_onnxscript():
    onnxscript = pytest.importorskip("onnxscript")
    from onnxscript import opset18 as op

    model, x = _Act().eval(), ember.randn(3, 4)

    def gelu(x, approximate="none"):
        return _sigmoid_gelu(x, op)

    @onnxscript.script()
    def relu_gelu(x):
        return op.Relu(x)

    program = ember.onnx.export(model, (x,), custom_translation_table={ember.ops.aten.gelu: gelu})
    (got,) = program(x)
    np.testing.assert_allclose(got.numpy(), _expected(model, x).numpy(), rtol=1e-5, atol=1e-6)
    program = ember.onnx.export(
        model, (x,), custom_translation_table={ember.ops.aten.gelu: relu_gelu}
    )
    assert _ops(program.model_proto).count("Relu") == 2
    (got,) = program(x)
    h = model.lin(x)
    want = (ember.relu(h) + ember.relu(x) + x + 1).detach()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_custom_translation_table_errors():
    model, x = _Act().eval(), ember.randn(3, 4)
    with pytest.raises(TypeError, match="custom_translation_table"):
        ember.onnx.export(model, (x,), custom_translation_table=[ember.relu])
    from ember.onnx import ops

    def bad(x, approximate="none"):
        return ops.NoSuchOp(x)

    with pytest.raises(ember.onnx.errors.SymbolicValueError, match="NoSuchOp"):
        ember.onnx.export(model, (x,), custom_translation_table={F.gelu: bad})


def test_custom_translation_table_same_function_as_torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    from onnxscript import opset18 as op

    def gelu(x, approximate="none"):  # the function torch's docs would have a user write
        return op.Mul(op.Sigmoid(op.Mul(x, op.CastLike(1.702, x))), x)

    class TAct(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.gelu(x) * 2

    class Act(nn.Module):
        def forward(self, x):
            return F.gelu(x) * 2

    xn = np.random.RandomState(2).randn(3, 4).astype(np.float32)
    tp = torch.onnx.export(
        TAct(),
        (torch.from_numpy(xn),),
        dynamo=True,
        custom_translation_table={torch.ops.aten.gelu.default: gelu},
        verbose=False,
    )
    want = _run(tp.model_proto.SerializeToString(), [torch.from_numpy(xn)])[0]
    ep = ember.onnx.export(
        Act(), (ember.from_numpy(xn),), custom_translation_table={ember.ops.aten.gelu: gelu}
    )
    got = _run(ep.model_proto.SerializeToString(), [ember.from_numpy(xn)])[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert "Gelu" not in _ops(ep.model_proto) and "Gelu" not in _ops(tp.model_proto)
