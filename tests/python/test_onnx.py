"""ember.onnx.export: models exported, checked with onnx.checker and run with onnxruntime, their
outputs matching ember's; the API (names, dynamic axes, opsets, file objects, errors).

The per-layer families are in test_onnx_layers.py, which uses `roundtrip` from here."""

import io
import os

import numpy as np
import pytest

import ember
import ember.nn as nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _flat(x, out):
    if isinstance(x, (tuple, list)):
        for v in x:
            _flat(v, out)
    elif x is not None:
        out.append(x)
    return out


def _run(data, inputs):
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, [t.numpy() for t in inputs])))


def roundtrip(model, args, rtol=1e-4, atol=1e-5, run_args=None, **kw):
    """Exports `model`, checks the model, compares onnxruntime with ember on `args` (and on
    `run_args`, other example inputs, when given); returns the ModelProto."""
    args = args if isinstance(args, tuple) else (args,)
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf, dynamo=False, **kw)
    data = buf.getvalue()
    proto = onnx.load_from_string(data)
    onnx.checker.check_model(proto, full_check=True)
    model.eval()
    for inputs in [args] + ([run_args] if run_args is not None else []):
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        with ember.no_grad():
            expected = _flat(model(*inputs), [])
        tensors = _flat([a for a in inputs if not isinstance(a, (int, float, bool))], [])
        got = _run(data, tensors)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == tuple(e.shape)
            np.testing.assert_allclose(g, e.numpy(), rtol=rtol, atol=atol)
    return proto


def _ops(proto):
    return [n.op_type for n in proto.graph.node]


def fashion_cnn():
    """The model of examples/fashion_mnist.py."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 7 * 7, 128),
        nn.ReLU(),
        nn.Dropout(0.25),
        nn.Linear(128, 10),
    )


def _trained_stats(model, x):
    # Non-trivial running statistics for the BatchNorm layers.
    model.train()
    with ember.no_grad():
        for _ in range(3):
            model(x)
    model.eval()
    return model


def test_fashion_mnist_cnn():
    ember.manual_seed(0)
    model = _trained_stats(fashion_cnn(), ember.randn(8, 1, 28, 28))
    proto = roundtrip(model, ember.randn(2, 1, 28, 28))
    assert _ops(proto) == [
        "Conv", "BatchNormalization", "Relu", "MaxPool",
        "Conv", "BatchNormalization", "Relu", "MaxPool",
        "Flatten", "Gemm", "Relu", "Identity", "Gemm",
    ]  # fmt: skip
    assert {i.name for i in proto.graph.initializer} >= {"0.weight", "1.running_mean", "9.bias"}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = x.view(x.size(0), -1)
        h = nn.functional.gelu(self.fc1(x))
        h = self.norm(h) * 0.5 + 1
        return ember.log_softmax(self.fc2(h), dim=1)


def test_mlp_and_dynamic_batch():
    ember.manual_seed(0)
    model = MLP()
    proto = roundtrip(
        model,
        ember.randn(3, 4, 5),
        run_args=ember.randn(7, 4, 5),
        input_names=["images"],
        output_names=["logits"],
        dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
    )
    (inp,) = proto.graph.input
    (out,) = proto.graph.output
    assert (inp.name, out.name) == ("images", "logits")
    assert inp.type.tensor_type.shape.dim[0].dim_param == "batch"
    assert out.type.tensor_type.shape.dim[0].dim_param == "batch"
    assert [d.dim_value for d in inp.type.tensor_type.shape.dim[1:]] == [4, 5]
    assert "Shape" in _ops(proto)  # the reshape reads the batch size at run time


def test_dynamic_batch_cnn_list_form():
    ember.manual_seed(0)
    model = _trained_stats(fashion_cnn(), ember.randn(8, 1, 28, 28))
    proto = roundtrip(
        model,
        ember.randn(2, 1, 28, 28),
        run_args=ember.randn(5, 1, 28, 28),
        input_names=["x"],
        dynamic_axes={"x": [0]},
    )
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "x_dynamic_axes_1"


def test_static_export_bakes_sizes():
    proto = roundtrip(MLP(), ember.randn(3, 4, 5))
    assert "Shape" not in _ops(proto)
    assert proto.opset_import[0].version == ember.onnx.DEFAULT_OPSET == 17


class Functions(nn.Module):
    """The functions and methods the training stack's models use, with tuple outputs."""

    def forward(self, x, y):
        b = x.shape[0]
        a = (x + 1) * 2 - y / 4
        a = a.permute(0, 2, 1).transpose(1, 2).contiguous()
        a = ember.cat([a, y.unsqueeze(1).squeeze(1)], dim=2)
        s = ember.stack([a.sum(dim=2), a.mean(dim=2)], dim=-1)
        p = a[:, 1:, ::2] ** 2
        q = a[..., -1].reshape(b, -1).relu()
        n = (x > 0).sum(dim=(1, 2))
        first, second = a.chunk(2, dim=1)
        return (
            s,
            (p, q.flatten()),
            n,
            ember.matmul(first, second.transpose(1, 2)),
            1.0 - ember.sigmoid(x),
        )


