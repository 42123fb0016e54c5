"""Mappings of the recurrent layers: nn.LSTM, nn.GRU and nn.RNN become ONNX LSTM, GRU and RNN
nodes, one per layer (both directions in one node), with the weights rearranged into ONNX's gate
order: torch's LSTM gates (i, f, g, o) are ONNX's (i, o, f, c), torch's GRU gates (r, z, n) are
ONNX's (z, r, h) with ``linear_before_reset=1`` (torch applies the reset gate after the hidden
projection).

An LSTM with ``proj_size`` (h_t projected by ``weight_hr``) has no ONNX operator: it is unrolled
over the time steps, which must then be static: per step one MatMul of the hidden state, the gate
activations and the projection, in torch's gate order (i, f, g, o)."""

from .. import _C
from ._graph import np
from ._helpers import out_dtype
from ._registry import module
from .errors import SymbolicValueError

# Gate blocks of torch's weights, in ONNX's order.
_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN_TANH": (0,), "RNN_RELU": (0,)}
_OP = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _gates(t, order, hidden):
    a = t.detach().float().numpy() if t is not None else None
    if a is None:
        return None
    return np().concatenate([a[k * hidden : (k + 1) * hidden] for k in order], axis=0)


def _layer_weights(g, m, layer, mode, dtype):
    """W, R, B constants of one layer, both directions stacked (ONNX's [num_directions, ...])."""
    hidden = m.hidden_size
    order = _ORDER[mode]
    ws, rs, bs = [], [], []
    for suffix in [""] + (["_reverse"] if m.bidirectional else []):
        w = _gates(getattr(m, f"weight_ih_l{layer}{suffix}"), order, hidden)
        r = _gates(getattr(m, f"weight_hh_l{layer}{suffix}"), order, hidden)
        if m.bias:
            bi = _gates(getattr(m, f"bias_ih_l{layer}{suffix}"), order, hidden)
            bh = _gates(getattr(m, f"bias_hh_l{layer}{suffix}"), order, hidden)
        else:
            bi = bh = np().zeros((len(order) * hidden,), np().float32)
        ws.append(w)
        rs.append(r)
        bs.append(np().concatenate([bi, bh]))
    name = f"{g.prefix}.l{layer}" if g.prefix else f"l{layer}"
    return (
        g.const(np().stack(ws), dtype, name + ".W"),
        g.const(np().stack(rs), dtype, name + ".R"),
        g.const(np().stack(bs), dtype, name + ".B"),
    )


def _slice0(g, v, start, stop):
    return g.op("Slice", v, g.ints([start]), g.ints([stop]), g.ints([0]))


@module("LSTM", "GRU", "RNN")
def _rnn(g, m, input, hx=None):
    mode = m.mode if m.mode != "RNN" else ("RNN_TANH" if m.nonlinearity == "tanh" else "RNN_RELU")
    if getattr(m, "proj_size", 0):
        return _lstm_projected(g, m, input, hx)
    lstm = mode == "LSTM"
    dirs = 2 if m.bidirectional else 1
    hidden = m.hidden_size
    dtype = out_dtype(g)
    batched = input.rank == 3
    x = input
    if not batched:
        x = g.unsqueeze(x, [1])
    elif m.batch_first:
        x = g.op("Transpose", x, perm=[1, 0, 2])  # ONNX wants (seq, batch, features)
    h0 = c0 = None
    if hx is not None:
        h0, c0 = hx if lstm else (hx, None)
        if not batched:
            h0 = g.unsqueeze(h0, [1])
            c0 = None if c0 is None else g.unsqueeze(c0, [1])
    hs, cs = [], []
    attrs = {"hidden_size": hidden, "direction": "bidirectional" if dirs == 2 else "forward"}
    if mode == "GRU":
        attrs["linear_before_reset"] = 1
    if mode.startswith("RNN"):
        attrs["activations"] = ["Tanh" if mode == "RNN_TANH" else "Relu"] * dirs
    for layer in range(m.num_layers):
        w, r, b = _layer_weights(g, m, layer, mode, dtype)
        ih = None if h0 is None else _slice0(g, h0, layer * dirs, (layer + 1) * dirs)
        extra = []
        if lstm:
            ic = None if c0 is None else _slice0(g, c0, layer * dirs, (layer + 1) * dirs)
            extra = [ic]
        outs = g.op(_OP[mode], x, w, r, b, None, ih, *extra, outputs=3 if lstm else 2, **attrs)
        y, yh = outs[0], outs[1]
        hs.append(yh)
        if lstm:
            cs.append(outs[2])
        # Y is (seq, dirs, batch, hidden): directions side by side as torch's features.
        y = g.op("Transpose", y, perm=[0, 2, 1, 3])
        x = g.op("Reshape", y, g.ints([0, 0, dirs * hidden]))
    h_n = hs[0] if len(hs) == 1 else g.op("Concat", *hs, axis=0)
    c_n = None
    if lstm:
        c_n = cs[0] if len(cs) == 1 else g.op("Concat", *cs, axis=0)
    out = x
    if not batched:
        out = g.squeeze(out, [1])
        h_n = g.squeeze(h_n, [1])
        c_n = None if c_n is None else g.squeeze(c_n, [1])
    elif m.batch_first:
        out = g.op("Transpose", out, perm=[1, 0, 2])
    return (out, (h_n, c_n)) if lstm else (out, h_n)


