"""Errors that say where: an op failing inside Module.forward keeps its class and torch's exact
text, and carries a note naming the module path and class, the op, the shapes and dtypes, and the
likely fix."""

import traceback

import pytest

import ember
from ember import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten())
        self.classifier = nn.Sequential(nn.Linear(4 * 6 * 6, 10), nn.ReLU(), nn.Linear(11, 2))

    def forward(self, x):
        return self.classifier(self.features(x))


def _error(fn, *args):
    with pytest.raises(Exception) as e:
        fn(*args)
    return e.value


def _note(exc):
    notes = getattr(exc, "__notes__", [])
    assert len(notes) == 1, notes
    return notes[0]


def test_linear_shape_mismatch_names_path_op_shapes_and_fix():
    exc = _error(Net(), ember.randn(2, 3, 8, 8))
    assert type(exc) is RuntimeError
    assert str(exc) == "mat1 and mat2 shapes cannot be multiplied (2x10 and 11x2)"
    note = _note(exc)
    assert note.startswith("In model.classifier.2 (Linear):")
    assert "linear got input [2, 10] (float32); weight [2, 11] (float32)" in note
    assert "in_features=11" in note and "last dimension is 10" in note
    # A traceback prints the note under torch's message.
    printed = "".join(traceback.format_exception(exc))
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied" in printed
    assert "In model.classifier.2 (Linear):" in printed


def test_conv_channels_mismatch():
    exc = _error(Net(), ember.randn(2, 5, 8, 8))
    assert type(exc) is RuntimeError and "to have 3 channels, but got 5 channels" in str(exc)
    note = _note(exc)
    assert note.startswith("In model.features.0 (Conv2d):")
    assert "conv2d got input [2, 5, 8, 8] (float32)" in note
    assert "in_channels=3" in note and "has 5 channels" in note


def test_dtype_mismatch_says_which_side_to_cast():
    exc = _error(nn.Linear(4, 2), ember.ones(3, 4, dtype=ember.float64))
    assert type(exc) is RuntimeError
    note = _note(exc)
    assert note.startswith("In model (Linear):")
    assert "input is float64 but the parameters are float32" in note
    assert ".to(torch.float32)" in note


def test_same_text_and_class_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ember):
        lib.manual_seed(0)
    t_exc = _error(torch.nn.Sequential(torch.nn.Linear(4, 3)), torch.ones(2, 5))
    e_exc = _error(nn.Sequential(nn.Linear(4, 3)), ember.ones(2, 5))
    assert type(e_exc) is type(t_exc) and str(e_exc) == str(t_exc)


def test_user_errors_in_nested_modules_get_the_full_path():
    class Bad(nn.Module):
        def forward(self, x):
            raise ValueError("bad input")

    outer = nn.Sequential(nn.Identity(), nn.ModuleDict({"inner": nn.Sequential(Bad())}))
    outer[1].forward = lambda x: outer[1]["inner"](x)
    exc = _error(outer, ember.ones(1))
    assert type(exc) is ValueError and str(exc) == "bad input"
    assert _note(exc).startswith("In model.1.inner.0 (Bad):")


def test_hooks_path_and_not_implemented_untouched():
    m = nn.Sequential(nn.Linear(4, 3))
    m.register_forward_hook(lambda mod, args, out: None)
    exc = _error(m, ember.ones(2, 5))
    assert _note(exc).startswith("In model.0 (Linear):")
    exc = _error(nn.Module())
    assert isinstance(exc, NotImplementedError) and not getattr(exc, "__notes__", None)


def test_an_error_caught_and_reraised_is_annotated_once():
    lin = nn.Linear(4, 3)

    class Retry(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, x):
            try:
                return self.lin(x)
            except RuntimeError:
                return self.lin(x[..., :4])

    assert Retry()(ember.ones(2, 5)).shape == (2, 3)
    exc = _error(Retry(), ember.ones(2, 3))
    assert _note(exc).startswith("In model.lin (Linear):")
