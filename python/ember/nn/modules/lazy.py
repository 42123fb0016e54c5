"""Lazy modules: Linear, Conv, ConvTranspose, BatchNorm and InstanceNorm whose input size is read
from the first input, with torch's names and life cycle.

A lazy module holds UninitializedParameter/UninitializedBuffer placeholders until its first
forward (or a load_state_dict, which takes the shapes from the state dict). It then materializes
them, runs reset_parameters and becomes the plain class (LazyLinear becomes Linear), as in torch.
"""

from ..._C import int64
from ..._ops.creation import tensor
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear

__all__ = [
    "LazyModuleMixin",
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class LazyModuleMixin:
    """LazyModuleMixin(*args, **kwargs)

    Infers parameter shapes from the first input; see the module docstring."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def has_uninitialized_params(self):
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in tensors)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def _infer_parameters(self, module, args):
        """Runs once, before the first forward: afterwards the module is the plain class."""
        self.initialize_parameters(*args)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._initialize_hook.remove()
        self._load_hook.remove()
        del self._initialize_hook
        del self._load_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _lazy_load_hook(self, state_dict, prefix, *args):
        """Materializes each placeholder with the shape of its entry in the state dict; the module
        becomes the plain class at its first forward, as in torch."""
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and t is not None and is_lazy(t):
                t.materialize(state_dict[key].shape)


def _factory(device, dtype):
    return {"device": device, "dtype": dtype}


def _in_channels(module, input):
    """Channels of a batched (N, C, ...) or unbatched (C, ...) input of this module."""
    spatial = len(module.kernel_size) if hasattr(module, "kernel_size") else input.dim() - 2
    return input.shape[0] if input.dim() == spatial + 1 else input.shape[1]


class LazyLinear(LazyModuleMixin, Linear):
    """LazyLinear(out_features, bias=True, device=None, dtype=None)

    Linear whose in_features is the last dim of the first input.
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device, dtype)
        self.out_features = out_features
        self.weight = UninitializedParameter(**_factory(device, dtype))
        if bias:
            self.bias = UninitializedParameter(**_factory(device, dtype))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args):
        if self.has_uninitialized_params():
            self.in_channels = _in_channels(self, input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            with no_grad():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(base, transposed):
    def __init__(
        self,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        *rest,
        device=None,
        dtype=None,
        **kwargs,
    ):
        # in_channels and out_channels 0 until the first input; groups checks wait for it too
        LazyModuleMixin.__init__(
            self, 0, 0, kernel_size, stride, padding, *rest, device=device, dtype=dtype, **kwargs
        )
        self.out_channels = out_channels
        self.weight = UninitializedParameter(**_factory(device, dtype))
        if self.bias is not None:
            self.bias = UninitializedParameter(**_factory(device, dtype))

    name = "Lazy" + base.__name__
    kind = "transposed convolution" if transposed else "convolution"
    sig = (
        "(out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, "
        "dilation=1, padding_mode='zeros', device=None, dtype=None)"
        if transposed
        else "(out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, "
        "padding_mode='zeros', device=None, dtype=None)"
    )
    doc = f"{name}{sig}\n\n{base.__name__} whose in_channels is read from the first input ({kind})."
    return type(
        name,
        (_LazyConvMixin, base),
        {"__init__": __init__, "cls_to_become": base, "__doc__": doc, "__module__": __name__},
    )


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)


class _LazyNormMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1] if input.dim() > 1 else input.shape[0]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


def _lazy_norm(base):
    def __init__(
        self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None
    ):
        LazyModuleMixin.__init__(self, 0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        f = _factory(device, dtype)
        if affine:
            self.weight = UninitializedParameter(**f)
            self.bias = UninitializedParameter(**f)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**f)
            self.running_var = UninitializedBuffer(**f)
            self.num_batches_tracked = tensor(0, dtype=int64)

    name = "Lazy" + base.__name__
    doc = (
        f"{name}(eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, "
        f"dtype=None)\n\n{base.__name__} whose num_features is read from the first input."
    )
    return type(
        name,
        (_LazyNormMixin, base),
        {"__init__": __init__, "cls_to_become": base, "__doc__": doc, "__module__": __name__},
    )


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
