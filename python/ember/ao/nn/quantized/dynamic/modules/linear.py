"""Dynamic quantized Linear (torch.ao.nn.quantized.dynamic.Linear): int8 weights, activations
quantized to uint8 per call over their own range, float in and out."""

from ... import _ops
from ...modules import linear as _qlinear
from ...modules.utils import _ember, _quantize_weight

__all__ = ["Linear"]


class Linear(_qlinear.Linear):
    """Linear(in_features, out_features, bias_=True, dtype=qint8)

    A linear layer with a qint8 weight whose float input is quantized on the fly (range of the
    whole call, reduce_range as torch's x86 engine) and whose int32 sums are scaled back to
    float."""

    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=None):
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def forward(self, x):
        packed = self._packed_params._packed_params
        if self._packed_params.dtype == _ember().float16:
            weight, bias = packed
            return _ops.linear_fp16(x, weight, bias)
        if self.version is None or self.version < 4:
            y = _ops.linear_dynamic(x, packed, reduce_range=False)
        else:
            y = _ops.linear_dynamic(x, packed, reduce_range=True)
        return y.to(x.dtype)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        if self._packed_params.dtype == _ember().float16:
            return (
                f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}"
            )
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}"
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self.version = local_metadata.get("version", None)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> Linear

        The dynamic quantized module of a float Linear (or LinearReLU), its weight quantized
        with mod.qconfig.weight()."""
        e = _ember()
        names = ("Linear", "NonDynamicallyQuantizableLinear", "LinearReLU")
        if type(mod).__name__ not in names:
            raise AssertionError(
                "nn.quantized.dynamic.Linear.from_float only works for one of"
                + str(list(names))
                + f", got {type(mod)}"
            )
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if type(mod).__name__ == "LinearReLU":
            mod = mod[0]
        if mod.qconfig is not None and mod.qconfig.weight is not None:
            weight_observer = mod.qconfig.weight()
        else:
            from .....quantization.qconfig import default_dynamic_qconfig  # the workflow package

            weight_observer = default_dynamic_qconfig.weight()
        dtype = weight_observer.dtype
        if dtype not in (e.qint8, e.float16):
            raise AssertionError(
                "The only supported dtypes for dynamic quantized linear are qint8 and float16, "
                f"got: {dtype}"
            )
        weight_observer(mod.weight)
        if dtype == e.float16:
            qweight = mod.weight.float()
        else:
            qweight = _quantize_weight(mod.weight.float(), weight_observer)
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        return qlinear

    @classmethod
    def from_reference(cls, ref_qlinear):
        """from_reference(ref_qlinear) -> Linear

        The dynamic quantized module of a reference quantized Linear."""
        qlinear = cls(ref_qlinear.in_features, ref_qlinear.out_features)
        qlinear.set_weight_bias(ref_qlinear.get_quantized_weight(), ref_qlinear.bias)
        return qlinear
