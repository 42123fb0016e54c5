"""Fake quantization modules (torch.ao.quantization.fake_quantize): an observer plus
quantize-dequantize in float, so training sees the rounding and clamping of int8 inference."""

import math

from ..._ops.fake_quantize import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine
from ...autograd.grad_mode import no_grad
from ...nn.modules.module import Module
from .. import _torch as _C
from . import _qtypes as qt
from .observer import (
    FixedQParamsObserver,
    HistogramObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    _with_args,
    _with_callable_args,
    default_fixed_qparams_range_0to1_observer,
    default_fixed_qparams_range_neg1to1_observer,
)
from .utils import _is_float_qparams, _is_per_channel, _is_per_tensor, _is_symmetric

__all__ = [
    "FakeQuantizeBase",
    "FakeQuantize",
    "FixedQParamsFakeQuantize",
    "FusedMovingAvgObsFakeQuantize",
    "disable_fake_quant",
    "disable_observer",
    "enable_fake_quant",
    "enable_observer",
    "default_fake_quant",
    "default_weight_fake_quant",
    "default_dynamic_fake_quant",
    "default_fixed_qparams_range_neg1to1_fake_quant",
    "default_fixed_qparams_range_0to1_fake_quant",
    "default_symmetric_fixed_qparams_fake_quant",
    "default_affine_fixed_qparams_fake_quant",
    "default_per_channel_weight_fake_quant",
    "default_embedding_fake_quant",
    "default_embedding_fake_quant_4bit",
    "default_histogram_fake_quant",
    "default_fused_act_fake_quant",
    "default_fused_wt_fake_quant",
    "default_fused_per_channel_wt_fake_quant",
    "fused_wt_fake_quant_range_neg_127_to_127",
    "fused_per_channel_wt_fake_quant_range_neg_127_to_127",
]


def _flag(value=1):
    return _C.tensor([value], dtype=_C.uint8)


class FakeQuantizeBase(Module):
    """FakeQuantizeBase()

    The base of fake-quantize modules: two switches (fake_quant_enabled, observer_enabled)
    kept as buffers, as torch's."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", _flag())
        self.register_buffer("observer_enabled", _flag())

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    def enable_fake_quant(self, enabled=True):
        """enable_fake_quant(enabled=True)

        Turns quantize-dequantize on (or off)."""
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        """disable_fake_quant()

        Turns quantize-dequantize off: forward returns its input."""
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        """enable_observer(enabled=True)

        Turns statistics collection on (or off)."""
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        """disable_observer()

        Freezes the qparams: the observer stops updating."""
        self.enable_observer(False)

    @classmethod
    def with_args(cls, **kwargs):
        """with_args(**kwargs)

        A constructor with these keyword arguments bound (for QConfig)."""
        ctor = _with_args(cls, **kwargs)
        ctor.__module__ = cls.__module__
        return ctor

    with_callable_args = classmethod(_with_callable_args)


class FakeQuantize(FakeQuantizeBase):
    """FakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
        is_dynamic=False, **observer_kwargs)

    Observes its input (while observer_enabled), updates scale and zero_point from the
    observer, and returns the input fake-quantized with them (while fake_quant_enabled)."""

    def __init__(
        self,
        observer=MovingAverageMinMaxObserver,
        quant_min=None,
        quant_max=None,
        is_dynamic=False,
        **observer_kwargs,
    ):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get("dtype", qt.quint8)
            if hasattr(observer, "p"):
                dtype = getattr(getattr(observer, "p", {}), "keywords", {}).get("dtype", dtype)
            lo, hi = qt.int_range(dtype)
            if quant_min < lo:
                raise AssertionError("quant_min out of bound")
            if quant_max > hi:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = self.activation_post_process.is_dynamic
        qscheme = self.activation_post_process.qscheme
        zp_dtype = _C.float32 if _is_float_qparams(qscheme) else _C.int32
        self.register_buffer("scale", _C.tensor([1.0], dtype=_C.float32))
        self.register_buffer("zero_point", _C.tensor([0], dtype=zp_dtype))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        if not (_is_per_channel(qscheme) or _is_per_tensor(qscheme)):
            raise AssertionError(
                "Only per channel and per tensor quantization are supported in fake quantize, "
                f"got qscheme: {qscheme}"
            )
        self.is_per_channel = _is_per_channel(qscheme)

    def calculate_qparams(self):
        """calculate_qparams()

        The observer's (scale, zero_point)."""
        return self.activation_post_process.calculate_qparams()

    def _store_qparams(self, scale, zero_point):
        with no_grad():
            if list(self.scale.shape) != list(scale.shape):
                self.scale.resize_(list(scale.shape))
                self.zero_point.resize_(list(zero_point.shape))
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point)

    def forward(self, X):
        if int(self.observer_enabled[0]) == 1:
            self.activation_post_process(X.detach())
            self._store_qparams(*self.calculate_qparams())
        if int(self.fake_quant_enabled[0]) == 1:
            if self.is_per_channel:
                X = fake_quantize_per_channel_affine(
                    X, self.scale, self.zero_point, self.ch_axis, self.quant_min, self.quant_max
                )
            else:
                X = fake_quantize_per_tensor_affine(
                    X, self.scale, self.zero_point, self.quant_min, self.quant_max
                )
        return X

    def extra_repr(self):
        return (
            f"fake_quant_enabled={self.fake_quant_enabled}, "
            f"observer_enabled={self.observer_enabled}, quant_min={self.quant_min}, "
            f"quant_max={self.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
            f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}"
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, msgs
    ):
        # Per-channel qparams change shape once observed: take the saved shapes.
        for name in ("scale", "zero_point"):
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(list(state_dict[key].shape))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, msgs
        )


