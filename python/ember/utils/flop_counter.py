"""torch.utils.flop_counter: FlopCounterMode counts the FLOPs of the matmuls, convolutions and
attention a program runs, forward and backward, by module.

It is a TorchDispatchMode (ember/utils/_python_dispatch.py): each aten overload that reaches it
and has a formula in the registry adds its count to ``"Global"`` and to every module running
(ember/utils/module_tracker.py). The formulas are torch's: 2·m·n·k for a matmul, 2·(output
elements)·(input channels per group)·(kernel elements) for a convolution, a convolution's
backward as the convolutions that compute its gradients, attention as its two batched matmuls.
ember runs attention on the CPU as one operator that torch's registry does not count
(``scaled_dot_product_attention``; torch's CPU kernel is not counted either), so the attention
formulas count the CUDA kernels' overloads only, when a custom mapping or a call names them."""

import warnings
from collections import defaultdict

from ._python_dispatch import TorchDispatchMode

__all__ = ["FlopCounterMode", "register_flop_formula"]

flop_registry = {}


def _shape(v):
    from .. import Tensor

    if isinstance(v, Tensor):
        return v.shape
    if isinstance(v, (list, tuple)):
        return type(v)(_shape(x) for x in v)
    return v


def shape_wrapper(f):
    """The formula over the shapes of its arguments and of the output (``out_shape``)."""

    def nf(*args, out_val=None, **kwargs):
        args = tuple(_shape(a) for a in args)
        kwargs = {k: _shape(v) for k, v in kwargs.items()}
        return f(*args, out_shape=_shape(out_val), **kwargs)

    nf.__name__ = getattr(f, "__name__", "formula")
    nf.__doc__ = f.__doc__
    return nf


def register_flop_formula(targets, get_raw=False):
    """register_flop_formula(targets, get_raw=False) -> decorator

    Registers the decorated ``formula(*arg_shapes, out_shape=..., **kwargs) -> int`` for each
    operator packet of ``targets`` (``ember.ops.mylib.foo``); with ``get_raw=True`` it receives
    the arguments themselves and the output as ``out_val``."""
    from .._op_overloads import OpOverloadPacket

    def register_fun(formula):
        if not get_raw:
            formula = shape_wrapper(formula)
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(
                    "register_flop_formula(targets): expected each target to be "
                    "OpOverloadPacket (i.e. torch.ops.mylib.foo), JitFunction, or "
                    f"HigherOrderOperator, got {target} which is of type {type(target)}"
                )
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = formula
        return formula

    return register_fun


def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return mm_flop(a_shape, b_shape)


def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """2 × (elements of the output, or of the input when transposed) × (input channels per
    group × kernel elements): each output element is one dot product that long."""
    batch = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *kernel = w_shape
    kernel_elems = 1
    for s in kernel:
        kernel_elems *= s
    spatial = 1
    for s in conv_shape:
        spatial *= s
    return batch * spatial * c_out * c_in * kernel_elems * 2


def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs):  # fmt: skip
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _t(shape):
    return [shape[1], shape[0]] + list(shape[2:])


def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape,
                       **kwargs):  # fmt: skip
    """grad_input is the transposed convolution of grad_out by the weight; grad_weight the
    convolution of the input by grad_out (channels and batch swapped)."""
    count = 0
    if output_mask[0]:
        count += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        if transposed:
            count += conv_flop_count(_t(grad_out_shape), _t(x_shape), _t(out_shape[1]))
        else:
            count += conv_flop_count(_t(x_shape), _t(grad_out_shape), _t(out_shape[1]))
    return count


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """The two batched matmuls of attention (scores, then scores × values); grouped-query
    attention's key/value heads are broadcast to the query's."""
    b, h_q, s_q, d_q = query_shape
    b2, h_kv, s_k, d2 = key_shape
    b3, h3, s3, d_v = value_shape
    if not (b == b2 == b3 and h_kv == h3 and d_q == d2 and s_k == s3):
        raise AssertionError(
            "sdpa_flop_count: query/key/value shapes are incompatible: "
            f"q={query_shape}, k={key_shape}, v={value_shape}"
        )
    if h_q < h_kv or h_q % h_kv != 0:
        raise AssertionError(
            f"sdpa_flop_count: query heads ({h_q}) must be a multiple of key/value heads ({h_kv})"
        )
    return bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k)) + bmm_flop(
        (b * h_q, s_q, s_k), (b * h_q, s_k, d_v)
    )


def sdpa_flop(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape):
    """Five batched matmuls: the scores recomputed, the gradients of the scores and of the
    values, then of the queries and of the keys."""
    b, h, s_q, d_q = query_shape
    _, _, s_k, _ = key_shape
    _, _, _, d_v = value_shape
    bh = b * h
    total = bmm_flop((bh, s_q, d_q), (bh, d_q, s_k))  # scores = q @ k^T
    total += bmm_flop((bh, s_q, d_v), (bh, d_v, s_k))  # grad_scores = grad_out @ v^T
    total += bmm_flop((bh, s_k, s_q), (bh, s_q, d_v))  # grad_v = scores^T @ grad_out
    total += bmm_flop((bh, s_q, s_k), (bh, s_k, d_q))  # grad_q = grad_scores @ k
    total += bmm_flop((bh, d_q, s_q), (bh, s_q, s_k))  # grad_k^T = q^T @ grad_scores
    return total


