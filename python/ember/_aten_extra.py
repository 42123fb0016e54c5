"""ATen overloads that ember's dispatcher registry lacks, as Python-level OpOverloads.

ember's C++ registry names many operators as torch does (``aten.add.Tensor``), but some of the
overloads torch's graphs name are missing there (``mean.dim``, ``t.default``, ``view.default``,
``_softmax.default``), and some are registered under an ember-only overload (``gelu.ember``).
Graph producers that name ATen overloads (``make_fx``) need them, and so does user code calling
``torch.ops.aten.mean.dim``. Each entry here is torch's schema for the overload and a call over
ember's public functions; ``install()`` adds them to ``ember.ops.aten`` (once, after the registry
is read) without replacing an overload the registry has."""

import sys

__all__ = ["install"]

_installed = False


def _e():
    return sys.modules["ember"]


def _F():
    return _e().nn.functional


def _dims(dim):
    if dim is None:
        return None
    return list(dim) if isinstance(dim, (list, tuple)) else [dim]


def _native_layer_norm(x, shape, weight, bias, eps):
    e = _e()
    dims = list(range(x.dim() - len(shape), x.dim()))
    mean = x.mean(dims, keepdim=True)
    rstd = e.rsqrt(x.var(dims, unbiased=False, keepdim=True) + eps)
    out = e.nn.functional.layer_norm(x, list(shape), weight, bias, eps)
    return out, mean, rstd


