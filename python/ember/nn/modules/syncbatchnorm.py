"""SyncBatchNorm: batch normalization whose batch statistics cover every rank's batch.

As torch's: in training with an initialized process group of more than one rank, the statistics
are synchronized; otherwise it is BatchNorm. torch synchronizes only accelerator tensors and
raises ValueError for CPU input in that case; ember does the same (so a program behaves as it
does under torch), and synchronizes tensors of a PrivateUse1 backend. `convert_sync_batchnorm`
works everywhere: DDP scripts call it before choosing devices."""

from ..._C import stack
from .. import functional as F
from .batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """SyncBatchNorm(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
        process_group=None, device=None, dtype=None, *, bias=True)

    Batch normalization over (N, C, ...) input with statistics over the batches of every rank
    of process_group (the default group when None)."""

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(
            num_features,
            eps,
            momentum,
            affine,
            track_running_stats,
            device=device,
            dtype=dtype,
            bias=bias,
        )
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        from ... import distributed as dist
        from ...utils.backend_registration import _get_privateuse1_backend_name

        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        running_mean = self.running_mean if use_stats else None
        running_var = self.running_var if use_stats else None
        need_sync = bn_training and self.training and dist.is_initialized()
        if need_sync:
            private = _get_privateuse1_backend_name()
            if input.device.type not in ("cuda", "hpu", "xpu", private):
                raise ValueError(
                    f"SyncBatchNorm expected input tensor to be on GPU or XPU or {private}"
                )
            group = self.process_group or dist.group.WORLD
            need_sync = dist.get_world_size(group) > 1
        if not need_sync:
            return F.batch_norm(
                input,
                running_mean,
                running_var,
                self.weight,
                self.bias,
                bn_training,
                factor,
                self.eps,
            )
        return _sync_batch_norm(
            input, self.weight, self.bias, running_mean, running_var, self.eps, factor, group
        )

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """convert_sync_batchnorm(module, process_group=None) -> Module

        Replaces every BatchNorm1d/2d/3d in module by a SyncBatchNorm sharing its parameters and
        buffers (module itself when it is one); returns the converted module."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


def _sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, group):
    """Batch normalization with the per-channel mean and variance over every rank's batch of
    group: each rank's sums reach the others through a differentiable all_reduce, so the
    gradient covers every rank's batch too. Updates the running statistics (unbiased var)."""
    from ...autograd.grad_mode import no_grad
    from ...distributed import ReduceOp
    from ...distributed.nn.functional import _AllReduce

    dims = [d for d in range(input.dim()) if d != 1]
    count = input.numel() // input.size(1)
    local = stack(
        [
            input.sum(dims),
            (input * input).sum(dims),
            input.new_full((input.size(1),), float(count)),
        ]
    )
    total = _AllReduce.apply(ReduceOp.SUM, group, local)
    n = total[2]
    mean = total[0] / n
    var = total[1] / n - mean * mean
    shape = [1, -1] + [1] * (input.dim() - 2)
    out = (input - mean.reshape(shape)) * (var + eps).rsqrt().reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    if running_mean is not None:
        with no_grad():
            unbiased = var.detach() * n / (n - 1).clamp(min=1)
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            running_var.mul_(1 - momentum).add_(unbiased * momentum)
    return out
