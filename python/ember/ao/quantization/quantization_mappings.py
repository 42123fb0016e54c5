"""Default module swaps (torch.ao.quantization.quantization_mappings): float -> QAT module for
prepare_qat, float/QAT/fused -> quantized module for convert, float -> dynamically quantized
module for quantize_dynamic. The quantized modules are looked up when first asked for, so the
QAT and prepare paths work without them."""

import copy

from ... import nn
from ..nn import intrinsic as nni
from ..nn import qat as nnqat
from ..nn.intrinsic import qat as nniqat
from .stubs import DeQuantStub, QuantStub

__all__ = [
    "get_default_static_quant_module_mappings",
    "get_default_static_quant_reference_module_mappings",
    "get_default_qat_module_mappings",
    "get_default_dynamic_quant_module_mappings",
    "get_default_qconfig_propagation_list",
    "get_default_compare_output_module_list",
    "get_embedding_qat_module_mappings",
    "get_embedding_static_quant_module_mappings",
    "no_observer_set",
    "get_quantized_operator",
    "get_default_float_to_quantized_operator_mappings",
]

DEFAULT_QAT_MODULE_MAPPINGS = {
    nn.Conv1d: nnqat.Conv1d,
    nn.Conv2d: nnqat.Conv2d,
    nn.Conv3d: nnqat.Conv3d,
    nn.Linear: nnqat.Linear,
    nni.ConvBn1d: nniqat.ConvBn1d,
    nni.ConvBn2d: nniqat.ConvBn2d,
    nni.ConvBnReLU1d: nniqat.ConvBnReLU1d,
    nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
    nni.ConvBn3d: nniqat.ConvBn3d,
    nni.ConvBnReLU3d: nniqat.ConvBnReLU3d,
    nni.ConvReLU1d: nniqat.ConvReLU1d,
    nni.ConvReLU2d: nniqat.ConvReLU2d,
    nni.ConvReLU3d: nniqat.ConvReLU3d,
    nni.LinearReLU: nniqat.LinearReLU,
}

_INCLUDE_QCONFIG_PROPAGATE_LIST = {nn.Sequential}


def _quantized():
    """(nnq, nnqd, nniq): ember.ao.nn.quantized, .quantized.dynamic and intrinsic.quantized, or
    None for each that is not there."""
    try:
        from ..nn import quantized as nnq
    except ImportError:
        nnq = None
    try:
        from ..nn.quantized import dynamic as nnqd
    except (ImportError, AttributeError):
        nnqd = None
    try:
        from ..nn.intrinsic import quantized as nniq
    except ImportError:
        nniq = None
    return nnq, nnqd, nniq


def _pick(table):
    return dict(table)


def _present(table):
    return {k: v for k, v in table.items() if v is not None}


def _static_table():
    nnq, _, nniq = _quantized()
    q = (lambda name: getattr(nnq, name, None)) if nnq else (lambda name: None)
    iq = (lambda name: getattr(nniq, name, None)) if nniq else (lambda name: None)
    return _pick(
        [
            (QuantStub, q("Quantize")),
            (DeQuantStub, q("DeQuantize")),
            (nn.BatchNorm2d, q("BatchNorm2d")),
            (nn.BatchNorm3d, q("BatchNorm3d")),
            (nn.ConvTranspose1d, q("ConvTranspose1d")),
            (nn.ConvTranspose2d, q("ConvTranspose2d")),
            (nn.ConvTranspose3d, q("ConvTranspose3d")),
            (nn.GroupNorm, q("GroupNorm")),
            (nn.InstanceNorm1d, q("InstanceNorm1d")),
            (nn.InstanceNorm2d, q("InstanceNorm2d")),
            (nn.InstanceNorm3d, q("InstanceNorm3d")),
            (nn.PReLU, q("PReLU")),
            (nn.Conv1d, q("Conv1d")),
            (nn.Conv2d, q("Conv2d")),
            (nn.Conv3d, q("Conv3d")),
            (nn.ReLU6, q("ReLU6")),
            (nn.Hardswish, q("Hardswish")),
            (nn.ELU, q("ELU")),
            (nn.LeakyReLU, q("LeakyReLU")),
            (nn.Dropout, q("Dropout")),
            (nn.LayerNorm, q("LayerNorm")),
            (nn.Embedding, q("Embedding")),
            (nn.EmbeddingBag, q("EmbeddingBag")),
            (nn.Linear, q("Linear")),
            (nni.BNReLU2d, iq("BNReLU2d")),
            (nni.BNReLU3d, iq("BNReLU3d")),
            (nni.ConvReLU1d, iq("ConvReLU1d")),
            (nni.ConvReLU2d, iq("ConvReLU2d")),
            (nni.ConvReLU3d, iq("ConvReLU3d")),
            (nni.LinearReLU, iq("LinearReLU")),
            (nniqat.ConvBn1d, q("Conv1d")),
            (nniqat.ConvBnReLU1d, iq("ConvReLU1d")),
            (nniqat.ConvBn2d, q("Conv2d")),
            (nniqat.ConvBnReLU2d, iq("ConvReLU2d")),
            (nniqat.ConvReLU1d, iq("ConvReLU1d")),
            (nniqat.ConvReLU2d, iq("ConvReLU2d")),
            (nniqat.ConvBn3d, q("Conv3d")),
            (nniqat.ConvBnReLU3d, iq("ConvReLU3d")),
            (nniqat.ConvReLU3d, iq("ConvReLU3d")),
            (nniqat.LinearReLU, iq("LinearReLU")),
            (nnqat.Linear, q("Linear")),
            (nnqat.Conv1d, q("Conv1d")),
            (nnqat.Conv2d, q("Conv2d")),
            (nnqat.Conv3d, q("Conv3d")),
            (_float_functional(nnq), q("QFunctional")),
        ]
    )