def _convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    F = _F()
    n = x.dim() - 2
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(x, w, b, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return fn(x, w, b, stride, padding, dilation, groups)


def _convolution_backward(grad, x, w, bias_sizes, stride, padding, dilation, transposed,
                          output_padding, groups, output_mask):  # fmt: skip
    """torch's (grad_input, grad_weight, grad_bias), None where output_mask is False: the
    gradients of ``_convolution`` by ember's autograd."""
    e = _e()
    gx = gw = gb = None
    if output_mask[0] or output_mask[1]:
        with e.enable_grad():
            xi = x.detach().requires_grad_(bool(output_mask[0]))
            wi = w.detach().requires_grad_(bool(output_mask[1]))
            out = _convolution(xi, wi, None, stride, padding, dilation, transposed,
                               output_padding, groups)  # fmt: skip
            wanted = [t for t in (xi, wi) if t.requires_grad]
            grads = iter(e.autograd.grad(out, wanted, grad))
        gx = next(grads) if output_mask[0] else None
        gw = next(grads) if output_mask[1] else None
    if output_mask[2]:
        gb = grad.sum([0] + list(range(2, grad.dim())))
    return gx, gw, gb


def _grad_of(forward, inputs, wanted, grad):
    """The gradients of ``forward(*inputs)`` by ember's autograd for the inputs whose ``wanted``
    is true (None for the others): a backward overload computed as ember's formula does."""
    e = _e()
    with e.enable_grad():
        leaves = [
            t.detach().requires_grad_(bool(w)) if isinstance(t, e.Tensor) else t
            for t, w in zip(inputs, wanted)
        ]
        out = forward(*leaves)
        asked = [t for t, w in zip(leaves, wanted) if w]
        grads = iter(e.autograd.grad(out, asked, grad) if asked else ())
    return [next(grads) if w else None for w in wanted]


def _threshold_backward(grad, x, threshold):
    return _e().where(x > threshold, grad, grad.new_zeros(()))


def _log_softmax_backward_data(grad, output, dim, input_dtype):
    return grad - output.exp() * grad.sum(dim, keepdim=True)


def _softmax_backward_data(grad, output, dim, input_dtype):
    return output * (grad - (grad * output).sum(dim, keepdim=True))


def _nll_loss_backward(grad, x, target, weight, reduction, ignore_index, total_weight):
    def forward(x):
        return _nll_loss_forward(x, target, weight, reduction, ignore_index)[0]

    return _grad_of(forward, [x], [True], grad)[0]


def _native_batch_norm_backward(grad, x, weight, running_mean, running_var, save_mean,
                                save_invstd, train, eps, output_mask):  # fmt: skip
    """As ember's batch_norm formula: the batch statistics again in training (the running
    statistics untouched), the running ones in evaluation."""
    F = _F()

    def forward(x, weight, bias):
        if train:
            return F.batch_norm(x, None, None, weight, bias, True, 0.0, eps)
        return F.batch_norm(x, running_mean, running_var, weight, bias, False, 0.0, eps)

    wanted = [bool(output_mask[0]), weight is not None and bool(output_mask[1])]
    wanted.append(bool(output_mask[2]))
    # the bias's gradient as ember's kernel sums it (a zero bias leaves the forward as it is)
    bias = grad.new_zeros(x.shape[1]) if output_mask[2] else None
    return tuple(_grad_of(forward, [x, weight, bias], wanted, grad))


_REDUCTIONS = ("none", "mean", "sum")  # torch's Reduction enum, by value


def _mse_loss(x, target, reduction=1):
    return _F().mse_loss(x, target, reduction=_REDUCTIONS[reduction])


def _nll_loss_forward(x, target, weight, reduction, ignore_index):
    """(loss, total_weight): the weight the mean divides by (the weights of the targets not
    ignored), 0 with no reduction, as torch's."""
    e = _e()
    out = _F().nll_loss(
        x, target, weight, ignore_index=ignore_index, reduction=_REDUCTIONS[reduction]
    )
    if reduction == 0:
        return out, e.zeros((), dtype=x.dtype)
    kept = target != ignore_index
    picked = e.ones_like(target, dtype=x.dtype) if weight is None else weight[target.clamp(0)]
    return out, (picked * kept).sum().to(x.dtype)


def _slice(x, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * x.dim()
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


def _to_copy(x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):  # fmt: skip
    return x.to(dtype=dtype or x.dtype, copy=True)


def _scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    e = _e()
    return e.tensor(s, dtype=dtype or e.get_default_dtype())


def _var(x, dim=None, *, correction=None, keepdim=False):
    c = 1 if correction is None else correction
    return _e().var(x, _dims(dim), correction=c, keepdim=keepdim)


def _zeros_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _e().zeros_like(x, dtype=dtype)


def _max_pool2d(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool2d(
        x, kernel_size, list(stride) or None, padding, dilation, ceil_mode, return_indices=True
    )


def _assert_scalar(cond, assert_msg):
    # a runtime assertion of a traced program (torch._check on a number read from data)
    if not cond:
        raise RuntimeError(assert_msg)


def _index(x, indices):
    # index.Tensor's list holds a tensor per indexed dim, None for a dim left whole
    return x[tuple(slice(None) if i is None else i for i in indices)]


def _index_put(name):
    def call(x, indices, values, accumulate=False):
        # Tensor.index_put_ takes a tuple; torch's overload a list, None for a dim left whole;
        # values of another dtype are written as x[indices] = values writes them
        return getattr(x, name)(tuple(indices), values.to(x.dtype), accumulate)

    return call


# registered ATen ops whose Python entry point is not a function of their name
ENTRY_POINTS = {
    "index": _index,
    "index_put": _index_put("index_put"),
    "index_put_": _index_put("index_put_"),
}


def _table():
    e, F = _e(), _F()
    return {
        "mean": {
            "default": ("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", e.mean),
            "dim": (
                "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
                "dtype=None) -> Tensor",
                lambda x, dim, keepdim=False, dtype=None: e.mean(x, _dims(dim), keepdim),
            ),
        },
        "sum": {"default": ("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", e.sum)},
        "var": {
            "correction": (
                "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                "bool keepdim=False) -> Tensor",
                _var,
            )
        },
        "div": {
            "Tensor": ("div.Tensor(Tensor self, Tensor other) -> Tensor", lambda a, b: a / b),
            "Tensor_mode": (
                "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
                lambda a, b, rounding_mode=None: e.div(a, b, rounding_mode=rounding_mode),
            ),
        },
        "pow": {
            "Tensor_Scalar": (
                "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
                lambda a, b: a**b,
            ),
            "Scalar": ("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", lambda a, b: a**b),
        },
        "t": {"default": ("t(Tensor(a) self) -> Tensor(a)", lambda x: x.t())},
        "sym_size": {
            "int": ("sym_size.int(Tensor self, int dim) -> SymInt", lambda x, d: x.size(d))
        },
        "_assert_scalar": {
            "default": ("_assert_scalar(Scalar self, str assert_msg) -> ()", _assert_scalar)
        },
        "transpose": {
            "int": (
                "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
                lambda x, a, b: x.transpose(a, b),
            )
        },
        "permute": {
            "default": (
                "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
                lambda x, dims: x.permute(list(dims)),
            )
        },
        "view": {
            "default": (
                "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
                lambda x, size: x.view(list(size)),
            )
        },
        "_unsafe_view": {
            "default": (
                "_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
                lambda x, size: x.reshape(list(size)),
            )
        },
        "unsqueeze": {
            "default": (
                "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
                lambda x, d: x.unsqueeze(d),
            )
        },
        "squeeze": {
            "default": ("squeeze(Tensor(a) self) -> Tensor(a)", lambda x: x.squeeze()),
            "dim": ("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", lambda x, d: x.squeeze(d)),
            "dims": (
                "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
                lambda x, d: x.squeeze(tuple(d)),
            ),
        },
        "expand": {
            "default": (
                "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
                lambda x, size, implicit=False: x.expand(list(size)),
            )
        },
        "stack": {
            "default": (
                "stack(Tensor[] tensors, int dim=0) -> Tensor",
                lambda ts, dim=0: e.stack(list(ts), dim),
            )
        },
        "clone": {
            "default": (
                "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
                lambda x, memory_format=None: x.clone(),
            )
        },
        "clamp": {
            "default": (
                "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
                lambda x, lo=None, hi=None: e.clamp(x, lo, hi),
            )
        },
        "gelu": {
            "default": (
                "gelu(Tensor self, *, str approximate='none') -> Tensor",
                lambda x, approximate="none": F.gelu(x, approximate=approximate),
            )
        },
        "silu": {"default": ("silu(Tensor self) -> Tensor", F.silu)},
        "_softmax": {
            "default": (
                "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                lambda x, dim, half=False: e.softmax(x, dim),
            )
        },
        "_log_softmax": {
            "default": (
                "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                lambda x, dim, half=False: e.log_softmax(x, dim),
            )
        },
        "slice": {
            "Tensor": (
                "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
                "SymInt step=1) -> Tensor(a)",
                _slice,
            )
        },
        "select": {
            "int": (
                "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
                lambda x, dim, index: x.select(dim, index),
            )
        },
        "_to_copy": {
            "default": (
                "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? "
                "memory_format=None) -> Tensor",
                _to_copy,
            )
        },
        "scalar_tensor": {
            "default": (
                "scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None) -> Tensor",
                _scalar_tensor,
            )
        },
        "zeros_like": {
            "default": (
                "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
                "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
                _zeros_like,
            )
        },
        "convolution": {
            "default": (
                "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
                "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, "
                "SymInt groups) -> Tensor",
                _convolution,
            )
        },
        "convolution_backward": {
            "default": (
                "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
                "SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
                "bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) "
                "-> (Tensor, Tensor, Tensor)",
                _convolution_backward,
            )
        },
        "mse_loss": {
            "default": (
                "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
                _mse_loss,
            )
        },
        "nll_loss_forward": {
            "default": (
                "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
                "SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
                _nll_loss_forward,
            )
        },
        "_local_scalar_dense": {
            "default": ("_local_scalar_dense(Tensor self) -> Scalar", lambda x: x.item())
        },
        "detach": {"default": ("detach(Tensor(a) self) -> Tensor(a)", lambda x: x.detach())},
        "lift_fresh": {"default": ("lift_fresh(Tensor(a) self) -> Tensor(a)", lambda x: x)},
        "div_": {
            "Scalar": (
                "div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                lambda a, b: a.div_(b),
            ),
            "Tensor": (
                "div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                lambda a, b: a.div_(b),
            ),
        },
        "threshold_backward": {
            "default": (
                "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
                _threshold_backward,
            )
        },
        "_log_softmax_backward_data": {
            "default": (
                "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
                "ScalarType input_dtype) -> Tensor",
                _log_softmax_backward_data,
            )
        },
        "_softmax_backward_data": {
            "default": (
                "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
                "ScalarType input_dtype) -> Tensor",
                _softmax_backward_data,
            )
        },
        "nll_loss_backward": {
            "default": (
                "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? "
                "weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
                _nll_loss_backward,
            )
        },
        "native_batch_norm_backward": {
            "default": (
                "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
                "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? "
                "save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, "
                "Tensor)",
                _native_batch_norm_backward,
            )
        },
        "native_layer_norm": {
            "default": (
                "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, "
                "Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
                _native_layer_norm,
            )
        },
        "max_pool2d_with_indices": {
            "default": (
                "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
                "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
                _max_pool2d,
            )
        },
    }


def _scalar_compare(name):
    return (
        f"{name}.Scalar(Tensor self, Scalar other) -> Tensor",
        lambda a, b: getattr(_e(), name)(a, b),
    )


def install():
    """Adds the overloads above to ``ember.ops.aten`` (idempotent). A call from
    ``ember._op_overloads._sync`` after it has read the registry."""
    global _installed
    if _installed:
        return
    ember = sys.modules.get("ember")
    if ember is None or not hasattr(ember, "nn") or not hasattr(ember.nn, "functional"):
        return  # the registry read while ember is still importing: install on a later read
    _installed = True
    from ._op_overloads import OpOverloadPacket, ops

    aten = ops._namespace("aten")
    table = _table()
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        table.setdefault(name, {})["Scalar"] = _scalar_compare(name)
    for name in ("add", "sub"):
        table.setdefault(name, {})["Scalar"] = (
            f"{name}.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
            (lambda op: lambda a, b, alpha=1: op(a, b, alpha=alpha))(getattr(_e(), name)),
        )
    for name, overloads in table.items():
        packet = aten._packets.get(name)
        if packet is None:
            packet = aten._packets[name] = OpOverloadPacket("aten", name)
        for overload, (schema, call) in overloads.items():
            if overload not in packet._overloads:
                packet._add(overload, f"aten::{schema}", call)
