"""conv_tbc: 1-D convolution over (time, batch, channel) input, as torch.nn.functional's."""

from ._spatial import conv1d

__all__ = ["conv_tbc"]


def conv_tbc(input, weight, bias, pad=0):
    """conv_tbc(input, weight, bias, pad=0) -> Tensor

    1-D convolution of a (time, batch, channels) input with a (kernel, in, out) weight; the
    output is (time', batch, out)."""
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
