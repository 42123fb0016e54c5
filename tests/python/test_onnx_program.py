"""ember.onnx.export with torch 2.13's default (dynamo=True): an ONNXProgram that saves (also with
external data), runs with ONNX Runtime on ember tensors, optimizes (constant folding) and takes
new weights; dynamic_shapes, keep_initializers_as_inputs, report/verify/profile, an
ExportedProgram as the model."""

import os
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4, bias=False)
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(ember.relu(self.fc(x)))


def _model():
    ember.manual_seed(0)
    return Net().eval()


def test_program_saves_runs_and_names_inputs_after_forward(tmp_path):
    model, x = _model(), ember.randn(3, 6)
    program = ember.onnx.export(model, (x,), tmp_path / "m.onnx")
    assert isinstance(program, ember.onnx.ONNXProgram)
    assert [i.name for i in program.model_proto.graph.input] == ["x"]
    assert onnx.load(str(tmp_path / "m.onnx")) == program.model_proto
    (got,) = program(x)
    assert isinstance(got, ember.Tensor)
    np.testing.assert_allclose(got.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    program.save(tmp_path / "again.onnx")
    assert (tmp_path / "again.onnx").read_bytes() == (tmp_path / "m.onnx").read_bytes()
    assert "ONNXProgram(inputs=[x]" in repr(program)
    program.release()
    with pytest.raises(ValueError, match="takes 1 inputs"):
        program(x, x)


def test_optimize_folds_constants():
    model, x = _model(), ember.randn(2, 3, 6)
    raw = ember.onnx.export(model, (x,), optimize=False)
    ops = [n.op_type for n in raw.model_proto.graph.node]
    assert "Transpose" in ops  # the bias-free Linear's weight, transposed in the graph
    raw.optimize()
    assert "Transpose" not in [n.op_type for n in raw.model_proto.graph.node]
    (got,) = raw(x)
    np.testing.assert_allclose(got.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_dynamic_shapes_become_symbolic_dims():
    from ember.export import Dim

    model = _model()
    program = ember.onnx.export(
        model, (ember.randn(3, 6),), dynamic_shapes={"x": {0: Dim("batch")}}
    )
    dim = program.model_proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "batch"
    x = ember.randn(7, 6)
    (got,) = program(x)
    np.testing.assert_allclose(got.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    positional = ember.onnx.export(model, (ember.randn(3, 6),), dynamic_shapes=([Dim("n"), None],))
    assert positional.model_proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "n"


def test_apply_weights_and_initializers_as_inputs(tmp_path):
    model, x = _model(), ember.randn(3, 6)
    program = ember.onnx.export(model, (x,), optimize=False)
    names = [t.name for t in program.model_proto.graph.initializer]
    assert "out.bias" in names
    program.apply_weights({"out.bias": ember.tensor([10.0, -10.0])})
    with ember.no_grad():
        model.out.bias.copy_(ember.tensor([10.0, -10.0]))
    (got,) = program(x)
    np.testing.assert_allclose(got.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="out.bias"):
        program.apply_weights({"out.bias": ember.zeros(3)})
    program.save(tmp_path / "k.onnx", keep_initializers_as_inputs=True)
    inputs = [i.name for i in onnx.load(str(tmp_path / "k.onnx")).graph.input]
    assert inputs[0] == "x" and set(names) <= set(inputs)
    program.save(tmp_path / "bare.onnx", include_initializers=False)
    assert len(onnx.load(str(tmp_path / "bare.onnx")).graph.initializer) == 0


def test_external_data(tmp_path):
    model, x = _model(), ember.randn(3, 6)
    program = ember.onnx.export(model, (x,))
    program.save(tmp_path / "ext.onnx", external_data=True)
    assert sorted(os.listdir(tmp_path)) == ["ext.onnx", "ext.onnx.data"]
    loaded = onnx.load(str(tmp_path / "ext.onnx"))  # reads the weights from ext.onnx.data
    reloaded = ember.onnx.ONNXProgram(loaded)
    (got,) = reloaded(x)
    np.testing.assert_allclose(got.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_report_verify_profile(tmp_path):
    model, x = _model(), ember.randn(3, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a correct export verifies without a warning
        ember.onnx.export(
            model, (x,), report=True, verify=True, profile=True, artifacts_dir=str(tmp_path)
        )
    (report,) = os.listdir(tmp_path)
    text = (tmp_path / report).read_text()
    assert report.endswith("_report.md") and "| Gemm |" in text
    assert "Verification" in text and "| 0 |" in text and "capture:" in text


def test_exported_program_and_unsupported_table():
    model, x = _model(), ember.randn(3, 6)
    ep = ember.export.export(model, (x,))
    (got,) = ember.onnx.export(ep, (x,))(x)
    np.testing.assert_allclose(got.numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    # The table is supported (test_onnx_s11.py); a value that is not a function is refused.
    with pytest.raises(TypeError, match="custom_translation_table"):
        ember.onnx.export(model, (x,), custom_translation_table={ember.relu: None})
