"""detect_anomaly / set_detect_anomaly: NaN from a backward function raises torch's RuntimeError
naming the node, with the forward traceback emitted as torch's warning; graph hooks keep working."""

import warnings

import numpy as np
import pytest

import ember


def _nan_sqrt_backward(x):
    # d sqrt(x)/dx at 0 is inf; times a zero upstream gradient gives NaN in SqrtBackward0
    return ember.autograd.grad(x.sqrt().sum() * 0, x)


def test_nan_in_backward_raises_with_node_name_and_forward_traceback():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = x.sqrt()  # the forward line the warning must show
            with pytest.raises(
                RuntimeError,
                match=r"Function 'SqrtBackward0' returned nan values in its 0th output\.",
            ):
                ember.autograd.grad(y.sum() * 0, x)
    texts = [str(w.message) for w in caught]
    assert any("Anomaly Detection has been enabled" in t for t in texts)
    tb = [t for t in texts if t.startswith("Error detected in SqrtBackward0.")]
    assert tb, texts
    assert "Traceback of forward call that caused the error:" in tb[0]
    assert "y = x.sqrt()  # the forward line the warning must show" in tb[0]
    assert "test_anomaly.py" in tb[0]


def test_output_index_in_message():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            with pytest.raises(
                RuntimeError, match="'DivBackward0' returned nan values in its 1th output"
            ):
                (x / x).sum().backward()


def test_off_by_default_and_check_nan_false():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    (g,) = _nan_sqrt_backward(x)  # no anomaly mode: NaN passes silently, as in torch
    assert np.isnan(g.numpy()[0])
    assert not ember.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly(check_nan=False):
            assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
            (g,) = _nan_sqrt_backward(x)
            assert np.isnan(g.numpy()[0])
    assert not ember.is_anomaly_enabled()


def test_set_detect_anomaly_and_decorator():
    x = ember.tensor([0.0, 4.0], requires_grad=True)
    with ember.autograd.set_detect_anomaly(True):
        assert ember.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            _nan_sqrt_backward(x)
    assert not ember.is_anomaly_enabled()
    ember.autograd.set_detect_anomaly(True)
    try:
        with pytest.raises(RuntimeError, match="returned nan values"):
            _nan_sqrt_backward(x)
    finally:
        ember.autograd.set_detect_anomaly(False)
    assert not ember.is_anomaly_enabled()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @ember.autograd.detect_anomaly()
        def run():
            assert ember.is_anomaly_enabled()
            return _nan_sqrt_backward(x)

    with pytest.raises(RuntimeError, match="returned nan values"):
        run()
    assert not ember.is_anomaly_enabled()


def test_other_backward_errors_carry_the_forward_traceback():
    class Boom(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    x = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = Boom.apply(x)  # forward of the failing node
            with pytest.raises(ValueError, match="boom in backward"):
                y.sum().backward()
    tb = [str(w.message) for w in caught if str(w.message).startswith("Error detected in")]
    assert tb and "BoomBackward" in tb[0] and "y = Boom.apply(x)" in tb[0]


def test_forward_outside_anomaly_mode_has_no_traceback():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="SqrtBackward0"):
                ember.autograd.grad(y.sum() * 0, x)
    tb = [str(w.message) for w in caught if str(w.message).startswith("Error detected in")]
    assert tb and "No forward pass information available" in tb[0]


def test_graph_hooks_and_normal_backward_unaffected():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            y = x * x
            y.grad_fn.register_hook(lambda gi, go: seen.append("post"))
            y.grad_fn.register_prehook(lambda go: seen.append("pre"))
            h = y.register_hook(lambda g: g * 2)
            y.sum().backward()
            h.remove()
    assert seen == ["pre", "post"]
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_matches_torch_texts():
    torch = pytest.importorskip("torch")
    msgs = []
    for lib in (torch, ember):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                try:
                    lib.autograd.grad(x.sqrt().sum() * 0, x)
                except RuntimeError as e:
                    msgs.append(str(e))
    assert msgs[0] == msgs[1]
