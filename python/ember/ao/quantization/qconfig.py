"""QConfig (torch.ao.quantization.qconfig): which observer or fake-quantizer a module's
activation and weight get, and torch's ready-made configurations per backend."""

import warnings
from collections import namedtuple

from ... import nn
from . import _qtypes as qt
from .fake_quantize import (
    FakeQuantize,
    FusedMovingAvgObsFakeQuantize,
    default_dynamic_fake_quant,
    default_embedding_fake_quant,
    default_embedding_fake_quant_4bit,
    default_fake_quant,
    default_fused_act_fake_quant,
    default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant,
    default_per_channel_weight_fake_quant,
    default_weight_fake_quant,
    fused_per_channel_wt_fake_quant_range_neg_127_to_127,
    fused_wt_fake_quant_range_neg_127_to_127,
)
from .observer import (
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    NoopObserver,
    PlaceholderObserver,
    default_debug_observer,
    default_dynamic_quant_observer,
    default_float_qparams_observer,
    default_float_qparams_observer_4bit,
    default_observer,
    default_per_channel_weight_observer,
    default_placeholder_observer,
    default_reuse_input_observer,
    default_weight_observer,
    per_channel_weight_observer_range_neg_127_to_127,
    weight_observer_range_neg_127_to_127,
)

__all__ = [
    "QConfig",
    "QConfigDynamic",
    "QConfigAny",
    "default_qconfig",
    "default_debug_qconfig",
    "default_per_channel_qconfig",
    "default_dynamic_qconfig",
    "float16_dynamic_qconfig",
    "float16_static_qconfig",
    "per_channel_dynamic_qconfig",
    "float_qparams_weight_only_qconfig",
    "float_qparams_weight_only_qconfig_4bit",
    "default_quint8_weight_qconfig",
    "default_qat_qconfig",
    "default_dynamic_qat_qconfig",
    "default_weight_only_qconfig",
    "default_activation_only_qconfig",
    "default_qat_qconfig_v2",
    "default_reuse_input_qconfig",
    "default_symmetric_qnnpack_qconfig",
    "default_per_channel_symmetric_qnnpack_qconfig",
    "default_symmetric_qnnpack_qat_qconfig",
    "default_per_channel_symmetric_qnnpack_qat_qconfig",
    "default_embedding_qat_qconfig",
    "default_embedding_qat_qconfig_4bit",
    "get_default_qconfig",
    "get_default_qat_qconfig",
    "get_default_qconfig_dict",
    "get_default_qat_qconfig_dict",
    "qconfig_equals",
]