def _w(g, t, dtype, transpose=True):
    a = t.detach().float().numpy()
    return g.const(a.T.copy() if transpose else a, dtype)


def _lstm_projected(g, m, input, hx):
    dtype = out_dtype(g)
    hidden, proj, dirs = m.hidden_size, m.proj_size, 2 if m.bidirectional else 1
    batched = input.rank == 3
    x = input if batched else g.unsqueeze(input, [1])
    if batched and m.batch_first:
        x = g.op("Transpose", x, perm=[1, 0, 2])
    steps = input.shape[1 if batched and m.batch_first else 0]
    if steps is None:
        raise SymbolicValueError("LSTM: proj_size > 0 needs a static sequence length to unroll")
    if hx is not None:
        h0, c0 = hx
        if not batched:
            h0, c0 = g.unsqueeze(h0, [1]), g.unsqueeze(c0, [1])
    else:
        nb = g.size(input, 0 if batched and m.batch_first else 1) if batched else 1
        zero = g.onnx.helper.make_tensor("value", g.onnx.TensorProto.FLOAT, [1], [0.0])
        h0 = g.cast(
            _t(
                g.op("ConstantOfShape", g.shape_tensor([m.num_layers * dirs, nb, proj]), value=zero)
            ),
            dtype,
        )
        c0 = g.cast(
            _t(
                g.op(
                    "ConstantOfShape", g.shape_tensor([m.num_layers * dirs, nb, hidden]), value=zero
                )
            ),
            dtype,
        )
    hs, cs = [], []
    for layer in range(m.num_layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            k = layer * dirs + d
            wi = _w(g, getattr(m, "weight_ih" + sfx), dtype)
            wh = _w(g, getattr(m, "weight_hh" + sfx), dtype)
            wr = _w(g, getattr(m, "weight_hr" + sfx), dtype)
            xw = g.op("MatMul", x, wi)  # (T, N, 4H)
            if m.bias:
                b = getattr(m, "bias_ih" + sfx) + getattr(m, "bias_hh" + sfx)
                xw = g.op("Add", xw, _w(g, b, dtype, transpose=False))
            h = g.op("Gather", h0, g.const(k, _C.int64), axis=0)
            c = g.op("Gather", c0, g.const(k, _C.int64), axis=0)
            ys = [None] * steps
            for t in reversed(range(steps)) if d else range(steps):
                gates = g.op(
                    "Add", g.op("Gather", xw, g.const(t, _C.int64), axis=0), g.op("MatMul", h, wh)
                )
                i, f, cand, o = g.op("Split", gates, g.ints([hidden] * 4), axis=1, outputs=4)
                c = g.op(
                    "Add",
                    g.op("Mul", g.op("Sigmoid", f), c),
                    g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", cand)),
                )
                h = g.op("MatMul", g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", c)), wr)
                ys[t] = g.op("Unsqueeze", h, g.ints([0]))
            outs.append(g.op("Concat", *ys, axis=0) if steps > 1 else ys[0])
            hs.append(g.op("Unsqueeze", h, g.ints([0])))
            cs.append(g.op("Unsqueeze", c, g.ints([0])))
        x = outs[0] if dirs == 1 else g.op("Concat", *outs, axis=2)
    h_n = hs[0] if len(hs) == 1 else g.op("Concat", *hs, axis=0)
    c_n = cs[0] if len(cs) == 1 else g.op("Concat", *cs, axis=0)
    out = x
    if not batched:
        out, h_n, c_n = (g.op("Squeeze", v, g.ints([1])) for v in (out, h_n, c_n))
    elif m.batch_first:
        out = g.op("Transpose", out, perm=[1, 0, 2])
    return out, (h_n, c_n)


def _t(v):
    from .. import _C

    v.dtype = _C.float32
    return v
