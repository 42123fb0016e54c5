"""torch's multi-layer recurrent functions with the flat-weights signature (ember.lstm, gru,
rnn_tanh, rnn_relu: what nn.LSTM & co. call in torch, and what programs written against
torch._VF call directly), and the batch-norm statistics functions of SyncBatchNorm
(batch_norm_stats, batch_norm_elemt, batch_norm_gather_stats[_with_counts],
batch_norm_update_stats, batch_norm_backward_reduce/elemt). Compositions of ember ops, so
autograd, vmap and compile see through them."""

from .. import _C
from ..nn import functional as F
from .aten_nn import gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell

__all__ = [
    "lstm",
    "gru",
    "rnn_tanh",
    "rnn_relu",
    "batch_norm_stats",
    "batch_norm_elemt",
    "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts",
    "batch_norm_update_stats",
    "batch_norm_backward_reduce",
    "batch_norm_backward_elemt",
]


def _check_padded(name, args):
    # torch's second overload takes a packed sequence's (data, batch_sizes, ...): not supported
    if len(args) > 1 and isinstance(args[1], _C.Tensor) and args[1].dim() == 1:
        raise NotImplementedError(
            f"{name}: the packed-sequence overload (data, batch_sizes, ...) is not supported; "
            "use nn.utils.rnn and the module, or pass a padded input"
        )


