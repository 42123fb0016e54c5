"""Dynamic quantized LSTM and GRU (torch.ao.nn.quantized.dynamic): the gate projections run as
dynamic int8 linears (qint8 weights, activations quantized per step), the cell in float."""

import numbers
import warnings

from ......nn.modules.module import Module
from ... import _ops
from ...modules.utils import _addindent, _ember, _quantize_weight

__all__ = ["PackedParameter", "RNNBase", "LSTM", "GRU"]


class _CellParams:
    """The packed input and hidden projections of one layer and direction."""

    def __init__(self, packed_ih, packed_hh, b_ih, b_hh):
        self.packed_ih, self.packed_hh = packed_ih, packed_hh
        self.b_ih, self.b_hh = b_ih, b_hh


class PackedParameter(Module):
    """Holds one cell's packed parameters; state dict key `param`."""

    def __init__(self, param):
        super().__init__()
        self.param = param

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "param"] = self.param

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self.param = state_dict.pop(prefix + "param")
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )


def _pack(weight, bias):
    """The packed projection: a qint8 weight packed for the int8 GEMM, or with a float weight
    (the float16 LSTM) the float16-rounded weight and the bias."""
    if weight.is_quantized:
        return _ops.linear_prepack(weight, bias)
    return (_ops.fp16_weight(weight), None if bias is None else bias.detach())  # packed: no grad


def _project(x, packed):
    if isinstance(packed, tuple):
        return _ops.linear_fp16(x, *packed)
    return _ops.linear_dynamic(x, packed)


def _unpack(packed):
    return packed if isinstance(packed, tuple) else (packed.qweight, packed.bias)


def _weight_observer(mod):
    """The weight observer factory of a float recurrent module being quantized dynamically
    (its qconfig's, else the default dynamic one's) and the dtype it gives, checked as torch's."""
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    if mod.qconfig is not None and mod.qconfig.weight is not None:
        make_observer = mod.qconfig.weight
    else:
        from .....quantization.qconfig import default_dynamic_qconfig  # the workflow package

        make_observer = default_dynamic_qconfig.weight
    e = _ember()
    dtype = make_observer().dtype
    if dtype not in (e.qint8, e.float16):
        raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
    return make_observer, dtype


