"""Quantized BNReLU2d (torch.ao.nn.intrinsic.quantized.BNReLU2d): ReLU fused into the
requantization of the quantized batch norm."""

from ....quantized.modules.batchnorm import BatchNorm2d as _QBatchNorm2d

__all__ = ["BNReLU2d"]


class BNReLU2d(_QBatchNorm2d):
    """BNReLU2d(num_features, eps=1e-05, momentum=0.1)

    relu(batch_norm(x)) on quint8 NCHW tensors in one pass over the integers."""

    _RELU = True

    def _get_name(self):
        return "QuantizedBNReLU2d"