class FixedQParamsFakeQuantize(FakeQuantize):
    """FixedQParamsFakeQuantize(observer)

    Fake quantization with the fixed qparams of a FixedQParamsObserver (sigmoid, tanh ...)."""

    def __init__(self, observer):
        super().__init__(observer=observer)
        if type(self.activation_post_process) is not FixedQParamsObserver:
            raise AssertionError(
                f"{self.__class__.__name__}'s observer must be a FixedQParamsObserver."
            )
        self.scale = self.activation_post_process.scale
        self.zero_point = self.activation_post_process.zero_point

    def calculate_qparams(self):
        """calculate_qparams()

        The fixed (scale, zero_point)."""
        return self.scale, self.zero_point

    def extra_repr(self):
        return (
            f"fake_quant_enabled={self.fake_quant_enabled}, "
            f"observer_enabled={self.observer_enabled}, scale={self.scale}, "
            f"zero_point={self.zero_point}, dtype={self.dtype}, quant_min="
            f"{self.activation_post_process.quant_min}, quant_max="
            f"{self.activation_post_process.quant_max}, qscheme={self.qscheme}"
        )


_SMALL_SCALE = 6.1e-5  # torch's SMALL_SCALE_THRESHOLD (a float)


def _choose_qparams(min_v, max_v, qmin, qmax, preserve_sparsity):
    """torch's C++ ChooseQuantizationParams (the fused observer's qparams), one channel: float
    min/max, the scale in double rounded to float, the zero point picked by the smaller error."""
    import numpy as np  # only when QAT observes: importing ember does not load numpy

    small = np.float32(_SMALL_SCALE)
    min_v, max_v = np.float32(min_v), np.float32(max_v)
    if min_v < 0 and max_v > 0 and preserve_sparsity:
        sym_qmin = -(int((qmax - qmin) / 2) + 1)
        sym_qmax = int((qmax - qmin) / 2)
        max_scale = max(abs(float(min_v) / sym_qmin), abs(float(max_v) / sym_qmax))
        min_v = np.float32(max_scale * sym_qmin)
        max_v = np.float32(max_scale * sym_qmax)
    min_v = min(min_v, np.float32(0))
    max_v = max(max_v, np.float32(0))
    scale = (float(max_v) - float(min_v)) / (qmax - qmin)
    fs = np.float32(scale)
    with np.errstate(divide="ignore", over="ignore"):
        if fs == 0 or math.isinf(np.float32(1) / fs):
            scale = 0.1
    if scale < small:
        org_scale = np.float32(scale)
        scale = float(small)
        if min_v == 0:
            max_v = np.float32(small * (qmax - qmin))
        elif max_v == 0:
            min_v = np.float32(-small * (qmax - qmin))
        else:
            amp = np.float32(small / org_scale)
            min_v, max_v = np.float32(min_v * amp), np.float32(max_v * amp)
    # The zero point is computed from the float scale the kernels will use.
    scale_f = float(np.float32(scale))
    zp_from_min = qmin - float(min_v) / scale_f
    zp_from_max = qmax - float(max_v) / scale_f
    err_min = abs(qmin) - abs(float(min_v) / scale_f)
    err_max = abs(qmax) - abs(float(max_v) / scale_f)
    zp = zp_from_min if err_min < err_max else zp_from_max
    if min_v < 0 and max_v > 0 and preserve_sparsity:
        zp = (qmin + qmax) / 2
    if zp < qmin:
        nudged = qmin
    elif zp > qmax:
        nudged = qmax
    else:
        nudged = int(np.rint(zp))
    return scale_f, nudged


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """FusedMovingAvgObsFakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0,
        quant_max=255, **observer_kwargs)

    torch's fused moving-average observer and fake quantization (the default QAT qconfig's):
    the moving-average min/max of each batch, qparams by torch's C++ rule (which keeps zero
    exactly representable and, for symmetric schemes, centres the range), then fake-quantize."""

    def __init__(
        self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs
    ):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(
            self.activation_post_process,
            (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver),
        ):
            raise AssertionError(
                "Fused observer+fake_quant module only works with MovingAverageMinMaxObserver"
            )
        self.register_buffer("fake_quant_enabled", _C.tensor([1], dtype=_C.int64))
        self.register_buffer("observer_enabled", _C.tensor([1], dtype=_C.int64))
        self.is_symmetric_quant = _is_symmetric(self.activation_post_process.qscheme)

    def calculate_qparams(self):
        """calculate_qparams()

        The observer's (scale, zero_point)."""
        return self.activation_post_process.calculate_qparams()

    def extra_repr(self):
        return (
            f"fake_quant_enabled={self.fake_quant_enabled}, "
            f"observer_enabled={self.observer_enabled}, scale={self.scale}, "
            f"zero_point={self.zero_point}, dtype={self.dtype}, quant_min={self.quant_min}, "
            f"quant_max={self.quant_max}, qscheme={self.qscheme}, "
            f"reduce_range={self.activation_post_process.reduce_range}"
        )

    def forward(self, X):
        return fused_moving_avg_obs_fake_quant(
            X,
            self.observer_enabled,
            self.fake_quant_enabled,
            self.activation_post_process.min_val,
            self.activation_post_process.max_val,
            self.scale,
            self.zero_point,
            self.activation_post_process.averaging_constant,
            self.activation_post_process.quant_min,
            self.activation_post_process.quant_max,
            self.ch_axis,
            self.is_per_channel,
            self.is_symmetric_quant,
        )


