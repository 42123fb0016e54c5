"""BatchNorm and InstanceNorm: running statistics, momentum (None = cumulative average)."""

import warnings

from ..._C import int64
from ..._ops.creation import ones, tensor, zeros
from .. import functional as F
from .module import Module
from .normalization import _affine_parameters, _reset_affine

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
]


class _NormBase(Module):
    _version = 2

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, num_features, bias, dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (
            "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
            "track_running_stats={track_running_stats}".format(
                **self.__dict__, use_bias=self.bias is not None
            )
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # Checkpoints from before num_batches_tracked existed load with the current count.
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None
                    else tensor(0, dtype=int64)
                )
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        return F.batch_norm(input, *self._batch_norm_args())

    def _batch_norm_args(self):
        """F.batch_norm's arguments after input for one call (counts the batch when training);
        also what nn.Sequential's fused block (_fused_block.py) passes its kernel."""
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return (
            self.running_mean if use_stats else None,
            self.running_var if use_stats else None,
            self.weight,
            self.bias,
            bn_training,
            exponential_average_factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """BatchNorm1d(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
        device=None, dtype=None, *, bias=True)

    Batch normalization over (N, C) or (N, C, L) input.
    """

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """BatchNorm2d(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
        device=None, dtype=None, *, bias=True)

    Batch normalization over (N, C, H, W) input.
    """

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """BatchNorm3d(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
        device=None, dtype=None, *, bias=True)

    Batch normalization over (N, C, D, H, W) input.
    """

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _no_batch_dim = None

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, dtype=dtype, bias=bias
        )

    def _check_input_dim(self, input):
        if input.dim() not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(
                f"expected {self._no_batch_dim}D or {self._no_batch_dim + 1}D input "
                f"(got {input.dim()}D input)"
            )

    def _apply_instance_norm(self, input):
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can silence "
                "this warning by not passing in num_features, which is not used because "
                "affine=False",
                stacklevel=2,
            )
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """InstanceNorm1d(num_features, eps=1e-05, momentum=0.1, affine=False,
        track_running_stats=False, device=None, dtype=None, *, bias=True)

    Per-sample, per-channel normalization of (N, C, L) or (C, L) input.
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """InstanceNorm2d(num_features, eps=1e-05, momentum=0.1, affine=False,
        track_running_stats=False, device=None, dtype=None, *, bias=True)

    Per-sample, per-channel normalization of (N, C, H, W) or (C, H, W) input.
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """InstanceNorm3d(num_features, eps=1e-05, momentum=0.1, affine=False,
        track_running_stats=False, device=None, dtype=None, *, bias=True)

    Per-sample, per-channel normalization of 5-D (or unbatched 4-D) input.
    """

    _no_batch_dim = 4
