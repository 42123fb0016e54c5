"""Batching rule of the fused RNN layer (nn.RNN/GRU/LSTM and their cells under vmap).

Note [RNN layer under vmap]: every nn recurrent module runs through `_C._nn.rnn_layer(input
(T, B, I), hx (B, H), cx, w_ih, w_hh, b_ih, b_hh, mode, reverse)`. With the weights shared by
all examples (vmap over inputs or states), the examples are more rows of the layer's own batch:
the vmap dimensions fold into B and the layer stays one fused op. With batched weights
(per-sample gradients through functional_call, ensembles from stack_module_state) each example
has its own matrices, so the layer runs as its step composition (the cell formulas of
nn.functional's `_cell_step`) under vmap, each op through its rule. torch 2.13 has no rule for
aten::gru/lstm/rnn_tanh/lstm_cell and raises; ember computes them.
"""

from .. import _C
from ..nn.functional._composite import _cell_step
from ._batch_rules import _KEEP, _NAMES, RULES
from ._vmap import BatchedTensor, _size_of, _VmapMode, align, levels_of, wrap


def _rnn_layer(func, args, kwargs):
    input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse = _bind(*args, **kwargs)
    if any(type(w) is BatchedTensor for w in (w_ih, w_hh, b_ih, b_hh)):
        return _steps(input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse)
    levels = levels_of(input, hx, cx)
    nb = len(levels)
    sizes = tuple(_size_of(level) for level in levels)
    x = align(input, levels, expand=True)
    steps, batch, features = x.shape[nb:]
    # (L..., T, B, I) -> (T, L... * B, I): the examples become rows of the layer's batch
    x = x.movedim(tuple(range(nb)), tuple(range(1, nb + 1))).reshape(steps, -1, features)

    def rows(state):
        return (
            None if state is None else align(state, levels, expand=True).reshape(-1, hx.shape[-1])
        )

    out, h, c = func(x, rows(hx), rows(cx), w_ih, w_hh, b_ih, b_hh, mode, reverse)
    hidden = out.shape[-1]
    out = out.reshape((steps, *sizes, batch, hidden)).movedim(
        tuple(range(1, nb + 1)), tuple(range(nb))
    )
    h = h.reshape((*sizes, batch, h.shape[-1]))
    c = None if c is None else c.reshape((*sizes, batch, c.shape[-1]))
    return wrap(out, levels), wrap(h, levels), (None if c is None else wrap(c, levels))


def _bind(input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse):
    return input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse


def _steps(input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse):
    from .. import stack
    from ..nn import functional as F

    with _VmapMode():
        gi = F.linear(input, w_ih, b_ih).unbind(0)
        h, c = hx, cx
        seq = [None] * len(gi)
        order = range(len(gi) - 1, -1, -1) if reverse else range(len(gi))
        for t in order:
            h, c = _cell_step(mode, gi[t], h, c, w_hh, b_hh, None)
            seq[t] = h
        out = stack(seq, 0) if seq else hx.unsqueeze(0)[:0]
        return out, h, (c if mode == "LSTM" else None)


RULES[id(_C._nn.rnn_layer)] = _rnn_layer
_NAMES[id(_C._nn.rnn_layer)] = "ember._C._nn.rnn_layer"
_KEEP.append(_C._nn.rnn_layer)