def fused_moving_avg_obs_fake_quant(
    self,
    observer_on,
    fake_quant_on,
    running_min,
    running_max,
    scale,
    zero_point,
    averaging_const,
    quant_min,
    quant_max,
    ch_axis,
    per_row_fake_quant=False,
    symmetric_quant=False,
):
    """fused_moving_avg_obs_fake_quant(self, observer_on, fake_quant_on, running_min, running_max,
        scale, zero_point, averaging_const, quant_min, quant_max, ch_axis, per_row_fake_quant=False,
        symmetric_quant=False) -> Tensor

    Updates running_min/running_max (moving averages) and scale/zero_point in place from self
    when observer_on, and returns self fake-quantized when fake_quant_on."""
    if int(observer_on[0]) == 1:
        x = self.detach().to(_C.float32)
        if per_row_fake_quant:
            order = list(range(x.dim()))
            order[ch_axis], order[0] = 0, ch_axis
            y = _C.flatten(x.permute(order), 1)
            cur_min, cur_max = _C.amin(y, 1), _C.amax(y, 1)
        else:
            cur_min, cur_max = _C.amin(x), _C.amax(x)
        with no_grad():
            if running_min.numel() == 0 or bool(_C.isinf(running_min).all()):
                new_min, new_max = cur_min, cur_max
            else:
                c = float(averaging_const)
                new_min = running_min + c * (cur_min - running_min)
                new_max = running_max + c * (cur_max - running_max)
            if list(running_min.shape) != list(new_min.shape):
                running_min.resize_(list(new_min.shape))
                running_max.resize_(list(new_max.shape))
            running_min.copy_(new_min)
            running_max.copy_(new_max)
            mins = running_min.reshape(-1).tolist()
            maxs = running_max.reshape(-1).tolist()
            pairs = [
                _choose_qparams(lo, hi, quant_min, quant_max, symmetric_quant)
                for lo, hi in zip(mins, maxs)
            ]
            s = _C.tensor([p[0] for p in pairs], dtype=_C.float32)
            z = _C.tensor([p[1] for p in pairs], dtype=zero_point.dtype)
            if list(scale.shape) != list(s.shape):
                scale.resize_(list(s.shape))
                zero_point.resize_(list(z.shape))
            scale.copy_(s)
            zero_point.copy_(z)
    if int(fake_quant_on[0]) != 1:
        return self
    if per_row_fake_quant:
        return fake_quantize_per_channel_affine(
            self, scale, zero_point, ch_axis, quant_min, quant_max
        )
    return fake_quantize_per_tensor_affine(self, scale, zero_point, quant_min, quant_max)