def test_functions_methods_and_tuple_outputs():
    ember.manual_seed(0)
    args = (ember.randn(2, 4, 3), ember.randn(2, 4, 3))
    proto = roundtrip(
        Functions(),
        args,
        run_args=(ember.randn(5, 4, 3), ember.randn(5, 4, 3)),
        dynamic_axes={"x": {0: "b"}, "y": {0: "b"}},
    )
    assert len(proto.graph.output) == 6
    assert proto.graph.output[3].type.tensor_type.elem_type == onnx.TensorProto.INT64


class IntMath(nn.Module):
    def forward(self, idx, x):
        j = (idx * 2 + 1) // 3 - idx % 2
        return j, x * idx, idx / 2, (x * 3).to(ember.int64)


def test_scalar_dtypes():
    idx = ember.tensor([[0, 1, 2], [3, 4, 5]])
    proto = roundtrip(IntMath(), (idx, ember.randn(2, 3)))
    types = [o.type.tensor_type.elem_type for o in proto.graph.output]
    T = onnx.TensorProto
    assert types == [T.INT64, T.FLOAT, T.FLOAT, T.INT64]


def test_path_and_file_object(tmp_path):
    ember.manual_seed(0)
    model, x = MLP(), ember.randn(2, 20)
    path = tmp_path / "m.onnx"
    assert ember.onnx.export(model, (x,), str(path), dynamo=False) is None  # the legacy form
    buf = io.BytesIO()
    ember.onnx.export(model, (x,), buf)
    assert path.read_bytes() == buf.getvalue()
    assert os.listdir(tmp_path) == ["m.onnx"]  # no temporary file left behind
    with open(tmp_path / "f.onnx", "wb") as fh:
        ember.onnx.export(model, x, fh)
    assert (tmp_path / "f.onnx").read_bytes() == buf.getvalue()
    ember.onnx.export(model, (x,), tmp_path / "p.onnx")  # a PathLike
    assert (tmp_path / "p.onnx").read_bytes() == buf.getvalue()


def test_failed_export_leaves_the_file_alone(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"old")
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError):
        ember.onnx.export(nn.Sequential(nn.Unfold(2)), ember.randn(1, 1, 4, 4), str(path))
    assert path.read_bytes() == b"old"


class UsesErfinv(nn.Module):
    def forward(self, x):
        return ember.erfinv(x.tanh())


def test_unsupported_operator_names_it():
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="ember.erfinv"):
        ember.onnx.export(UsesErfinv(), ember.randn(3), io.BytesIO())
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="ember.nn.Unfold"):
        ember.onnx.export(nn.Sequential(nn.Unfold(2)), ember.randn(1, 1, 4, 4), io.BytesIO())
    assert issubclass(ember.onnx.errors.UnsupportedOperatorError, RuntimeError)


def test_opset_versions():
    model, x = MLP(), ember.randn(2, 20)
    for opset in (13, 18, 21):
        proto = roundtrip(model, x, opset_version=opset)
        assert proto.opset_import[0].version == opset
    for bad in (7, 99):
        with pytest.raises(ValueError, match="opset_version"):
            ember.onnx.export(model, x, io.BytesIO(), opset_version=bad)


def test_export_params_false_and_f_none():
    ember.manual_seed(0)
    model, x = nn.Linear(4, 3), ember.randn(2, 4)
    proto = ember.onnx.export(model, (x,), None, export_params=False, dynamo=False)
    assert isinstance(proto, onnx.ModelProto)
    assert len(proto.graph.initializer) == 0
    assert [i.name for i in proto.graph.input] == ["input", "weight", "bias"]
    feeds = [x, model.weight.detach(), model.bias.detach()]
    (got,) = _run(proto.SerializeToString(), feeds)
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_training_modes_restored_and_is_in_onnx_export():
    seen = []

    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            seen.append(ember.onnx.is_in_onnx_export())
            return self.drop(x)

    model = Probe()
    model.train()
    x = ember.randn(2, 3)
    proto = ember.onnx.export(model, (x,), None, dynamo=False)
    (got,) = _run(proto.SerializeToString(), [x])
    np.testing.assert_array_equal(got, x.numpy())  # exported in eval mode: no dropout
    assert model.training and model.drop.training  # back in train mode after export
    # The dynamo form takes the model as it is, as torch's does: train-mode dropout.
    proto = ember.onnx.export(model, (x,)).model_proto
    assert [n.op_type for n in proto.graph.node] == ["Dropout"]
    assert model.training and model.drop.training
    assert seen[0] is True and ember.onnx.is_in_onnx_export() is False


def test_missing_onnx_message(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "onnx":
            raise ImportError("no onnx")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match="pip install onnx"):
        ember.onnx.export(nn.Linear(2, 2), ember.randn(1, 2), io.BytesIO())