def _float_functional(nnq):
    return getattr(nnq, "FloatFunctional", None) if nnq else None


def _dynamic_table():
    _, nnqd, _ = _quantized()
    d = (lambda name: getattr(nnqd, name, None)) if nnqd else (lambda name: None)
    return _pick(
        [
            (nn.GRUCell, d("GRUCell")),
            (nn.Linear, d("Linear")),
            (nn.LSTMCell, d("LSTMCell")),
            (nn.RNNCell, d("RNNCell")),
            (nn.LSTM, d("LSTM")),
            (nn.GRU, d("GRU")),
        ]
    )


def get_default_static_quant_module_mappings():
    """get_default_static_quant_module_mappings()

    {float, fused or QAT module class: quantized module class} for static convert."""
    return _present(_static_table())


def get_default_static_quant_reference_module_mappings():
    """get_default_static_quant_reference_module_mappings()

    The reference-module swaps (the static mapping where reference modules are missing)."""
    return get_default_static_quant_module_mappings()


def get_embedding_static_quant_module_mappings():
    """get_embedding_static_quant_module_mappings()

    The static mapping with embeddings included."""
    return get_default_static_quant_module_mappings()


def get_default_qat_module_mappings():
    """get_default_qat_module_mappings()

    {float or fused module class: QAT module class} for prepare_qat."""
    return copy.deepcopy(DEFAULT_QAT_MODULE_MAPPINGS)


def get_embedding_qat_module_mappings():
    """get_embedding_qat_module_mappings()

    The QAT mapping with Embedding -> qat.Embedding added."""
    out = get_default_qat_module_mappings()
    out[nn.Embedding] = nnqat.Embedding
    return out


def get_default_dynamic_quant_module_mappings():
    """get_default_dynamic_quant_module_mappings()

    {float module class: dynamically quantized module class} for quantize_dynamic."""
    return _present(_dynamic_table())


def get_default_qconfig_propagation_list():
    """get_default_qconfig_propagation_list()

    The module classes that get a qconfig (and an observer) from prepare."""
    return (
        set(_static_table())
        | set(DEFAULT_QAT_MODULE_MAPPINGS)
        | set(_dynamic_table())
        | _INCLUDE_QCONFIG_PROPAGATE_LIST
    ) - {None}


def get_default_compare_output_module_list():
    """get_default_compare_output_module_list()

    The module classes whose outputs the numeric suite compares: both sides of the static,
    QAT and dynamic mappings (float and quantized modules alike), and nn.Sequential."""
    classes = set(_INCLUDE_QCONFIG_PROPAGATE_LIST)
    for table in (_static_table(), DEFAULT_QAT_MODULE_MAPPINGS, _dynamic_table()):
        classes |= set(table) | set(table.values())
    return classes - {None}


def no_observer_set():
    """no_observer_set()

    Module classes that never get an output observer."""
    return set()


def get_default_float_to_quantized_operator_mappings():
    """get_default_float_to_quantized_operator_mappings()

    {float function: quantized op} (empty: functional ops are swapped in FX convert)."""
    return {}


def get_quantized_operator(float_op):
    """get_quantized_operator(float_op)

    The quantized op for a float function, or raises."""
    raise AssertionError(f"Operator {float_op} does not have corresponding quantized op")
