"""Shape and distance modules: Flatten, Unflatten, the shuffles, the two distances."""

from .. import functional as F
from .module import Module

__all__ = [
    "Flatten",
    "Unflatten",
    "PairwiseDistance",
    "CosineSimilarity",
    "PixelShuffle",
    "PixelUnshuffle",
    "ChannelShuffle",
]


class Flatten(Module):
    """Flatten(start_dim=1, end_dim=-1)

    Flattens dims start_dim..end_dim into one.
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Unflatten(dim, unflattened_size)

    Splits dim `dim` into `unflattened_size`.
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(e, int) for e in unflattened_size
            ):
                raise TypeError(
                    "unflattened_size must be tuple of ints, but found type "
                    f"{type(unflattened_size).__name__}"
                )
        elif isinstance(dim, str):
            raise TypeError("named dimensions are not supported by ember")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        shape = list(input.shape)
        d = self.dim % input.dim() if input.dim() else 0
        return input.reshape(shape[:d] + list(self.unflattened_size) + shape[d + 1 :])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class PairwiseDistance(Module):
    """PairwiseDistance(p=2.0, eps=1e-06, keepdim=False)

    The p-norm distance between rows of x1 and x2.
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """CosineSimilarity(dim=1, eps=1e-08)

    Cosine of the angle between x1 and x2 along `dim`.
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PixelShuffle(Module):
    """PixelShuffle(upscale_factor)

    (*, C r^2, H, W) -> (*, C, H r, W r).
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """PixelUnshuffle(downscale_factor)

    (*, C, H r, W r) -> (*, C r^2, H, W).
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """ChannelShuffle(groups)

    Interleaves channel groups (ShuffleNet).
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