_GATES = {"LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """RNNBase(mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
        dropout=0.0, bidirectional=False, dtype=qint8)

    A multi-layer LSTM or GRU (mode) whose projections are dynamic int8 linears."""

    _version = 2

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        dtype=None,
    ):
        super().__init__()
        e = _ember()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.dtype = e.qint8 if dtype is None else dtype
        self.version = 2
        self.training = False
        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        values = []
        for layer in range(num_layers):
            for _ in range(dirs):
                in_size = input_size if layer == 0 else hidden_size * dirs
                w_ih, w_hh = e.randn(gate, in_size), e.randn(gate, hidden_size)
                if self.dtype == e.qint8:
                    w_ih = e.quantize_per_tensor(w_ih, 0.1, 0, e.qint8)
                    w_hh = e.quantize_per_tensor(w_hh, 0.1, 0, e.qint8)
                b_ih, b_hh = e.randn(gate), e.randn(gate)
                values.append(
                    PackedParameter(_CellParams(_pack(w_ih, b_ih), _pack(w_hh, b_hh), b_ih, b_hh))
                )
        self._all_weight_values = e.nn.ModuleList(values)

    def _get_name(self):
        return "DynamicQuantized" + self.mode

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def __repr__(self):
        e = _ember()
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + k + "): " + _addindent(repr(m), 2)
            for k, m in self._modules.items()
            if not isinstance(m, (PackedParameter, e.nn.ModuleList))
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def _weight_bias(self):
        out = {"weight": {}, "bias": {}}
        dirs = 2 if self.bidirectional else 1
        count = 0
        for layer in range(self.num_layers):
            for d in range(dirs):
                sfx = "_reverse" if d == 1 else ""
                p = self._all_weight_values[count].param
                w_ih, b_ih = _unpack(p.packed_ih)
                w_hh, b_hh = _unpack(p.packed_hh)
                out["weight"][f"weight_ih_l{layer}{sfx}"] = w_ih
                out["weight"][f"weight_hh_l{layer}{sfx}"] = w_hh
                out["bias"][f"bias_ih_l{layer}{sfx}"] = b_ih
                out["bias"][f"bias_hh_l{layer}{sfx}"] = b_hh
                count += 1
        return out

    def get_weight(self):
        """get_weight() -> dict

        The qint8 weights by torch's parameter names."""
        return self._weight_bias()["weight"]

    def get_bias(self):
        """get_bias() -> dict

        The float biases by torch's parameter names."""
        return self._weight_bias()["bias"]

    def _cell_run(self, p, x, h, c, reverse):
        """One layer and direction over the sequence x [T, B, I]; as torch's, the input
        projection runs once for the whole sequence (one activation range), the hidden one per
        step."""
        e = _ember()
        gi = _project(x, p.packed_ih)
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            gh = _project(h, p.packed_hh)
            if self.mode == "GRU":  # torch's gru_cell: the reset gate scales the hidden part
                ir, iz, i_n = gi[t].chunk(3, 1)
                hr, hz, h_n = gh.chunk(3, 1)
                r, z = e.sigmoid(ir + hr), e.sigmoid(iz + hz)
                n = e.tanh(i_n + r * h_n)
                h = (1 - z) * n + z * h
            else:
                i, f, g, o = (gi[t] + gh).chunk(4, 1)
                c = e.sigmoid(f) * c + e.sigmoid(i) * e.tanh(g)
                h = e.sigmoid(o) * e.tanh(c)
            outs[t] = h
        return outs, h, c

    def forward(self, input, hx=None):
        e = _ember()
        if input.dim() != 3:  # torch's dynamic RNNs take batched input only
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        lstm = self.mode == "LSTM"
        x = input.transpose(0, 1) if self.batch_first else input
        dirs = 2 if self.bidirectional else 1
        batch = x.shape[1]
        if hx is None:
            z = e.zeros(self.num_layers * dirs, batch, self.hidden_size, dtype=input.dtype)
            hx = (z, z) if lstm else z
        h0, c0 = hx if lstm else (hx, hx)
        hs, cs = [], []
        for layer in range(self.num_layers):
            layer_outs = []
            for d in range(dirs):
                idx = layer * dirs + d
                p = self._all_weight_values[idx].param
                outs, h, c = self._cell_run(p, x, h0[idx], c0[idx], d == 1)
                layer_outs.append(e.stack(outs, 0))
                hs.append(h)
                cs.append(c)
            x = e.cat(layer_outs, 2) if dirs == 2 else layer_outs[0]
        out = x.transpose(0, 1) if self.batch_first else x
        h_n = e.stack(hs, 0)
        return (out, (h_n, e.stack(cs, 0))) if lstm else (out, h_n)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> LSTM or GRU

        The dynamic quantized module of a float nn.LSTM or nn.GRU, each weight quantized with a
        fresh mod.qconfig.weight() observer."""
        e = _ember()
        if type(mod).__name__ not in _GATES:
            raise AssertionError(
                "nn.quantized.dynamic.RNNBase.from_float only works for nn.LSTM and nn.GRU"
            )
        make_observer, dtype = _weight_observer(mod)
        q = (GRU if type(mod).__name__ == "GRU" else LSTM)(
            mod.input_size,
            mod.hidden_size,
            mod.num_layers,
            mod.bias,
            mod.batch_first,
            mod.dropout,
            mod.bidirectional,
            dtype,
        )
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        dirs = 2 if mod.bidirectional else 1
        values = []
        for layer in range(q.num_layers):
            for d in range(dirs):
                sfx = "_reverse" if d == 1 else ""

                def quantize_and_pack(w, b):
                    if dtype == e.float16:
                        return _pack(w, b)
                    obs = make_observer()
                    obs(w)
                    return _pack(_quantize_weight(w.float(), obs), b)

                w_ih, b_ih = (
                    getattr(mod, f"weight_ih_l{layer}{sfx}"),
                    getattr(mod, f"bias_ih_l{layer}{sfx}"),
                )
                w_hh, b_hh = (
                    getattr(mod, f"weight_hh_l{layer}{sfx}"),
                    getattr(mod, f"bias_hh_l{layer}{sfx}"),
                )
                values.append(
                    PackedParameter(
                        _CellParams(
                            quantize_and_pack(w_ih, b_ih),
                            quantize_and_pack(w_hh, b_hh),
                            b_ih.detach(),
                            b_hh.detach(),
                        )
                    )
                )
        q._all_weight_values = e.nn.ModuleList(values)
        return q


class LSTM(RNNBase):
    """LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
        bidirectional=False, dtype=qint8)

    A multi-layer LSTM whose projections are dynamic int8 linears."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
        bidirectional=False, dtype=qint8)

    A multi-layer GRU whose projections are dynamic int8 linears."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)
