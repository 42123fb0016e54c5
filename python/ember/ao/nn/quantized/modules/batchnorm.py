"""Quantized BatchNorm2d/BatchNorm3d (torch.ao.nn.quantized): inference batch norm on quint8
tensors, one fused multiply-add per element on the integers."""

from .....nn.modules.batchnorm import BatchNorm2d as _FloatBatchNorm2d
from .....nn.modules.batchnorm import BatchNorm3d as _FloatBatchNorm3d
from .. import _ops
from .utils import _ember

__all__ = ["BatchNorm2d", "BatchNorm3d"]


class _QuantizedBatchNorm:
    """What the quantized batch norms share; the float class after it in the bases gives the
    parameters, buffers and repr."""

    _RELU = False  # the fused BNReLU modules clamp at the zero point in the same pass

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, True, True)
        e = _ember()
        self.register_buffer("scale", e.tensor(1.0))
        self.register_buffer("zero_point", e.tensor(0))

    def forward(self, input):
        self._check_input_dim(input)
        if input.dim() == 5:  # the kernel is per channel over (N, C, ...): fold D into H
            n, c, d, h, w = input.shape
            out = self._run(input.reshape(n, c, d * h, w))
            return out.reshape(n, c, d, h, w)
        return self._run(input)

    def _run(self, input):
        return _ops.batch_norm(
            input,
            self.weight,
            self.bias,
            self.running_mean,
            self.running_var,
            self.eps,
            float(self.scale),
            int(self.zero_point),
            self._RELU,
        )

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> BatchNorm2d

        The quantized batch norm of an observed float BatchNorm2d (or fused BNReLU2d)."""
        activation_post_process = mod.activation_post_process
        if type(mod).__name__.startswith("BNReLU"):
            mod = mod[0]
        scale, zero_point = activation_post_process.calculate_qparams()
        new_mod = cls(mod.num_features, mod.eps)
        new_mod.weight = mod.weight
        new_mod.bias = mod.bias
        new_mod.running_mean = mod.running_mean
        new_mod.running_var = mod.running_var
        new_mod.scale = scale
        new_mod.zero_point = zero_point
        return new_mod

    @classmethod
    def from_reference(cls, bn, output_scale, output_zero_point):
        """from_reference(bn, output_scale, output_zero_point) -> BatchNorm2d

        The quantized batch norm of a float one with the given output parameters."""
        qbn = cls(bn.num_features, bn.eps, bn.momentum)
        qbn.weight = bn.weight
        qbn.bias = bn.bias
        qbn.running_mean = bn.running_mean
        qbn.running_var = bn.running_var
        qbn.scale = output_scale
        qbn.zero_point = output_zero_point
        return qbn


class BatchNorm2d(_QuantizedBatchNorm, _FloatBatchNorm2d):
    """BatchNorm2d(num_features, eps=1e-05, momentum=0.1)

    Batch norm of a quantized NCHW tensor with the running statistics, requantized to the
    buffers `scale` and `zero_point`."""

    def _get_name(self):
        return "QuantizedBatchNorm2d"

    def _check_input_dim(self, input):
        if len(input.shape) != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")


class BatchNorm3d(_QuantizedBatchNorm, _FloatBatchNorm3d):
    """BatchNorm3d(num_features, eps=1e-05, momentum=0.1)

    Batch norm of a quantized NCDHW tensor with the running statistics, requantized to the
    buffers `scale` and `zero_point`."""

    def _get_name(self):
        return "QuantizedBatchNorm3d"

    def _check_input_dim(self, input):
        if input.dim() != 5:  # torch's kernel's check
            raise RuntimeError("Expecting the input tensor of rank 5.")
