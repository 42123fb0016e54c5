"""Helpers shared by the quantized modules: weight quantization from an observer, the repr that
hides packed parameters, and the checks of from_float."""

import abc
import collections
import itertools

from .....nn.modules.module import Module

__all__ = ["WeightedQuantizedModule"]


class WeightedQuantizedModule(Module, metaclass=abc.ABCMeta):
    """Base of the quantized modules that hold a packed weight."""

    @classmethod
    @abc.abstractmethod
    def from_reference(cls, ref_module, output_scale, output_zero_point):
        raise NotImplementedError


def _ember():
    import ember

    return ember


def _scheme_name(qscheme):
    return getattr(qscheme, "name", str(qscheme).replace("torch.", ""))


def _quantize_weight(float_wt, observer):
    """The quantized weight an observer's qparams give (qint8; per-tensor schemes quantize per
    tensor, per-channel ones along the observer's ch_axis)."""
    e = _ember()
    wt_scale, wt_zp = observer.calculate_qparams()
    scheme = _scheme_name(observer.qscheme)
    if scheme in ("per_tensor_symmetric", "per_tensor_affine"):
        qweight = e.quantize_per_tensor(float_wt, float(wt_scale), int(wt_zp), e.qint8)
    elif scheme in ("per_channel_symmetric", "per_channel_affine"):
        qweight = e.quantize_per_channel(
            float_wt, wt_scale.to(e.float64), wt_zp.to(e.int64), observer.ch_axis, e.qint8
        )
    elif scheme == "per_channel_affine_float_qparams":
        qweight = e.quantize_per_channel(
            float_wt, wt_scale.to(e.float32), wt_zp.to(e.float32), observer.ch_axis, observer.dtype
        )
    else:
        raise ValueError("Unexpected qscheme " + str(observer.qscheme))
    return _clamp_weights(qweight, observer, wt_scale, wt_zp)


def _clamp_weights(qweight, observer, scale, zp):
    """Clamps the integers to the observer's quant_min/quant_max where they are narrower than
    the dtype's range."""
    e = _ember()
    observer = getattr(observer, "activation_post_process", observer)
    qmin, qmax = getattr(observer, "quant_min", None), getattr(observer, "quant_max", None)
    if qweight.dtype not in (e.qint8, e.quint8, e.qint32) or qmin is None or qmax is None:
        return qweight
    info = e.iinfo({e.qint8: e.int8, e.quint8: e.uint8, e.qint32: e.int32}[qweight.dtype])
    if qmin <= info.min and qmax >= info.max:
        return qweight
    ints = e.clamp(qweight.int_repr(), qmin, qmax)
    if qweight.qscheme().name.startswith("per_tensor"):
        return e._make_per_tensor_quantized_tensor(ints, float(scale), int(zp))
    return e._make_per_channel_quantized_tensor(ints, scale, zp, observer.ch_axis)


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _hide_packed_params_repr(self, params):
    """The module's repr without its packed-parameter child."""
    extra = self.extra_repr()
    extra_lines = extra.split("\n") if extra else []
    child_lines = []
    for key, module in self._modules.items():
        if isinstance(module, params):
            continue
        child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
    lines = extra_lines + child_lines
    main = self._get_name() + "("
    if lines:
        if len(extra_lines) == 1 and not child_lines:
            main += extra_lines[0]
        else:
            main += "\n  " + "\n  ".join(lines) + "\n"
    return main + ")"


def _type_name(mod):
    return type(mod).__name__


def _is_float_module(mod, names):
    """Whether mod is one of the float modules (by class name, so the fused modules of
    ember.ao.nn.intrinsic and ember.nn's own count alike)."""
    return _type_name(mod) in names


def _ntuple_from_first(n):
    def parse(x):
        while isinstance(x, collections.abc.Sequence):
            if len(x) == n:
                break
            x = x[0]
        return tuple(itertools.repeat(x, n))

    return parse


_pair_from_first = _ntuple_from_first(2)


def _pair(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x)


def _triple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x, x)


def _single(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _tensor(v):
    return _ember().tensor(v)