def _is_fake_quant(mod):
    return isinstance(mod, FakeQuantizeBase)


def disable_fake_quant(mod):
    """disable_fake_quant(mod)

    For model.apply: turns fake quantization off in every fake-quantize module."""
    if _is_fake_quant(mod):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    """enable_fake_quant(mod)

    For model.apply: turns fake quantization on in every fake-quantize module."""
    if _is_fake_quant(mod):
        mod.enable_fake_quant()


def disable_observer(mod):
    """disable_observer(mod)

    For model.apply: freezes the qparams of every fake-quantize module."""
    if _is_fake_quant(mod):
        mod.disable_observer()


def enable_observer(mod):
    """enable_observer(mod)

    For model.apply: lets every fake-quantize module observe again."""
    if _is_fake_quant(mod):
        mod.enable_observer()


default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=0,
    quant_max=255,
    dtype=qt.quint8,
    qscheme=qt.per_tensor_affine,
    reduce_range=True,
)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=qt.qint8,
    qscheme=qt.per_tensor_symmetric,
    reduce_range=False,
)
default_dynamic_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=0,
    quant_max=255,
    is_dynamic=True,
    dtype=qt.quint8,
    averaging_constant=1,
)
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer
)
default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer
)
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=qt.qint8,
    qscheme=qt.per_channel_symmetric,
    reduce_range=False,
    ch_axis=0,
)
default_embedding_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    qscheme=qt.per_channel_affine_float_qparams,
    dtype=qt.quint8,
    quant_min=0,
    quant_max=255,
    ch_axis=0,
    averaging_constant=1,
)
default_embedding_fake_quant_4bit = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    qscheme=qt.per_channel_affine_float_qparams,
    ch_axis=0,
    dtype=qt.quint4x2,
    averaging_constant=1,
)
default_histogram_fake_quant = FakeQuantize.with_args(
    observer=HistogramObserver,
    quant_min=0,
    quant_max=255,
    dtype=qt.quint8,
    qscheme=qt.per_tensor_affine,
    reduce_range=True,
)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=qt.quint8
)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=qt.qint8,
    qscheme=qt.per_tensor_symmetric,
)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=qt.qint8,
    qscheme=qt.per_channel_symmetric,
)
fused_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=-127,
    quant_max=127,
    dtype=qt.qint8,
    qscheme=qt.per_tensor_symmetric,
    eps=2**-12,
)
fused_per_channel_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    quant_min=-127,
    quant_max=127,
    dtype=qt.qint8,
    qscheme=qt.per_channel_symmetric,
    eps=2**-12,
)
