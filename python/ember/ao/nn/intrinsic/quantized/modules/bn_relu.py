"""Quantized BNReLU2d/BNReLU3d (torch.ao.nn.intrinsic.quantized): ReLU fused into the
requantization of the quantized batch norm."""

from ....quantized.modules.batchnorm import BatchNorm2d as _QBatchNorm2d
from ....quantized.modules.batchnorm import BatchNorm3d as _QBatchNorm3d

__all__ = ["BNReLU2d", "BNReLU3d"]


class BNReLU2d(_QBatchNorm2d):
    """BNReLU2d(num_features, eps=1e-05, momentum=0.1)

    relu(batch_norm(x)) on quint8 NCHW tensors in one pass over the integers."""

    _RELU = True

    def _get_name(self):
        return "QuantizedBNReLU2d"


class BNReLU3d(_QBatchNorm3d):
    """BNReLU3d(num_features, eps=1e-05, momentum=0.1)

    relu(batch_norm(x)) on quint8 NCDHW tensors in one pass over the integers."""

    _RELU = True

    def _get_name(self):
        return "QuantizedBNReLU3d"
