"""``ember.ops.quantized``: torch.ops.quantized's operators under torch's names and argument
lists, over the kernels of `_ops` (the quantized modules call those directly). Programs that
call the ops themselves (QFunctional's, a hand-written quantized forward, a packed weight made
with ``linear_prepack``) run unchanged. Each entry is a packet as torch's are: callable, with a
``default`` overload and the name ``quantized::<op>``."""

import types

from . import _ops


def _conv(run, relu):
    def conv(qx, packed_weight, output_scale, output_zero_point):
        return run(qx, packed_weight, output_scale, output_zero_point, relu=relu)

    return conv


def _batch_norm(relu):
    def batch_norm2d(qx, weight, bias, mean, var, eps, output_scale, output_zero_point):
        return _ops.batch_norm(
            qx, weight, bias, mean, var, eps, output_scale, output_zero_point, relu=relu
        )

    return batch_norm2d


def _linear_dynamic(relu):
    # torch's schema defaults reduce_range to False here (the modules pass True on x86)
    def linear_dynamic(X, W_prepack, reduce_range=False):
        run = _ops.linear_relu_dynamic if relu else _ops.linear_dynamic
        return run(X, W_prepack, reduce_range)

    return linear_dynamic


def _linear_prepack(W, B=None):  # torch's schema names (a converted graph passes B=)
    return _ops.linear_prepack(W, B)


def _with_scalar(tensors, scalar, relu):
    """torch's add/mul (and _relu) with their Scalar overload: (qa, b) or (b, qa) for a Python
    number b runs the scalar kernel, the output's qparams derived from qa's."""

    def op(qa, qb, *qparams):
        if qparams or not (_is_number(qa) or _is_number(qb)):
            return tensors(qa, qb, *qparams)
        if _is_number(qa):
            qa, qb = qb, qa
        out = scalar(qa, qb)
        return _ops.relu(out) if relu else out

    op.__name__ = tensors.__name__
    return op


def _is_number(b):
    return isinstance(b, (int, float)) and not isinstance(b, bool)


def _cat(qx, dim, scale=None, zero_point=None):
    return _ops.cat(qx, dim, scale, zero_point)


_TABLE = {
    "add": _with_scalar(_ops.add, _ops.add_scalar, False),
    "add_relu": _with_scalar(_ops.add_relu, _ops.add_scalar_relu, False),
    "mul": _with_scalar(_ops.mul, _ops.mul_scalar, False),
    "mul_relu": _with_scalar(_ops.mul_relu, _ops.mul_scalar, True),
    "add_scalar": _ops.add_scalar,
    "add_scalar_relu": _ops.add_scalar_relu,
    "mul_scalar": _ops.mul_scalar,
    "cat": _cat,
    "linear": _ops.linear,
    "linear_relu": _ops.linear_relu,
    "linear_dynamic": _linear_dynamic(False),
    "linear_relu_dynamic": _linear_dynamic(True),
    "linear_prepack": _linear_prepack,
    "linear_unpack": _ops.linear_unpack,
    "conv2d_prepack": _ops.conv_prepack,
    "conv1d_prepack": _ops.conv_prepack,
    "conv2d_unpack": _ops.conv_unpack,
    "conv1d_unpack": _ops.conv_unpack,
    "conv2d": _conv(_ops.conv2d, False),
    "conv2d_relu": _conv(_ops.conv2d, True),
    "conv1d": _conv(_ops.conv1d, False),
    "conv1d_relu": _conv(_ops.conv1d, True),
    "batch_norm2d": _batch_norm(False),
    "batch_norm2d_relu": _batch_norm(True),
}


class _Packet:
    """One operator of the namespace: calling it, or its ``default``, runs the kernel."""

    def __init__(self, name, fn):
        self._name, self._fn = name, fn
        # a graph calling it prints and resolves it as ember.ops.quantized.<name> (torch's
        # converted FX graphs call torch.ops.quantized.add)
        self.__name__ = name
        self.__ember_qualname__ = "ember.ops.quantized." + name

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def default(self):
        return self

    def name(self):
        return "quantized::" + self._name

    def overloads(self):
        return ["default"]

    def __repr__(self):
        return "quantized." + self._name


class _QuantizedNamespace(types.ModuleType):
    def __init__(self):
        super().__init__("ember.ops.quantized")
        self.name = "quantized"
        self._packets = {n: _Packet(n, fn) for n, fn in _TABLE.items()}

    def __getattr__(self, key):
        packet = self._packets.get(key) if not key.startswith("__") else None
        if packet is None:
            raise AttributeError(f"'_OpNamespace' 'quantized' object has no attribute '{key}'")
        return packet

    def __dir__(self):
        return sorted(self._packets)


namespace = _QuantizedNamespace()