def sdpa_backward_flop(grad_out_shape, query_shape, key_shape, value_shape, *args,
                       out_shape=None, **kwargs):  # fmt: skip
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


_FORMULAS = {
    "mm": mm_flop,
    "addmm": addmm_flop,
    "bmm": bmm_flop,
    "baddbmm": baddbmm_flop,
    "convolution": conv_flop,
    "_convolution": conv_flop,
    "convolution_backward": conv_backward_flop,
    "_scaled_dot_product_efficient_attention": sdpa_flop,
    "_scaled_dot_product_flash_attention": sdpa_flop,
    "_scaled_dot_product_efficient_attention_backward": sdpa_backward_flop,
    "_scaled_dot_product_flash_attention_backward": sdpa_backward_flop,
}


def _register_builtin():
    """torch's formulas, for the packets ember's registry has (the others are never called)."""
    from .._op_overloads import ops

    for name, formula in _FORMULAS.items():
        packet = getattr(ops.aten, name, None)
        if packet is not None and packet not in flop_registry:
            register_flop_formula(packet)(formula)


_SUFFIXES = ["", "K", "M", "B", "T"]


def get_suffix_str(number):
    """The suffix the table uses for ``number``: 1001M rather than 1.001B."""
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number, suffix):
    return f"{number / 1000 ** _SUFFIXES.index(suffix):.3f}{suffix}"


def convert_to_percent_str(num, denom):
    return "0%" if denom == 0 else f"{num / denom:.2%}"


def _table(rows, header):
    """The rows as torch's table prints them (tabulate's "simple" format: first column left,
    the others right, a count without a suffix as a number: ``4480``, not ``4480.000``)."""

    def cell(v):
        try:
            return format(float(v), "g")
        except ValueError:
            return v

    rows = [[r[0]] + [cell(v) for v in r[1:]] for r in rows]
    # tabulate's minimum: a header's width plus 2
    widths = [max([len(h) + 2] + [len(str(r[i])) for r in rows]) for i, h in enumerate(header)]

    def line(r):
        return "  ".join(
            str(v).ljust(w) if i == 0 else str(v).rjust(w)
            for i, (v, w) in enumerate(zip(r, widths))
        )

    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


class FlopCounterMode:
    """FlopCounterMode(mods=None, depth=2, display=True, custom_mapping=None)

    ``with FlopCounterMode() as counter:`` counts the FLOPs of what runs inside, forward and
    backward; ``get_total_flops()``, ``get_flop_counts()`` (module name -> {operator packet:
    FLOPs}) and ``get_table(depth)``, printed on exit when ``display``. ``custom_mapping`` maps
    operator packets to formulas of their shapes."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        from .module_tracker import ModuleTracker

        _register_builtin()
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        if mods is not None:
            warnings.warn(
                "mods argument is not needed anymore, you can stop passing it", stacklevel=2
            )
        self.flop_registry = {
            **flop_registry,
            **{
                k: v if getattr(v, "_get_raw", False) else shape_wrapper(v)
                for k, v in (custom_mapping or {}).items()
            },
        }
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """{module name: {operator packet: FLOPs}}, with ``"Global"`` for the whole run."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        depth = self.depth if depth is None else depth
        if depth is None:
            depth = 999999
        total = self.get_total_flops()
        suffix = get_suffix_str(total)
        subsumed = False

        def rows_of(name, level):
            nonlocal subsumed
            count = sum(self.flop_counts[name].values())
            subsumed |= count >= total
            pad = " " * level
            rows = [[pad + name, convert_num_with_suffix(count, suffix),
                     convert_to_percent_str(count, total)]]  # fmt: skip
            for op, v in self.flop_counts[name].items():
                rows.append([pad + " - " + str(op), convert_num_with_suffix(v, suffix),
                             convert_to_percent_str(v, total)])  # fmt: skip
            return rows

        rows = []
        for name in sorted(self.flop_counts):
            if name == "Global" or name.count(".") + 1 > depth:
                continue
            rows.extend(rows_of(name, name.count(".")))
        if "Global" in self.flop_counts and not subsumed:
            for r in rows:
                r[0] = " " + r[0]
            rows = rows_of("Global", 0) + rows
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _table(rows, ["Module", "FLOP", "% Total"])

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        if self.mode is None:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        result = self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return result

    def _count_flops(self, packet, out, args, kwargs):
        formula = self.flop_registry.get(packet)
        if formula is not None:
            count = formula(*args, **kwargs, out_val=out)
            for parent in self.mod_tracker.parents:
                self.flop_counts[parent][packet] += count
        return out


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter):
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        return self.counter._count_flops(func.overloadpacket, out, args, kwargs)
