"""Max pooling with indices and its inverse: ``max_pool{1,2,3}d(return_indices=True)`` and
``nn.MaxUnpool{1,2,3}d`` / ``F.max_unpool{1,2,3}d``.

ONNX's MaxPool numbers its Indices over the whole tensor (``((n * C + c) * H + h) * W + w``);
torch numbers them within each (n, c) plane. The export subtracts each plane's first index,
which a 1x1 MaxPool of the input gives (its indices at spatial position 0), and MaxUnpool adds it
back (``(n * C + c) * plane size``) before ONNX's MaxUnpool, whose output shape is given
explicitly so it matches torch's default (or the ``output_size`` asked for)."""

from .. import _C
from ._helpers import as_tuple
from ._registry import function, module
from .errors import SymbolicValueError


def _typed(v, dtype, shape=None):
    v.dtype, v.shape = dtype, shape
    return v


def max_pool_with_indices(g, input, n, kernel_size, stride, padding, dilation, ceil_mode):
    kernel = as_tuple(kernel_size, n)
    stride = kernel if stride is None or stride == () or stride == [] else as_tuple(stride, n)
    batched = input.rank == n + 2
    x = input if batched else g.unsqueeze(input, [0])
    attrs = dict(
        kernel_shape=kernel,
        strides=stride,
        pads=as_tuple(padding, n) * 2,
        ceil_mode=int(bool(ceil_mode)),
    )
    dil = as_tuple(dilation, n)
    if any(d != 1 for d in dil):
        attrs["dilations"] = dil
    out, idx = g.op("MaxPool", x, outputs=2, **attrs)
    _, first = g.op("MaxPool", x, outputs=2, kernel_shape=[1] * n, strides=[1] * n)
    axes = list(range(2, n + 2))
    base = g.op("Slice", first, g.ints([0] * n), g.ints([1] * n), g.ints(axes))
    idx = g.op("Sub", idx, base)
    if not batched:
        out, idx = g.squeeze(out, [0]), g.squeeze(idx, [0])
    return out, idx


def _unpool_fn(n):
    def sym(g, input, indices, kernel_size, stride=None, padding=0, output_size=None):
        kernel = as_tuple(kernel_size, n)
        stride = kernel if stride is None or stride == () or stride == [] else as_tuple(stride, n)
        pad = as_tuple(padding, n)
        batched = input.rank == n + 2
        x = input if batched else g.unsqueeze(input, [0])
        idx = g.cast(indices if batched else g.unsqueeze(indices, [0]), _C.int64)
        if output_size is not None:
            spatial = [int(s) for s in list(output_size)[-n:]]
        else:
            sizes = list(input.shape[-n:])
            if any(s is None for s in sizes):
                raise SymbolicValueError(
                    f"max_unpool{n}d: expected static spatial sizes or output_size; got "
                    f"{input.shape}"
                )
            spatial = [(s - 1) * st - 2 * p + k for s, st, p, k in zip(sizes, stride, pad, kernel)]
        plane = 1
        for s in spatial:
            plane *= s
        nb, ch = g.size(x, 0), g.size(x, 1)
        if isinstance(nb, int) and isinstance(ch, int):
            import numpy as np

            offset = g.const(
                (np.arange(nb * ch, dtype=np.int64) * plane).reshape([nb, ch] + [1] * n),
                _C.int64,
            )
        else:
            count = g.op("Mul", *(g.shape_tensor([d]) for d in (nb, ch)))
            count = g.squeeze(_typed(count, _C.int64, (1,)), [0])
            flat = g.op("Range", g.const(0, _C.int64), count, g.const(1, _C.int64))
            flat = g.op("Mul", flat, g.const(plane, _C.int64))
            offset = g.op("Reshape", flat, g.shape_tensor([nb, ch] + [1] * n))
        idx = g.op("Add", idx, offset)
        shape = g.shape_tensor([nb, ch] + spatial)
        out = g.op("MaxUnpool", x, idx, shape, kernel_shape=kernel, strides=stride, pads=pad * 2)
        return out if batched else g.squeeze(_typed(out, input.dtype, None), [0])

    return sym


for _n in (1, 2, 3):
    function(f"max_unpool{_n}d", method=False)(_unpool_fn(_n))
    module(f"MaxUnpool{_n}d")(
        lambda g, m, x, indices, output_size=None, _n=_n: _unpool_fn(_n)(
            g, x, indices, m.kernel_size, m.stride, m.padding, output_size
        )
    )
