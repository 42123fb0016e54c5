"""convert_conv2d/3d_weight_memory_format, as torch.nn.utils': the weights of a model's
convolutions laid out in a memory format (channels_last, channels_last_3d)."""

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds, fn):
    if isinstance(module, kinds):
        data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = data
    for child in module.children():
        fn(child, memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """convert_conv2d_weight_memory_format(module, memory_format) -> Module

    Lays out the weight of every Conv2d and ConvTranspose2d in module (recursively) in
    memory_format, keeping each Parameter object; returns module."""
    return _convert(
        module, memory_format, (Conv2d, ConvTranspose2d), convert_conv2d_weight_memory_format
    )


def convert_conv3d_weight_memory_format(module, memory_format):
    """convert_conv3d_weight_memory_format(module, memory_format) -> Module

    Lays out the weight of every Conv3d and ConvTranspose3d in module (recursively) in
    memory_format, keeping each Parameter object; returns module."""
    return _convert(
        module, memory_format, (Conv3d, ConvTranspose3d), convert_conv3d_weight_memory_format
    )
