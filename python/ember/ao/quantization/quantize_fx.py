"""FX graph mode quantization (torch.ao.quantization.quantize_fx).

prepare_fx traces the model with ember.fx, fuses conv-bn-relu / conv-relu / linear-relu /
linear-bn / bn-relu by matching those chains in the graph (each intermediate value used once),
gives every node its qconfig from the QConfigMapping (module name, regex, object type, global),
swaps modules for their QAT forms (prepare_qat_fx), and inserts observer modules
(activation_post_process_N) at the graph edges torch's x86 backend observes: the tensor inputs
and the output of each quantizable op (conv, linear, batch norm, their fused forms, F.linear,
F.conv*, add, mul, cat, matmul), with weight observers on the weights functional ops read. Ops
that only move or select values (relu, max/avg pooling, reshape, transpose, ...) share their
input's quantization; everything else stays float.

convert_fx turns observers into quantize_per_tensor calls at the points where float values
become quantized, swaps quantizable modules for quantized ones (from_float with the module's
observers), lowers sums and products of two quantized tensors to quantized add/mul (add_relu /
mul_relu when a relu follows: that pair is observed after the relu, as torch's pattern), runs
other functional quantizable ops in torch's reference form (dequantize, float op on
quantize-dequantized weights, quantize with the output observer's qparams) and dequantizes
where a quantized value reaches a float consumer or the output. Nodes whose qconfig is None stay
float."""

from .fx._convert import _convert, _hand_back
from .fx._convert_decomposed import _convert_to_reference_decomposed_fx  # noqa: F401
from .fx._fuse import _fuse_graph, _trace
from .fx._prepare import _prepare

__all__ = [
    "fuse_fx",
    "prepare_fx",
    "prepare_qat_fx",
    "convert_fx",
    "convert_to_reference_fx",
]


def _config_dict(config):
    """A custom config (a dict or a *CustomConfig) as its dict form."""
    if config is None:
        return {}
    return config if isinstance(config, dict) else config.to_dict()


def _preserve(gm, source, config):
    """gm with the config's preserved attributes of source, as torch's functions keep them."""
    for name in _config_dict(config).get("preserved_attributes", []):
        setattr(gm, name, getattr(source, name))
    return gm


def fuse_fx(model, fuse_custom_config=None, backend_config=None):
    """fuse_fx(model, fuse_custom_config=None, backend_config=None)

    Traces model and fuses conv-bn(-relu), conv-relu, linear-relu, linear-bn and bn-relu
    chains of an eval-mode model; returns the GraphModule."""
    gm = _trace(model, None)
    extra = _config_dict(fuse_custom_config).get("additional_fuser_method_mapping", {})
    gm = _fuse_graph(gm, False, extra)
    # the modules fused into another (bn, relu) go, as torch's new GraphModule keeps only the
    # modules its graph calls
    gm.delete_all_unused_submodules()
    return _preserve(gm, model, fuse_custom_config)


def prepare_fx(
    model, qconfig_mapping, example_inputs, prepare_custom_config=None, backend_config=None
):
    """prepare_fx(model, qconfig_mapping, example_inputs, prepare_custom_config=None,
        backend_config=None)

    Traces an eval-mode model, fuses it and inserts observers for post-training static
    quantization; run calibration data through the result, then convert_fx."""
    if model.training:
        raise AssertionError("prepare_fx expects a model in eval mode; use prepare_qat_fx")
    prepared = _prepare(model, qconfig_mapping, False, example_inputs, prepare_custom_config)
    return _preserve(prepared, model, prepare_custom_config)


def prepare_qat_fx(
    model, qconfig_mapping, example_inputs, prepare_custom_config=None, backend_config=None
):
    """prepare_qat_fx(model, qconfig_mapping, example_inputs, prepare_custom_config=None,
        backend_config=None)

    Traces a training-mode model, fuses it for QAT, swaps modules for QAT modules and inserts
    fake-quantizers; train the result, then convert_fx."""
    if not model.training:
        raise AssertionError("prepare_qat_fx expects a model in training mode")
    prepared = _prepare(model, qconfig_mapping, True, example_inputs, prepare_custom_config)
    return _preserve(prepared, model, prepare_custom_config)


def convert_fx(
    graph_module,
    convert_custom_config=None,
    _remove_qconfig=True,
    qconfig_mapping=None,
    backend_config=None,
    keep_original_weights=False,
):
    """convert_fx(graph_module, convert_custom_config=None, _remove_qconfig=True,
        qconfig_mapping=None, backend_config=None, keep_original_weights=False)

    Turns a calibrated (or QAT-trained) prepared model into a quantized one: quantized modules
    where they exist, torch's reference form for functional ops."""
    converted = _hand_back(graph_module, _convert(graph_module, is_reference=False))
    return _preserve(converted, graph_module, convert_custom_config)


def convert_to_reference_fx(
    graph_module,
    convert_custom_config=None,
    _remove_qconfig=True,
    qconfig_mapping=None,
    backend_config=None,
):
    """convert_to_reference_fx(graph_module, convert_custom_config=None, _remove_qconfig=True,
        qconfig_mapping=None, backend_config=None)

    The reference quantized model: every quantizable op in float between dequantize and
    quantize, with quantize-dequantized weights."""
    converted = _hand_back(graph_module, _convert(graph_module, is_reference=True))
    return _preserve(converted, graph_module, convert_custom_config)
