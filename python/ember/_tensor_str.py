"""Tensor printing in PyTorch's exact format (precision 4, threshold 1000, edgeitems 3,
width 80)."""

import math
import sys

from . import _C
from ._C import bfloat16, float16, get_default_dtype, int64


class _PrintOptions:
    # A plain class: dataclasses imports inspect and ast, a quarter of `import ember`'s time.
    def __init__(self, precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None):
        self.precision, self.threshold, self.edgeitems = precision, threshold, edgeitems
        self.linewidth, self.sci_mode = linewidth, sci_mode


PRINT_OPTS = _PrintOptions()


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
        profile=None, sci_mode=None)

    Changes how tensors are printed: digits, summarization threshold, edge items, line width and
    notation."""
    if profile == "default":
        PRINT_OPTS.__init__()
    elif profile == "short":
        PRINT_OPTS.__init__(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        PRINT_OPTS.__init__(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def _flat_values(t):
    v = t.reshape(-1).tolist()
    return v if isinstance(v, list) else [v]


class _Formatter:
    """Chooses integer, fixed or scientific notation and a common width from the values shown."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        absvals = [abs(v) for v in finite]
        lo, hi = min(absvals), max(absvals)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        # set_printoptions(sci_mode=...) decides the notation before the widths are measured
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            widths = [len(f"{v:.{p}e}") for v in finite]
        elif self.int_mode:
            widths = [len(f"{v:.0f}") + 1 for v in finite]
        else:
            widths = [len(f"{v:.{p}f}") for v in finite]
        self.max_width = max([self.max_width] + widths)

    def width(self):
        return self.max_width

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                s = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    s += "."
            else:
                s = f"{value:.{p}f}"
        else:
            s = str(value)
        return (self.max_width - len(s)) * " " + s


class _ComplexFormatter:
    """torch's complex layout: real parts and imaginary parts each get a formatter of their own,
    and an element prints as real +/- imag j."""

    def __init__(self, values):
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)

    def width(self):
        return self.real.width() + self.imag.width() + 3

    def format(self, value):
        real_str = self.real.format(value.real)
        imag_str = (self.imag.format(value.imag) + "j").lstrip()
        if imag_str[0] in "+-":
            return real_str + imag_str
        return real_str + "+" + imag_str


def _summarized_values(t):
    """The values that will be printed (edges only, for large tensors)."""
    e = PRINT_OPTS.edgeitems
    if t.dim() == 0:
        return [t.item()]
    if t.dim() == 1:
        v = t.tolist()
        return v[:e] + v[-e:] if len(v) > 2 * e else v
    rows = range(t.shape[0])
    if t.shape[0] > 2 * e:
        rows = list(range(e)) + list(range(t.shape[0] - e, t.shape[0]))
    out = []
    for i in rows:
        out.extend(_summarized_values(t.select(0, i)))
    return out


def _vector_str(t, indent, summarize, fmt):
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    vals = t.tolist()
    if summarize and len(vals) > 2 * e:
        data = [fmt.format(v) for v in vals[:e]] + [" ..."] + [fmt.format(v) for v in vals[-e:]]
    else:
        data = [fmt.format(v) for v in vals]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with_formatter(t, indent, summarize, fmt):
    dim = t.dim()
    if dim == 0:
        return fmt.format(t.item())
    if dim == 1:
        return _vector_str(t, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    n = t.shape[0]
    if summarize and n > 2 * e:
        slices = [_str_with_formatter(t.select(0, i), indent + 1, summarize, fmt) for i in range(e)]
        slices.append("...")
        slices += [
            _str_with_formatter(t.select(0, i), indent + 1, summarize, fmt) for i in range(n - e, n)
        ]
    else:
        slices = [_str_with_formatter(t.select(0, i), indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(t, indent):
    summarize = t.numel() > PRINT_OPTS.threshold
    if t.dtype in (float16, bfloat16):
        t = t.float()
    values = _summarized_values(t) if summarize else _flat_values(t)
    if t.dtype.is_complex:
        fmt = _ComplexFormatter(values)
    else:
        fmt = _Formatter(values, t.is_floating_point())
    return _str_with_formatter(t, indent, summarize, fmt)


def _add_suffixes(tensor_str, suffixes, indent):
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            tensor_str += ",\n" + " " * indent + suffix
            last_line_len = indent + len(suffix)
        else:
            tensor_str += ", " + suffix
            last_line_len += len(suffix) + 2
    return tensor_str + ")"


def _quantized_str(t, indent, suffixes, default):
    """torch's body and suffixes of a quantized tensor: its dequantized values, then size,
    dtype, scheme and parameters."""
    suffixes.append("size=" + str(tuple(t.shape)))
    if t.dtype != default:
        suffixes.append("dtype=" + repr(t.dtype))
    scheme = t.qscheme()
    suffixes.append("quantization_scheme=" + repr(scheme))
    if scheme.name.startswith("per_tensor"):
        suffixes.append("scale=" + str(t.q_scale()))
        suffixes.append("zero_point=" + str(t.q_zero_point()))
    else:
        suffixes.append("scale=" + str(t.q_per_channel_scales()))
        suffixes.append("zero_point=" + str(t.q_per_channel_zero_points()))
        suffixes.append("axis=" + str(t.q_per_channel_axis()))
    values = t.dequantize()
    return "[]" if values.numel() == 0 else _tensor_str(values, indent)


def tensor_str(t, prefix="tensor("):
    from .autograd.grad_mode import no_grad  # on use: ember.autograd imports this (via _process)

    indent = len(prefix)
    suffixes = []
    default = get_default_dtype()
    device = t._device_str
    if device != "cpu":  # a PrivateUse1 backend's tensor: printed from a host copy
        suffixes.append(f"device='{device}'")
    with no_grad():
        if device == "meta":  # no values to show: torch's "..." with the size
            suffixes.append("size=" + str(tuple(t.shape)))
            if t.dtype != default:
                suffixes.append("dtype=" + repr(t.dtype))
            body = "..."
        elif t.is_quantized:
            body = _quantized_str(t, indent, suffixes, default)
        elif t.numel() == 0:
            if t.dim() != 1:
                suffixes.append("size=" + str(tuple(t.shape)))
            if t.dtype != default:
                suffixes.append("dtype=" + repr(t.dtype))
            body = "[]"
        else:
            default_complex = _C.complex128 if default == _C.float64 else _C.complex64
            if t.dtype not in (default, default_complex, int64, _C.bool):
                suffixes.append("dtype=" + repr(t.dtype))
            host = t.detach() if device == "cpu" else _C._copy_to_device(t.detach(), "cpu")
            body = _tensor_str(host, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    fwad = sys.modules.get("ember.autograd.forward_ad")
    if fwad is not None and fwad._levels:  # a dual tensor prints its tangent, as torch's
        lv = fwad._current()
        tangent = lv.get(t) if lv is not None else None
        if tangent is not None:
            suffixes.append(f"tangent={tangent!r}")
    return _add_suffixes(prefix + body, suffixes, indent)