_BACKENDS = ["fbgemm", "x86", "qnnpack", "onednn"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """QConfig(activation, weight)

    A pair of observer constructors (classes or with_args results, not instances): one for a
    module's output activation, one for its weight."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError(
                "QConfig received observer instance, please pass observer class instead. "
                "Use MyObserver.with_args(x=1) to override arguments to constructor if needed"
            )
        return super().__new__(cls, activation, weight)


class QConfigDynamic(namedtuple("QConfigDynamic", ["activation", "weight"])):
    """QConfigDynamic(activation=torch.nn.Identity, weight=torch.nn.Identity)

    The deprecated name of a dynamic-quantization QConfig (use QConfig)."""

    __slots__ = ()

    def __new__(cls, activation=nn.Identity, weight=nn.Identity):
        warnings.warn(
            "`QConfigDynamic` is going to be deprecated in PyTorch 1.12, please use `QConfig` "
            "instead",
            FutureWarning,
            stacklevel=2,
        )
        if isinstance(weight, nn.Module):
            raise ValueError(
                "QConfigDynamic received observer instance, please pass observer class instead. "
                "Use MyObserver.with_args(x=1) to override arguments to constructor if needed"
            )
        return super().__new__(cls, activation, weight)


QConfigAny = QConfig

default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_debug_qconfig = QConfig(weight=default_weight_observer, activation=default_debug_observer)
default_per_channel_qconfig = QConfig(
    activation=default_observer, weight=default_per_channel_weight_observer
)
default_dynamic_qconfig = QConfig(
    activation=default_dynamic_quant_observer, weight=default_weight_observer
)
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=qt.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=qt.float16),
)
float16_static_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=qt.float16),
    weight=PlaceholderObserver.with_args(dtype=qt.float16),
)
per_channel_dynamic_qconfig = QConfig(
    activation=default_dynamic_quant_observer, weight=default_per_channel_weight_observer
)
float_qparams_weight_only_qconfig = QConfig(
    activation=default_placeholder_observer, weight=default_float_qparams_observer
)
float_qparams_weight_only_qconfig_4bit = QConfig(
    activation=default_placeholder_observer, weight=default_float_qparams_observer_4bit
)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_dynamic_qat_qconfig = QConfig(
    activation=default_dynamic_fake_quant, weight=default_weight_fake_quant
)
default_weight_only_qconfig = QConfig(activation=nn.Identity, weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=nn.Identity)
default_qat_qconfig_v2 = QConfig(
    activation=default_fused_act_fake_quant, weight=default_fused_wt_fake_quant
)
default_reuse_input_qconfig = QConfig(activation=default_reuse_input_observer, weight=NoopObserver)
default_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=qt.qint8, reduce_range=False, eps=2**-12),
    weight=weight_observer_range_neg_127_to_127,
)
default_per_channel_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=qt.qint8, reduce_range=False, eps=2**-12),
    weight=per_channel_weight_observer_range_neg_127_to_127,
)
default_embedding_qat_qconfig = QConfig(
    activation=NoopObserver.with_args(dtype=qt.float32), weight=default_embedding_fake_quant
)
default_embedding_qat_qconfig_4bit = QConfig(
    activation=NoopObserver.with_args(dtype=qt.float32), weight=default_embedding_fake_quant_4bit
)
default_quint8_weight_qconfig = QConfig(activation=HistogramObserver, weight=MinMaxObserver)


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise AssertionError(
            "backend: " + str(backend) + f" not supported. backend must be one of {_BACKENDS}"
        )


def get_default_qconfig(backend="x86", version=0):
    """get_default_qconfig(backend='x86', version=0)

    torch's post-training qconfig for a backend: histogram-observed activations (reduce_range
    on x86/fbgemm) and per-channel symmetric weights (per-tensor on qnnpack)."""
    _check_backend(backend)
    if version != 0:
        raise AssertionError(
            "Version number: "
            + str(version)
            + " in get_default_qconfig is not supported. Version number must be 0"
        )
    if backend in ("fbgemm", "x86"):
        return QConfig(
            activation=HistogramObserver.with_args(reduce_range=True),
            weight=default_per_channel_weight_observer,
        )
    if backend == "qnnpack":
        return QConfig(
            activation=HistogramObserver.with_args(reduce_range=False),
            weight=default_weight_observer,
        )
    return QConfig(
        activation=HistogramObserver.with_args(reduce_range=False),
        weight=default_per_channel_weight_observer,
    )


def get_default_qat_qconfig(backend="x86", version=1):
    """get_default_qat_qconfig(backend='x86', version=1)

    torch's quantization-aware-training qconfig for a backend: moving-average fake quantization
    of activations and weights (the fused module with version=1)."""
    _check_backend(backend)
    if version not in (0, 1):
        raise AssertionError(
            "Version number: "
            + str(version)
            + "in get_default_qat_qconfig is not supported. Version number must be 0 or 1"
        )
    fq = FakeQuantize if version == 0 else FusedMovingAvgObsFakeQuantize
    per_channel_w = (
        default_per_channel_weight_fake_quant
        if version == 0
        else default_fused_per_channel_wt_fake_quant
    )
    per_tensor_w = default_weight_fake_quant if version == 0 else default_fused_wt_fake_quant
    act = dict(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
    if backend in ("fbgemm", "x86"):
        return QConfig(activation=fq.with_args(**act, reduce_range=True), weight=per_channel_w)
    if backend == "qnnpack":
        return QConfig(activation=fq.with_args(**act, reduce_range=False), weight=per_tensor_w)
    return QConfig(activation=fq.with_args(**act), weight=per_channel_w)


default_symmetric_qnnpack_qat_qconfig = QConfig(
    activation=FusedMovingAvgObsFakeQuantize.with_args(
        observer=MovingAverageMinMaxObserver,
        quant_min=-128,
        quant_max=127,
        dtype=qt.qint8,
        reduce_range=False,
        eps=2**-12,
    ),
    weight=fused_wt_fake_quant_range_neg_127_to_127,
)
default_per_channel_symmetric_qnnpack_qat_qconfig = QConfig(
    activation=FusedMovingAvgObsFakeQuantize.with_args(
        observer=MovingAverageMinMaxObserver,
        quant_min=-128,
        quant_max=127,
        dtype=qt.qint8,
        reduce_range=False,
        eps=2**-12,
    ),
    weight=fused_per_channel_wt_fake_quant_range_neg_127_to_127,
)


def get_default_qconfig_dict(backend="x86", version=0):
    """get_default_qconfig_dict(backend='x86', version=0)

    Deprecated: get_default_qconfig_mapping(backend, version).to_dict()."""
    from .qconfig_mapping import get_default_qconfig_mapping

    return get_default_qconfig_mapping(backend, version).to_dict()


def get_default_qat_qconfig_dict(backend="x86", version=1):
    """get_default_qat_qconfig_dict(backend='x86', version=1)

    Deprecated: get_default_qat_qconfig_mapping(backend, version).to_dict()."""
    from .qconfig_mapping import get_default_qat_qconfig_mapping

    return get_default_qat_qconfig_mapping(backend, version).to_dict()


def _partial_key(f):
    p = getattr(f, "p", None)
    if p is not None:
        return (p.func, tuple(sorted(p.keywords.items(), key=lambda kv: kv[0])))
    return f


def qconfig_equals(q1, q2):
    """qconfig_equals(q1, q2) -> bool

    Whether two qconfigs build the same observers (comparing with_args wrappers by what they
    bind)."""
    if q1 is None or q2 is None:
        return q1 == q2
    try:
        return _partial_key(q1.activation) == _partial_key(q2.activation) and _partial_key(
            q1.weight
        ) == _partial_key(q2.weight)
    except TypeError:
        return q1 == q2


def _add_module_to_qconfig_obs_ctr(qconfig, module):
    """The qconfig itself (observers are created on the module's device by default on CPU)."""
    return qconfig
