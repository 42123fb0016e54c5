"""Observers (torch.ao.quantization.observer): modules that watch the tensors flowing through
them and compute the scale and zero point that quantize those tensors, with torch's formulas so
the same data gives torch's numbers."""

import math
import warnings
from functools import partial

from ...nn.modules.module import Module
from .. import _torch as _C
from . import _qtypes as qt
from .utils import (
    _is_per_channel,
    _is_per_tensor,
    calculate_qmin_qmax,
    check_min_max_valid,
    validate_qmin_qmax,
)

__all__ = [
    "ObserverBase",
    "UniformQuantizationObserverBase",
    "MinMaxObserver",
    "MovingAverageMinMaxObserver",
    "PerChannelMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver",
    "HistogramObserver",
    "FixedQParamsObserver",
    "PlaceholderObserver",
    "RecordingObserver",
    "NoopObserver",
    "ReuseInputObserver",
    "default_observer",
    "default_placeholder_observer",
    "default_debug_observer",
    "default_weight_observer",
    "default_histogram_observer",
    "default_per_channel_weight_observer",
    "default_dynamic_quant_observer",
    "default_float_qparams_observer",
    "default_float_qparams_observer_4bit",
    "default_fixed_qparams_range_neg1to1_observer",
    "default_fixed_qparams_range_0to1_observer",
    "default_reuse_input_observer",
    "weight_observer_range_neg_127_to_127",
    "per_channel_weight_observer_range_neg_127_to_127",
    "get_observer_state_dict",
    "load_observer_state_dict",
]

_EPS = float.fromhex("0x1p-23")  # torch.finfo(torch.float32).eps


class _PartialWrapper:
    """A deferred constructor: calling it builds the observer with the bound keyword arguments
    (those given through with_callable_args are called first)."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, fn in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: fn()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__() + self.callable_args.__repr__()

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        result = _PartialWrapper(p=self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    r = _PartialWrapper(partial(cls_or_self, **kwargs))
    return r


def _with_callable_args(cls_or_self, **kwargs):
    r = _PartialWrapper(partial(cls_or_self))
    return r.with_callable_args(**kwargs)


class ObserverBase(Module):
    """ObserverBase(dtype, is_dynamic=False)

    The base of all observers: forward records statistics and returns its input unchanged;
    calculate_qparams turns them into (scale, zero_point)."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


def _scalar(v):
    return _C.tensor(v, dtype=qt.float32)


class UniformQuantizationObserverBase(ObserverBase):
    """UniformQuantizationObserverBase(dtype=torch.quint8, qscheme=torch.per_tensor_affine,
        reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
        eps=torch.finfo(torch.float32).eps, is_dynamic=False)

    The shared part of the min/max and histogram observers: the integer range and torch's
    scale / zero-point formulas for affine, symmetric and float-qparams schemes."""

    _version = 3

    def __init__(
        self,
        dtype=qt.quint8,
        qscheme=qt.per_tensor_affine,
        reduce_range=False,
        quant_min=None,
        quant_max=None,
        factory_kwargs=None,
        eps=_EPS,
        is_dynamic=False,
        **kwargs,
    ):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn(
                "Please use quant_min and quant_max to specify the range for observers. "
                "reduce_range will be deprecated in a future release of PyTorch.",
                stacklevel=2,
            )
        self.reduce_range = reduce_range
        self.register_buffer("eps", _C.tensor([eps], dtype=qt.float32))
        if qscheme not in qt.PER_TENSOR + qt.PER_CHANNEL:
            raise AssertionError(
                "Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                "quantization scheme"
            )
        allowed = qt.QUANTIZED_DTYPES + (qt.int8, qt.uint8, qt.int16, qt.int32)
        if dtype not in allowed:
            raise AssertionError(f"Default Observer only works for {allowed} data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, self.dtype, self.reduce_range
        )

    def _calculate_qparams(self, min_val, max_val):
        if not check_min_max_valid(min_val, max_val):
            return _C.tensor([1.0]), _C.tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        zeros = _C.zeros_like(min_val)
        min_val_neg = _C.minimum(min_val, zeros)
        max_val_pos = _C.maximum(max_val, zeros)
        zero_point = _C.zeros(list(min_val_neg.shape), dtype=_C.int64)
        if self.qscheme in qt.SYMMETRIC:
            max_val_pos = _C.maximum(-min_val_neg, max_val_pos)
            scale = max_val_pos / (float(quant_max - quant_min) / 2)
            scale = _C.maximum(scale, self.eps)
            if self.dtype in (qt.quint8, qt.uint8):
                mid = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = _C.full(list(zero_point.shape), mid, dtype=_C.int64)
        elif self.qscheme == qt.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = _C.where(scale > self.eps, scale, _C.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = (max_val_pos - min_val_neg) / float(quant_max - quant_min)
            scale = _C.maximum(scale, self.eps)
            zero_point = quant_min - _C.round(min_val_neg / scale).to(_C.int32)
            zero_point = _C.clamp(zero_point, quant_min, quant_max)
        if scale.dim() == 0:
            scale = _C.tensor([float(scale)], dtype=scale.dtype)
        if zero_point.dim() == 0:
            if self.qscheme == qt.per_channel_affine_float_qparams:
                zero_point = _C.tensor([float(zero_point)], dtype=zero_point.dtype)
            else:
                zero_point = _C.tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, msgs
    ):
        version = (local_metadata or {}).get("version", None)
        if version is None or version == 1:
            state_dict[prefix + "eps"] = _C.tensor([_EPS])
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, msgs
        )

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


