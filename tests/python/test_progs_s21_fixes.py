"""Fixes found by the session-21 real programs (tests/python/torch_scripts/p17_*)."""

import subprocess
import sys
import textwrap

import pytest

import ember


def _channels_last_param():
    w = ember.arange(120.0).reshape(2, 3, 4, 5).sin()
    return ember.nn.Parameter(w.contiguous(memory_format=ember.channels_last))


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_sgd_momentum_buffer_keeps_the_gradients_layout(weight_decay):
    # torch starts the buffer as grad.clone(): p17_video_r2plus1d's channels_last_3d weights got
    # row-major buffers on ember.
    for fmt, want in [
        (ember.channels_last, (60, 1, 15, 3)),
        (ember.contiguous_format, (60, 20, 5, 1)),
    ]:
        w = _channels_last_param()
        opt = ember.optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=weight_decay)
        w.grad = (w.detach() * 2 + 1).contiguous(memory_format=fmt)
        before = w.detach().clone()
        opt.step()
        buf = opt.state[w]["momentum_buffer"]
        assert buf.stride() == want
        assert w.stride() == (60, 1, 15, 3)
        d = w.grad + weight_decay * before
        assert ember.allclose(buf, d) and ember.allclose(w, before - 0.1 * d)
        opt.step()  # the second step updates the strided buffer in place
        assert opt.state[w]["momentum_buffer"].stride() == want
        assert ember.allclose(
            opt.state[w]["momentum_buffer"], d * 0.9 + w.grad + weight_decay * (before - 0.1 * d)
        )


def test_sgd_momentum_buffer_of_a_transposed_param():
    w = ember.nn.Parameter(ember.ones(3, 4).t())
    opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = ember.ones(3, 4).t()
    opt.step()
    assert opt.state[w]["momentum_buffer"].stride() == (1, 4)
    w.grad = ember.ones(4, 3)
    opt.step()
    assert opt.state[w]["momentum_buffer"].stride() == (1, 4)
    assert ember.allclose(opt.state[w]["momentum_buffer"], ember.full((4, 3), 1.9))


def test_sgd_momentum_skips_a_param_without_grad():
    w = ember.nn.Parameter(ember.ones(3))
    opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
    opt.step()  # a parameter without a gradient is skipped
    assert "momentum_buffer" not in opt.state[w]


def test_functions_held_from_before_a_mode_still_deep_copy_by_name():
    # p17 probe: after a MaskedTensor call (a __torch_function__ subclass: ember then routes the
    # public functions through wrappers), nn.Transformer's deepcopy of a layer holding F.relu
    # raised "cannot pickle '_SparseGuard' object". In a subprocess: the routing stays on.
    code = textwrap.dedent(
        """
        import copy, pickle
        import ember
        import ember.nn.functional as F
        relu = F.relu
        x = ember.linspace(-2, 2, 6)
        ember.masked.masked_tensor(x, x > 0).sum()
        layer = ember.nn.TransformerEncoderLayer(8, 2, 16)
        assert copy.deepcopy(layer).activation == relu
        assert pickle.loads(pickle.dumps(relu)) == relu
        model = ember.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
        print(tuple(model(ember.ones(2, 3, 8), ember.ones(2, 4, 8)).shape))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(2,", "4,", "8)"]
