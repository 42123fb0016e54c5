"""FractionalMaxPool2d/3d and the legacy CrossMapLRN2d, as torch.nn's."""

from ..._ops.creation import zeros
from .. import functional as F
from .module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d", "CrossMapLRN2d"]


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        super().__init__()
        name = type(self).__name__
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
        _random_samples=None)

    2-D fractional max pooling (F.fractional_max_pool2d); exactly one of output_size and
    output_ratio (each ratio in (0, 1)) is given."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """FractionalMaxPool3d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
        _random_samples=None)

    3-D fractional max pooling (F.fractional_max_pool3d); exactly one of output_size and
    output_ratio (each ratio in (0, 1)) is given."""

    _nd = 3


class CrossMapLRN2d(Module):
    """CrossMapLRN2d(size, alpha=0.0001, beta=0.75, k=1)

    The legacy local response normalization across channels of (N, C, H, W) input:
    x / (k + alpha / size * s) ** beta, s the sum of squares over each channel's window. The
    windows are torch's (built by its running-sum recurrence, which for channels past the first
    window keeps one more channel at the low end than at the high end)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.size(1)
        window = zeros(channels, channels, dtype=input.dtype)
        pre_pad = int((self.size - 1) / 2 + 1)
        members = set(range(min(pre_pad, channels)))
        for c in range(channels):
            if c > 0:
                if c < channels - pre_pad + 1:
                    members.add(c + pre_pad - 1)
                if c > pre_pad:
                    members.discard(c - pre_pad)
            for m in members:
                window[c, m] = 1.0
        squares = input * input
        summed = (window @ squares.reshape(input.size(0), channels, -1)).reshape(input.shape)
        scale = summed * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