def _run(
    name,
    cell,
    input,
    hx,
    params,
    has_biases,
    num_layers,
    dropout,
    train,
    bidirectional,
    batch_first,
    lstm,
):
    if input.dim() != 3:
        raise RuntimeError(f"{name}: Expected input to be 3-D; got {input.dim()}-D")
    dirs = 2 if bidirectional else 1
    per = len(params) // (num_layers * dirs)
    if per * num_layers * dirs != len(params) or per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(
            f"{name}: expected {num_layers * dirs * (4 if has_biases else 2)} weights for "
            f"{num_layers} layer(s) x {dirs} direction(s); got {len(params)}"
        )
    proj = per in (3, 5)  # LSTM with proj_size: w_hr last
    x = input.transpose(0, 1) if batch_first else input  # (T, N, C)
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = (layer * dirs + d) * per
            w = params[k : k + per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if proj else None
            h = h0[layer * dirs + d]
            c = c0[layer * dirs + d] if lstm else None
            steps = range(x.shape[0] - 1, -1, -1) if d == 1 else range(x.shape[0])
            seq = [None] * x.shape[0]
            for t in steps:
                if lstm:
                    h, c = cell(x[t], (h, c), w_ih, w_hh, b_ih, b_hh)
                    if w_hr is not None:
                        h = F.linear(h, w_hr)
                else:
                    h = cell(x[t], h, w_ih, w_hh, b_ih, b_hh)
                seq[t] = h
            outs.append(_C.stack(seq, 0))
            hs.append(h)
            if lstm:
                cs.append(c)
        x = outs[0] if dirs == 1 else _C.cat(outs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    out = x.transpose(0, 1) if batch_first else x
    h_n = _C.stack(hs, 0)
    if lstm:
        return out, h_n, _C.stack(cs, 0)
    return out, h_n


def _flat_rnn(name, cell, doc):
    def fn(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        _check_padded(name, (input, hx))
        return _run(
            name,
            cell,
            input,
            hx,
            list(params),
            has_biases,
            num_layers,
            dropout,
            train,
            bidirectional,
            batch_first,
            name == "lstm",
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _plain_doc(name):
    return (
        f"{name}(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, "
        "batch_first) -> (Tensor, Tensor)\n\n"
        f"A multi-layer {name} recurrence over a padded input with torch's flat weights (w_ih, "
        "w_hh, then b_ih, b_hh when has_biases, per layer and direction). Returns (output, h_n)."
    )


lstm = _flat_rnn(
    "lstm",
    lstm_cell,
    "lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, "
    "batch_first) -> (Tensor, Tensor, Tensor)\n\n"
    "A multi-layer LSTM over a padded input (torch's flat-weights form: params holds w_ih, w_hh, "
    "then b_ih, b_hh when has_biases, then w_hr with a projection, per layer and direction); "
    "hx = (h0, c0). Returns (output, h_n, c_n).",
)
gru = _flat_rnn("gru", gru_cell, _plain_doc("gru"))
rnn_tanh = _flat_rnn("rnn_tanh", rnn_tanh_cell, _plain_doc("rnn_tanh"))
rnn_relu = _flat_rnn("rnn_relu", rnn_relu_cell, _plain_doc("rnn_relu"))


# -- SyncBatchNorm's statistics: per-channel over every dim but 1


def _reduce_dims(x):
    return [d for d in range(x.dim()) if d != 1]


def _channel(v, x):
    """v (C,) shaped to broadcast over x's channel dim 1."""
    return v.reshape([1, -1] + [1] * (x.dim() - 2))


def batch_norm_stats(input, eps):
    """batch_norm_stats(input, eps) -> (Tensor, Tensor)

    Per-channel mean and inverse standard deviation 1/sqrt(var + eps) of input (biased
    variance over every dimension but 1), in float32 for reduced-precision input."""
    x = input.float() if input.dtype in (_C.float16, _C.bfloat16) else input
    dims = _reduce_dims(x)
    mean = x.mean(dims)
    var = ((x - _channel(mean, x)) ** 2).mean(dims)
    return mean, (var + eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """batch_norm_elemt(input, weight, bias, mean, invstd, eps) -> Tensor

    (input - mean) * invstd * weight + bias per channel (weight, bias optional)."""
    out = (input - _channel(mean, input)) * _channel(invstd, input)
    if weight is not None:
        out = out * _channel(weight, input)
    if bias is not None:
        out = out + _channel(bias, input)
    return out.to(input.dtype)


def batch_norm_gather_stats_with_counts(
    input, mean, invstd, running_mean, running_var, momentum, eps, counts
):
    """batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts) -> (Tensor, Tensor)

    Combines the per-process statistics (rows of mean and invstd, counts[i] elements each)
    into the global mean and invstd, and updates running_mean / running_var in place (the
    unbiased variance) when given."""  # noqa: E501
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum()
    var_i = 1.0 / (invstd * invstd) - eps
    g_mean = (mean * counts).sum(0) / total
    g_var = ((var_i + (mean - g_mean) ** 2) * counts).sum(0) / total
    if running_mean is not None:
        with _no_grad():
            running_mean.copy_(running_mean * (1 - momentum) + g_mean * momentum)
    if running_var is not None:
        n = float(total.item())
        with _no_grad():
            unbiased = g_var * (n / (n - 1)) if n > 1 else g_var
            running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
    return g_mean, (g_var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    """batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count) -> (Tensor, Tensor)

    batch_norm_gather_stats_with_counts with `count` elements in every process."""  # noqa: E501
    counts = mean.new_full((mean.shape[0],), float(count))
    return batch_norm_gather_stats_with_counts(
        input, mean, invstd, running_mean, running_var, momentum, eps, counts
    )


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """batch_norm_update_stats(input, running_mean, running_var, momentum) -> (Tensor, Tensor)

    The per-channel mean and biased variance of input; running_mean / running_var (when given)
    move toward the mean and the unbiased variance by momentum, in place."""
    dims = _reduce_dims(input)
    mean = input.mean(dims)
    var = ((input - _channel(mean, input)) ** 2).mean(dims)
    n = input.numel() // max(input.shape[1], 1)
    with _no_grad():
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + mean * momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1)) if n > 1 else var
            running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
    return mean, var


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g) -> (Tensor, Tensor, Tensor, Tensor)

    Per-channel sum_dy = sum(grad_out), sum_dy_xmu = sum(grad_out * (input - mean)), and the
    weight and bias gradients (sum_dy_xmu * invstd, sum_dy); each only where its flag asks
    (None otherwise)."""  # noqa: E501
    dims = _reduce_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _channel(mean, input))).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    grad_bias = sum_dy if bias_g else None
    if not input_g:
        sum_dy, sum_dy_xmu = None, None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count) -> Tensor

    The input gradient of batch norm from the global sums: (grad_out - sum_dy / N - (input -
    mean) * invstd^2 * sum_dy_xmu / N) * invstd * weight, N the total of count."""  # noqa: E501
    n = float(count.sum().item()) if isinstance(count, _C.Tensor) else float(sum(count))
    c = lambda v: _channel(v, input)  # noqa: E731
    xmu = input - c(mean)
    scale = c(invstd) if weight is None else c(invstd * weight)
    out = (grad_out - c(sum_dy) / n - xmu * c(invstd * invstd) * c(sum_dy_xmu) / n) * scale
    return out.to(input.dtype)


def _no_grad():
    from ..autograd.grad_mode import no_grad

    return no_grad()
