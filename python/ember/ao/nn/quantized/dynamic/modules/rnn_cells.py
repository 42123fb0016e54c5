"""Dynamic quantized LSTMCell, GRUCell and RNNCell (torch.ao.nn.quantized.dynamic): one step of
the cell, both projections dynamic int8 linears (or float16-rounded weights), the gates in
float, as torch's quantized_*_cell_dynamic kernels."""

from ......nn.modules.module import Module
from ...modules.utils import _ember, _quantize_weight
from .rnn import _pack, _project, _weight_observer

__all__ = ["RNNCellBase", "LSTMCell", "GRUCell", "RNNCell"]

_CHUNKS = {"LSTMCell": 4, "GRUCell": 3, "RNNCell": 1}


class RNNCellBase(Module):
    """RNNCellBase(input_size, hidden_size, bias=True, num_chunks=4, dtype=qint8)

    What the dynamic quantized cells share: the packed projections (state dict keys
    `_packed_weight_ih`, `_packed_weight_hh`), the argument checks and the repr."""

    def __init__(self, input_size, hidden_size, bias=True, num_chunks=4, dtype=None):
        super().__init__()
        e = _ember()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_dtype = e.qint8 if dtype is None else dtype
        w_ih = e.randn(num_chunks * hidden_size, input_size)
        w_hh = e.randn(num_chunks * hidden_size, hidden_size)
        if self.weight_dtype == e.qint8:
            w_ih = e.quantize_per_tensor(w_ih, 1.0, 0, e.qint8)
            w_hh = e.quantize_per_tensor(w_hh, 1.0, 0, e.qint8)
        b_ih = e.randn(num_chunks * hidden_size) if bias else None
        b_hh = e.randn(num_chunks * hidden_size) if bias else None
        self._packed_weight_ih = _pack(w_ih, b_ih)
        self._packed_weight_hh = _pack(w_hh, b_hh)

    def _get_name(self):
        return "DynamicQuantized" + type(self).__name__

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "_packed_weight_ih"] = self._packed_weight_ih
        destination[prefix + "_packed_weight_hh"] = self._packed_weight_hh

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self._packed_weight_ih = state_dict.pop(prefix + "_packed_weight_ih")
        self._packed_weight_hh = state_dict.pop(prefix + "_packed_weight_hh")
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def _check(self, input, hidden, label=""):
        # torch's checks and texts (a 1-d input reads size(1): IndexError)
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)}, expected "
                f"{self.input_size}"
            )
        if input.size(0) != hidden.size(0):
            raise RuntimeError(
                f"Input batch size {input.size(0)} doesn't match hidden{label} batch size "
                f"{hidden.size(0)}"
            )
        if hidden.size(1) != self.hidden_size:
            raise RuntimeError(
                f"hidden{label} has inconsistent hidden_size: got {hidden.size(1)}, expected "
                f"{self.hidden_size}"
            )

    def _zeros(self, input):
        return _ember().zeros(input.size(0), self.hidden_size, dtype=input.dtype)

    def _gates(self, input, h):
        return _project(input, self._packed_weight_ih), _project(h, self._packed_weight_hh)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> RNNCellBase

        The dynamic quantized cell of a float nn.LSTMCell, nn.GRUCell or nn.RNNCell, each
        weight quantized with a fresh mod.qconfig.weight() observer."""
        e = _ember()
        name = type(mod).__name__
        if name not in _CHUNKS:
            raise AssertionError(
                "nn.quantized.dynamic.RNNCellBase.from_float only works for nn.LSTMCell, "
                "nn.GRUCell and nn.RNNCell"
            )
        make_observer, dtype = _weight_observer(mod)
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        extra = {"nonlinearity": mod.nonlinearity} if name == "RNNCell" else {}
        q = _CELLS[name](mod.input_size, mod.hidden_size, bias=mod.bias, dtype=dtype, **extra)

        def packed(w, b):
            if dtype == e.float16:
                return _pack(w, b)
            obs = make_observer()
            obs(w)
            return _pack(_quantize_weight(w.float(), obs), b)

        q._packed_weight_ih = packed(mod.weight_ih, mod.bias_ih)
        q._packed_weight_hh = packed(mod.weight_hh, mod.bias_hh)
        return q


class LSTMCell(RNNCellBase):
    """LSTMCell(input_size, hidden_size, bias=True, dtype=qint8)

    One LSTM step, (h, c) = cell(input, (h, c)), with dynamic int8 projections."""

    def __init__(self, input_size, hidden_size, bias=True, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, dtype)

    def forward(self, input, hx=None):
        e = _ember()
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        self._check(input, hx[0], "[0]")
        self._check(input, hx[1], "[1]")
        gi, gh = self._gates(input, hx[0])
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = e.sigmoid(f) * hx[1] + e.sigmoid(i) * e.tanh(g)
        return e.sigmoid(o) * e.tanh(c), c


class GRUCell(RNNCellBase):
    """GRUCell(input_size, hidden_size, bias=True, dtype=qint8)

    One GRU step with dynamic int8 projections."""

    def __init__(self, input_size, hidden_size, bias=True, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, dtype)

    def forward(self, input, hx=None):
        e = _ember()
        h = self._zeros(input) if hx is None else hx
        self._check(input, h)
        gi, gh = self._gates(input, h)
        ir, iz, i_n = gi.chunk(3, 1)
        hr, hz, h_n = gh.chunk(3, 1)
        r, z = e.sigmoid(ir + hr), e.sigmoid(iz + hz)
        n = e.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h


class RNNCell(RNNCellBase):
    """RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh', dtype=qint8)

    One Elman step, act(W_ih x + b_ih + W_hh h + b_hh), with dynamic int8 projections."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        e = _ember()
        h = self._zeros(input) if hx is None else hx
        self._check(input, h)
        gi, gh = self._gates(input, h)
        if self.nonlinearity == "tanh":
            return e.tanh(gi + gh)
        if self.nonlinearity == "relu":
            return e.relu(gi + gh)
        raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")


_CELLS = {"LSTMCell": LSTMCell, "GRUCell": GRUCell, "RNNCell": RNNCell}