def _aminmax(x, dim=None):
    if dim is None:
        return _C.amin(x), _C.amax(x)
    return _C.amin(x, dim), _C.amax(x, dim)


def _set_buffer(buf, value):
    """Resizes buf in place to value's shape and copies value in (torch's observers do the same,
    so their buffers stay the registered tensors)."""
    with _no_grad():
        if list(buf.shape) != list(value.shape):
            buf.resize_(list(value.shape))
        buf.copy_(value)


def _no_grad():
    from ...autograd.grad_mode import no_grad

    return no_grad()


class MinMaxObserver(UniformQuantizationObserverBase):
    """MinMaxObserver(dtype=torch.quint8, qscheme=torch.per_tensor_affine, reduce_range=False,
        quant_min=None, quant_max=None, factory_kwargs=None, eps=torch.finfo(torch.float32).eps,
        is_dynamic=False)

    Tracks the running minimum and maximum of everything it sees and derives per-tensor
    quantization parameters from them."""

    def __init__(
        self,
        dtype=qt.quint8,
        qscheme=qt.per_tensor_affine,
        reduce_range=False,
        quant_min=None,
        quant_max=None,
        factory_kwargs=None,
        eps=_EPS,
        is_dynamic=False,
        **kwargs,
    ):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError(
                "MinMaxObserver's qscheme only support torch.per_tensor_symmetric "
                "and torch.per_tensor_affine."
            )
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            factory_kwargs=factory_kwargs,
            eps=eps,
            is_dynamic=is_dynamic,
            **kwargs,
        )
        self.register_buffer("min_val", _scalar(float("inf")))
        self.register_buffer("max_val", _scalar(float("-inf")))
        if qscheme == qt.per_tensor_symmetric and reduce_range and dtype == qt.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        cur_min, cur_max = _aminmax(x)
        _set_buffer(self.min_val, _C.minimum(cur_min, self.min_val))
        _set_buffer(self.max_val, _C.maximum(cur_max, self.max_val))
        return x_orig

    def calculate_qparams(self):
        """calculate_qparams()

        (scale, zero_point) for the range seen so far."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        """reset_min_max_vals()

        Forgets the range seen so far."""
        _set_buffer(self.min_val, _scalar(float("inf")))
        _set_buffer(self.max_val, _scalar(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """MovingAverageMinMaxObserver(averaging_constant=0.01, dtype=torch.quint8,
        qscheme=torch.per_tensor_affine, reduce_range=False, quant_min=None, quant_max=None,
        eps=torch.finfo(torch.float32).eps, is_dynamic=False)

    Like MinMaxObserver, but the range is an exponential moving average of each batch's
    minimum and maximum."""

    def __init__(
        self,
        averaging_constant=0.01,
        dtype=qt.quint8,
        qscheme=qt.per_tensor_affine,
        reduce_range=False,
        quant_min=None,
        quant_max=None,
        eps=_EPS,
        is_dynamic=False,
        **kwargs,
    ):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError(
                "MovingAverageMinMaxObserver's qscheme only support torch.per_tensor_symmetric "
                f"and torch.per_tensor_affine. but got: {qscheme}"
            )
        self.averaging_constant = averaging_constant
        if is_dynamic and averaging_constant != 1:
            raise NotImplementedError(
                "MovingAverageMinMaxObserver doesn't support dynamic quantization for "
                f"averaging constant of {averaging_constant}"
            )
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            eps=eps,
            is_dynamic=is_dynamic,
            **kwargs,
        )
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        cur_min, cur_max = _aminmax(x)
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            min_val, max_val = cur_min, cur_max
        else:
            c = self.averaging_constant
            min_val = min_val + c * (cur_min - min_val)
            max_val = max_val + c * (cur_max - max_val)
        _set_buffer(self.min_val, min_val)
        _set_buffer(self.max_val, max_val)
        return x_orig


def _channels_first(x, ch_axis):
    """x with ch_axis swapped to the front and the rest flattened: (channels, everything)."""
    order = list(range(x.dim()))
    order[ch_axis] = 0
    order[0] = ch_axis
    return _C.flatten(x.permute(order), 1)


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """PerChannelMinMaxObserver(ch_axis=0, dtype=torch.quint8, qscheme=torch.per_channel_affine,
        reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
        eps=torch.finfo(torch.float32).eps, is_dynamic=False)

    Tracks the running minimum and maximum of each slice along ch_axis and derives one scale
    and zero point per channel."""

    def __init__(
        self,
        ch_axis=0,
        dtype=qt.quint8,
        qscheme=qt.per_channel_affine,
        reduce_range=False,
        quant_min=None,
        quant_max=None,
        factory_kwargs=None,
        eps=_EPS,
        is_dynamic=False,
        **kwargs,
    ):
        if not _is_per_channel(qscheme):
            raise NotImplementedError(
                "PerChannelMinMaxObserver's qscheme only support torch.per_channel_symmetric, "
                "torch.per_channel_affine and torch.per_channel_affine_float_qparams."
            )
        if is_dynamic:
            raise NotImplementedError(
                "PerChannelMinMaxObserver doesn't support dynamic quantization"
            )
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            factory_kwargs=factory_kwargs,
            eps=eps,
            is_dynamic=is_dynamic,
            **kwargs,
        )
        self.ch_axis = ch_axis
        self.register_buffer("min_val", _C.tensor([], dtype=qt.float32))
        self.register_buffer("max_val", _C.tensor([], dtype=qt.float32))
        if qscheme == qt.per_channel_symmetric and reduce_range and dtype == qt.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig):
        return self._forward(x_orig)

    def _forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        y = _channels_first(x_orig.detach().to(self.min_val.dtype), self.ch_axis)
        cur_min, cur_max = _aminmax(y, 1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = cur_min, cur_max
        else:
            min_val = _C.minimum(cur_min, self.min_val)
            max_val = _C.maximum(cur_max, self.max_val)
        _set_buffer(self.min_val, min_val)
        _set_buffer(self.max_val, max_val)
        return x_orig

    def calculate_qparams(self):
        """calculate_qparams()

        (scales, zero_points), one per channel."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, msgs
    ):
        for name in ("min_val", "max_val"):
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(list(state_dict[key].shape))
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, msgs
        )

    def reset_min_max_vals(self):
        """reset_min_max_vals()

        Forgets the ranges seen so far."""
        self.min_val = _C.tensor([], dtype=qt.float32)
        self.max_val = _C.tensor([], dtype=qt.float32)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """MovingAveragePerChannelMinMaxObserver(averaging_constant=0.01, ch_axis=0, dtype=torch.quint8,
        qscheme=torch.per_channel_affine, reduce_range=False, quant_min=None, quant_max=None,
        eps=torch.finfo(torch.float32).eps, is_dynamic=False)

    Per-channel ranges kept as exponential moving averages of each batch's."""

    def __init__(
        self,
        averaging_constant=0.01,
        ch_axis=0,
        dtype=qt.quint8,
        qscheme=qt.per_channel_affine,
        reduce_range=False,
        quant_min=None,
        quant_max=None,
        eps=_EPS,
        is_dynamic=False,
        **kwargs,
    ):
        super().__init__(
            ch_axis=ch_axis,
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            eps=eps,
            is_dynamic=is_dynamic,
            **kwargs,
        )
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        y = _channels_first(x_orig.detach().to(self.min_val.dtype), self.ch_axis)
        cur_min, cur_max = _aminmax(y, 1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = cur_min, cur_max
        else:
            c = self.averaging_constant
            min_val = self.min_val + c * (cur_min - self.min_val)
            max_val = self.max_val + c * (cur_max - self.max_val)
        _set_buffer(self.min_val, min_val)
        _set_buffer(self.max_val, max_val)
        return x_orig


class HistogramObserver(UniformQuantizationObserverBase):
    """HistogramObserver(bins=2048, dtype=torch.quint8, qscheme=torch.per_tensor_affine,
        reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
        eps=torch.finfo(torch.float32).eps, is_dynamic=False)

    Keeps a histogram of the values seen and picks the clipping range that minimises the L2
    quantization error over it (torch's search), then per-tensor qparams for that range."""

    def __init__(
        self,
        bins=2048,
        dtype=qt.quint8,
        qscheme=qt.per_tensor_affine,
        reduce_range=False,
        quant_min=None,
        quant_max=None,
        factory_kwargs=None,
        eps=_EPS,
        is_dynamic=False,
        **kwargs,
    ):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError(
                "HistogramObserver's qscheme only support torch.per_tensor_symmetric "
                "and torch.per_tensor_affine."
            )
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            factory_kwargs=factory_kwargs,
            eps=eps,
            is_dynamic=is_dynamic,
            **kwargs,
        )
        self.bins = bins
        self.register_buffer("histogram", _C.zeros(bins))
        self.register_buffer("min_val", _scalar(float("inf")))
        self.register_buffer("max_val", _scalar(float("-inf")))
        self.dst_nbins = 2 ** qt.bits(dtype)
        self.upsample_rate = 16

    def _get_norm(self, delta_begin, delta_end, density):
        norm = (delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / 3
        return density * norm

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = _C.arange(self.bins)
        src_bin_begin = (src_bin - next_start_bin) * bin_width
        src_bin_end = src_bin_begin + bin_width
        last = self.dst_nbins - 1
        dst_bin_of_begin = _C.clamp(
            _C.div(src_bin_begin, dst_bin_width, rounding_mode="floor"), 0, last
        )
        dst_bin_of_begin_center = (dst_bin_of_begin + 0.5) * dst_bin_width
        dst_bin_of_end = _C.clamp(
            _C.div(src_bin_end, dst_bin_width, rounding_mode="floor"), 0, last
        )
        density = self.histogram / bin_width
        half = dst_bin_width / 2
        norm = _C.zeros(self.bins)
        delta_begin = src_bin_begin - dst_bin_of_begin_center
        norm = norm + self._get_norm(delta_begin, _C.ones(self.bins) * half, density)
        norm = norm + (dst_bin_of_end - dst_bin_of_begin - 1) * self._get_norm(
            _C.tensor(-half), _C.tensor(half), density
        )
        dst_bin_of_end_center = dst_bin_of_end * dst_bin_width + half
        delta_end = src_bin_end - dst_bin_of_end_center
        norm = norm + self._get_norm(_C.tensor(-half), delta_end, density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        if self.histogram.shape[0] != self.bins:
            raise AssertionError("bins mismatch")
        bin_width = (self.max_val - self.min_val) / self.bins
        total = _C.sum(self.histogram).item()
        csum = _C.cumsum(self.histogram, 0).tolist()
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha = alpha + stepsize
            next_beta = beta - stepsize
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < next_alpha * total:
                left += 1
            while right > start_bin and csum[right] > next_beta * total:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if left - start_bin > end_bin - right:
                next_start_bin = left
                alpha = next_alpha
            else:
                next_end_bin = right
                beta = next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        new_min = self.min_val + bin_width * start_bin
        new_max = self.min_val + bin_width * (end_bin + 1)
        return new_min, new_max

    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        rate = self.upsample_rate
        histogram = histogram.repeat_interleave(rate) / rate
        bin_size = (orig_max - orig_min) / (self.bins * rate)
        mids = _C.linspace(orig_min, orig_max, self.bins * rate + 1)[:-1] + 0.5 * bin_size
        bounds = _C.linspace(update_min, update_max, self.bins + 1)
        buckets = _C.bucketize(mids, bounds, right=True) - 1
        buckets = _C.clamp(buckets, 0, self.bins - 1)
        return _C.bincount(buckets, weights=histogram, minlength=self.bins)

    def _combine_histograms(
        self, orig_hist, orig_min, orig_max, update_hist, update_min, update_max
    ):
        if bool(update_min == orig_min) and bool(update_max == orig_max):
            return orig_hist + update_hist
        if bool(orig_min == orig_max):
            bin_value = _C.sum(orig_hist)
            moved = _C.histc(orig_min, self.bins, float(update_min), float(update_max)) * bin_value
            return moved + update_hist
        if bool(update_min > orig_min):
            raise AssertionError("update_min must be <= orig_min")
        if bool(update_max < orig_max):
            raise AssertionError("update_max must be >= orig_max")
        moved = self._upscale_histogram(orig_hist, orig_min, orig_max, update_min, update_max)
        return update_hist + moved

    def reset_histogram(self, x, min_val, max_val):
        """reset_histogram(x, min_val, max_val)

        Starts the histogram afresh from x over [min_val, max_val]."""
        _set_buffer(self.min_val, min_val)
        _set_buffer(self.max_val, max_val)
        _set_buffer(self.histogram, _C.histc(x, self.bins, float(min_val), float(max_val)))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = _aminmax(x)
        if math.isinf(float(x_min)) or math.isinf(float(x_max)):
            x = x[x.abs() != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = _aminmax(x)
        cur_min, cur_max = self.min_val.clone(), self.max_val.clone()
        if float(cur_min) == float("inf") or float(cur_max) == float("-inf"):
            self.reset_histogram(x, x_min, x_max)
            return x_orig
        new_min = _C.minimum(cur_min, x_min)
        new_max = _C.maximum(cur_max, x_max)
        update = _C.histc(x, self.bins, float(new_min), float(new_max))
        if bool(new_min == cur_min) and bool(new_max == cur_max):
            _set_buffer(self.histogram, self.histogram + update)
        else:
            combined = self._combine_histograms(
                self.histogram, cur_min, cur_max, update, new_min, new_max
            )
            _set_buffer(self.histogram, combined)
            _set_buffer(self.min_val, new_min)
            _set_buffer(self.max_val, new_max)
        return x_orig

    def calculate_qparams(self):
        """calculate_qparams()

        (scale, zero_point) for the error-minimising range found in the histogram."""
        if float(self.min_val) == float("inf") and float(self.max_val) == float("-inf"):
            return _C.tensor([1.0]), _C.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError(
                "The number of bins in histogram should be equal to the number of bins "
                "supplied while making this observer"
            )
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class FixedQParamsObserver(ObserverBase):
    """FixedQParamsObserver(scale, zero_point, dtype=torch.quint8, qscheme=torch.per_tensor_affine,
        quant_min=0, quant_max=255, is_dynamic=False)

    An observer whose qparams are given, not measured (outputs of sigmoid, tanh, ...)."""

    def __init__(
        self,
        scale,
        zero_point,
        dtype=qt.quint8,
        qscheme=qt.per_tensor_affine,
        quant_min=0,
        quant_max=255,
        is_dynamic=False,
        **kwargs,
    ):
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.register_buffer("scale", _C.tensor([scale], dtype=qt.float32))
        self.register_buffer("zero_point", _C.tensor([zero_point], dtype=_C.int32))
        self.qscheme = qscheme

    def forward(self, X):
        return X

    def calculate_qparams(self):
        """calculate_qparams()

        The fixed (scale, zero_point)."""
        return self.scale, self.zero_point


class PlaceholderObserver(ObserverBase):
    """PlaceholderObserver(dtype=torch.float32, custom_op_name='', compute_dtype=None,
        quant_min=None, quant_max=None, qscheme=None, eps=None, is_dynamic=False)

    Records nothing: it only carries a dtype (float16 casts, dynamic quantization)."""

    def __init__(
        self,
        dtype=qt.float32,
        custom_op_name="",
        compute_dtype=None,
        quant_min=None,
        quant_max=None,
        qscheme=None,
        eps=None,
        is_dynamic=False,
    ):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qt.per_tensor_affine if qscheme is None else qscheme
        self.eps = _EPS if eps is None else eps
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.custom_op = custom_op_name
        if compute_dtype:
            self.is_dynamic = True

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        """calculate_qparams()

        Raises: a placeholder has no qparams."""
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


class RecordingObserver(ObserverBase):
    """RecordingObserver(dtype=torch.quint8)

    Keeps a copy of every tensor it sees (debugging)."""

    def __init__(self, dtype=qt.quint8):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.tensor_val = []

    def forward(self, x):
        self.tensor_val.append(x.clone())
        return x

    def calculate_qparams(self):
        """calculate_qparams()

        Raises: a recording observer has no qparams."""
        raise Exception("calculate_qparams should not be called for RecordingObserver")

    def get_tensor_value(self):
        """get_tensor_value()

        The tensors recorded so far."""
        return self.tensor_val


class NoopObserver(ObserverBase):
    """NoopObserver(dtype=torch.float16, custom_op_name='')

    Records nothing and computes nothing; only its dtype matters."""

    def __init__(self, dtype=qt.float16, custom_op_name=""):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        """calculate_qparams()

        Raises: a no-op observer has no qparams."""
        raise Exception("calculate_qparams should not be called for NoopObserver")


class ReuseInputObserver(ObserverBase):
    """ReuseInputObserver()

    Marks an op whose output reuses its input's observer (reshape, view, ...)."""

    def __init__(self):
        super().__init__(qt.quint8, is_dynamic=False)

    def forward(self, x):
        return x

    def calculate_qparams(self):
        """calculate_qparams()

        Raises: this observer has no qparams of its own."""
        raise Exception("calculate_qparams should not be called for ReuseInputObserver")


def _is_activation_post_process(module):
    from .fake_quantize import FakeQuantizeBase

    return isinstance(module, (ObserverBase, FakeQuantizeBase))


def get_observer_state_dict(mod):
    """get_observer_state_dict(mod)

    The state-dict entries of a model's observers and fake-quantizers."""
    out = {}
    for k, v in mod.state_dict().items():
        if "activation_post_process" in k:
            out[k] = v
    return out


def load_observer_state_dict(mod, obs_dict):
    """load_observer_state_dict(mod, obs_dict)

    Loads observer state saved by get_observer_state_dict into a prepared model."""
    missing = []
    unexpected = []
    for name, module in mod.named_modules():
        prefix = name + "." if name else ""
        if _is_activation_post_process(module):
            keys = {k: v for k, v in obs_dict.items() if k.startswith(prefix)}
            module._load_from_state_dict(keys, prefix, {}, False, missing, unexpected, [])
    for k in missing:
        if "observer_enabled" not in k and "fake_quant_enabled" not in k:
            raise Exception(f"Missing keys for observer {k} in state_dict")
    for k in unexpected:
        raise Exception(f"Unexpected keys for observer {k} in state_dict")


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = RecordingObserver
default_weight_observer = MinMaxObserver.with_args(dtype=qt.qint8, qscheme=qt.per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(
    dtype=qt.qint8, qscheme=qt.per_tensor_symmetric, quant_min=-127, quant_max=127, eps=2**-12
)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=qt.qint8, qscheme=qt.per_channel_symmetric
)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=qt.qint8, qscheme=qt.per_channel_symmetric, quant_min=-127, quant_max=127, eps=2**-12
)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=qt.quint8, quant_min=0, quant_max=255, is_dynamic=True
)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=qt.quint8, qscheme=qt.per_channel_affine_float_qparams, ch_axis=0
)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=qt.quint4x2, qscheme=qt.per_channel_affine_float_qparams, ch_axis=0
)
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=qt.quint8, quant_min=0, quant_max=255
)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=qt.quint8, quant_min=0, quant_max=255
)
default_symmetric_fixed_qparams_observer = default_fixed_qparams_range_neg1to1_observer
default_affine_fixed_qparams_observer = default_fixed_qparams_range_0to1_observer
default_reuse_input_observer = ReuseInputObserver
