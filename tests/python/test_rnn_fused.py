"""The fused recurrent layer (ops/rnn.cpp): RNN/LSTM/GRU and the cells against torch in every
option, gradcheck and gradgradcheck of the layer op in float64, and its fallback paths."""

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import gradcheck, gradgradcheck

rnn_layer = ember._C._nn.rnn_layer
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _torch():
    return pytest.importorskip("torch")


def _e(t, requires_grad=False):
    x = ember.tensor(t.detach().numpy())
    return x.requires_grad_() if requires_grad else x


def _check(e, t, what):
    np.testing.assert_allclose(
        e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=what
    )


def _pair(torch, name, args, kwargs, dtype):
    torch.manual_seed(0)
    t_mod = getattr(torch.nn, name)(*args, **kwargs).to(dtype)
    e_mod = getattr(nn, name)(*args, **kwargs)
    with ember.no_grad():
        for (n, tp), (m, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
            assert n == m
            setattr(e_mod, n, nn.Parameter(_e(tp)))
    return t_mod, e_mod


LAYERS = [
    ("LSTM", {}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("LSTM", {"bidirectional": True, "num_layers": 2}),
    ("LSTM", {"num_layers": 3, "dropout": 0.3, "batch_first": True, "bidirectional": True}),
    ("GRU", {}),
    ("GRU", {"bias": False, "bidirectional": True}),
    ("GRU", {"num_layers": 2, "batch_first": True}),
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "bidirectional": True, "num_layers": 2}),
    ("RNN", {"nonlinearity": "relu", "bias": False, "batch_first": True}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("name,kwargs", LAYERS)
def test_layer_matches_torch(name, kwargs, with_state, dtype):
    torch = _torch()
    tdt = getattr(torch, dtype)
    t_mod, e_mod = _pair(torch, name, (5, 7), kwargs, tdt)
    t_mod.eval(), e_mod.eval()  # dropout off: its draws differ between the libraries
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    shape = (3, 6, 5) if kwargs.get("batch_first") else (6, 3, 5)
    x = torch.randn(shape, dtype=tdt, requires_grad=True)
    state = None
    if with_state:
        h = torch.randn(layers, 3, 7, dtype=tdt, requires_grad=True)
        c = torch.randn(layers, 3, 7, dtype=tdt, requires_grad=True)
        state = (h, c) if name == "LSTM" else h
    e_x = _e(x, True)
    e_state = None
    if state is not None:
        e_state = tuple(_e(s, True) for s in state) if name == "LSTM" else _e(state, True)
    t_out, t_h = t_mod(x, state)
    e_out, e_h = e_mod(e_x, e_state)
    t_flat = [t_out, *(t_h if name == "LSTM" else (t_h,))]
    e_flat = [e_out, *(e_h if name == "LSTM" else (e_h,))]
    for i, (a, b) in enumerate(zip(t_flat, e_flat)):
        _check(b, a, f"output {i}")
    weights = [torch.randn(a.shape, dtype=tdt) for a in t_flat]
    sum((a * w).sum() for a, w in zip(t_flat, weights)).backward()
    sum((b * _e(w)).sum() for b, w in zip(e_flat, weights)).backward()
    for (n, tp), (_, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
        _check(ep.grad, tp.grad, n)
    _check(e_x.grad, x.grad, "input")
    if state is not None:
        for i, (a, b) in enumerate(
            zip(state if name == "LSTM" else (state,), e_state if name == "LSTM" else (e_state,))
        ):
            _check(b.grad, a.grad, f"state {i}")


@pytest.mark.parametrize("output", ["out", "h_n", "c_n"])
def test_lstm_gradient_of_one_output(output):
    # Undefined incoming gradients for the other outputs take the zero path in the backward.
    torch = _torch()
    t_mod, e_mod = _pair(torch, "LSTM", (4, 6), {"bidirectional": True}, torch.float32)
    x = torch.randn(5, 2, 4, requires_grad=True)
    e_x = _e(x, True)
    pick = {"out": lambda r: r[0], "h_n": lambda r: r[1][0], "c_n": lambda r: r[1][1]}[output]
    pick(t_mod(x)).pow(2).sum().backward()
    pick(e_mod(e_x)).pow(2).sum().backward()
    _check(e_x.grad, x.grad, "input")
    for (n, tp), (_, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
        _check(ep.grad, tp.grad, n)


CELLS = [
    ("LSTMCell", {}),
    ("LSTMCell", {"bias": False}),
    ("GRUCell", {}),
    ("GRUCell", {"bias": False}),
    ("RNNCell", {}),
    ("RNNCell", {"nonlinearity": "relu", "bias": False}),
]


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name,kwargs", CELLS)
def test_cell_matches_torch(name, kwargs, batched):
    torch = _torch()
    t_mod, e_mod = _pair(torch, name, (5, 7), kwargs, torch.float32)
    lead = (3,) if batched else ()
    x = torch.randn(*lead, 5, requires_grad=True)
    h = torch.randn(*lead, 7, requires_grad=True)
    c = torch.randn(*lead, 7, requires_grad=True)
    state = (h, c) if name == "LSTMCell" else h
    e_x, e_h, e_c = _e(x, True), _e(h, True), _e(c, True)
    e_state = (e_h, e_c) if name == "LSTMCell" else e_h
    t_res, e_res = t_mod(x, state), e_mod(e_x, e_state)
    t_res = t_res if isinstance(t_res, tuple) else (t_res,)
    e_res = e_res if isinstance(e_res, tuple) else (e_res,)
    for a, b in zip(t_res, e_res):
        _check(b, a, "output")
    sum((a * (i + 1)).sum() for i, a in enumerate(t_res)).backward()
    sum((b * (i + 1)).sum() for i, b in enumerate(e_res)).backward()
    for (n, tp), (_, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
        _check(ep.grad, tp.grad, n)
    _check(e_x.grad, x.grad, "input")
    _check(e_h.grad, h.grad, "h")
    if name == "LSTMCell":
        _check(e_c.grad, c.grad, "c")


def _layer_inputs(mode, bias, steps=3, batch=2, inp=3, hidden=2, seed=0):
    g = np.random.default_rng(seed)

    def r(*shape):
        return ember.tensor(g.standard_normal(shape), dtype=ember.float64).requires_grad_()

    gates = GATES[mode] * hidden
    x, h = r(steps, batch, inp), r(batch, hidden)
    c = r(batch, hidden) if mode == "LSTM" else None
    w_ih, w_hh = r(gates, inp), r(gates, hidden)
    b_ih, b_hh = (r(gates), r(gates)) if bias else (None, None)
    return [x, h, c, w_ih, w_hh, b_ih, b_hh]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("mode", list(GATES))
def test_layer_op_gradcheck(mode, bias, reverse):
    args = _layer_inputs(mode, bias)
    present = [i for i, a in enumerate(args) if a is not None]

    def fn(*tensors):
        full = list(args)
        for i, t in zip(present, tensors):
            full[i] = t
        out, h, c = rnn_layer(*full, mode, reverse)
        return (out, h) if c is None else (out, h, c)

    inputs = tuple(args[i] for i in present)
    assert gradcheck(fn, inputs)
    # create_graph: the node differentiates the layer rerun in public ops.
    assert gradgradcheck(fn, inputs)


def test_layer_op_empty_sequence():
    args = _layer_inputs("LSTM", True, steps=0)
    out, h, c = rnn_layer(*args, "LSTM", False)
    assert tuple(out.shape) == (0, 2, 2)
    np.testing.assert_array_equal(h.detach().numpy(), args[1].detach().numpy())
    (h.sum() + c.sum()).backward()
    np.testing.assert_array_equal(args[1].grad.numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(args[3].grad.numpy(), np.zeros((8, 3)))


def test_layer_op_other_dtype_takes_the_composite_path():
    # bfloat16 has no fused kernel; the composite gives the same numbers as float32 rounded.
    args = _layer_inputs("GRU", True)
    ref = rnn_layer(*[a.detach().float() if a is not None else None for a in args], "GRU", False)
    low = rnn_layer(*[a.detach().bfloat16() if a is not None else None for a in args], "GRU", False)
    np.testing.assert_allclose(low[0].float().numpy(), ref[0].numpy(), atol=0.05)
