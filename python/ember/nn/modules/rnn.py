"""RNN, LSTM, GRU and their cells, with torch's parameter names, checks and initialisation."""

import math
import numbers
import warnings

from ... import _C
from ..._C import _nn
from ..._ops import creation as _creation
from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _rnn_utils():
    # ember.nn.utils.rnn (packed sequences), imported on use: ember.nn.utils's package also loads
    # parametrizations, whose classes derive from this package's modules.
    from ..utils import rnn

    return rnn


class RNNBase(Module):
    """RNNBase(mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
        dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)

    Shared constructor, checks and forward of RNN, LSTM and GRU.
    """

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
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
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
                "dropout "
                f"expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = [
                    ("weight_ih", (gate_size, layer_input_size)),
                    ("weight_hh", (gate_size, real_hidden_size)),
                ]
                if bias:
                    params += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    params += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in params:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self):
        """No-op (cuDNN weight packing in torch)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _layer_weights(self):
        out = []
        for names in self._all_weights:
            get = {n.split("_l")[0]: getattr(self, n) for n in names}
            out.append(
                (
                    get["weight_ih"],
                    get["weight_hh"],
                    get.get("bias_ih"),
                    get.get("bias_hh"),
                    get.get("weight_hr"),
                )
            )
        return out

    def check_input(self, input, batch_sizes=None):
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}"
            )
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input, batch_sizes=None):
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, h)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def _prepare(self, input, hx, is_lstm):
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D "
                "tensor instead"
            )
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        hs = hx if is_lstm and hx is not None else (hx,)
        for h in hs:
            if h is None:
                continue
            if not is_batched and h.dim() != 2:
                raise RuntimeError(
                    f"For unbatched 2-D input, hx{' and cx' if is_lstm else ''} should also be "
                    f"2-D but got {'(' if is_lstm else ''}{h.dim()}-D tensor instead"
                )
            if is_batched and h.dim() != 3:
                raise RuntimeError(
                    f"For batched 3-D input, hx{' and cx' if is_lstm else ''} should also be "
                    f"3-D but got {'(' if is_lstm else ''}{h.dim()}-D tensor instead"
                )
        if hx is not None and not is_batched:
            hx = tuple(h.unsqueeze(1) for h in hx) if is_lstm else hx.unsqueeze(1)
        return input, hx, is_batched, batch_dim

    def _run(self, input, h0, c0, lengths=None):
        x = input.transpose(0, 1) if self.batch_first and lengths is None else input
        out, h_n, c_n = F._rnn_forward(
            self.mode,
            x,
            h0,
            c0,
            self._layer_weights(),
            self.num_layers,
            self.bidirectional,
            self.dropout,
            self.training,
            lengths,
        )
        if self.batch_first and lengths is None:
            out = out.transpose(0, 1)
        return out, h_n, c_n

    def _forward_packed(self, packed, hx):
        # Unpack to (T, B, *) in the caller's batch order, run masked, and pack with the same order.
        padded, lengths = _rnn_utils().pad_packed_sequence(packed)
        batch = padded.size(1)
        num_directions = 2 if self.bidirectional else 1
        h_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if self.mode == "LSTM":
            if hx is None:
                hx = (
                    _creation.zeros(
                        self.num_layers * num_directions, batch, h_size, dtype=padded.dtype
                    ),
                    _creation.zeros(
                        self.num_layers * num_directions,
                        batch,
                        self.hidden_size,
                        dtype=padded.dtype,
                    ),
                )
            h0, c0 = hx
        else:
            h0 = (
                hx
                if hx is not None
                else _creation.zeros(
                    self.num_layers * num_directions, batch, h_size, dtype=padded.dtype
                )
            )
            c0 = None
        out, h_n, c_n = self._run(padded, h0, c0, lengths.tolist())
        out = _rnn_utils()._pack_like(out, packed)
        return out, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def forward(self, input, hx=None):
        if isinstance(input, _rnn_utils().PackedSequence):
            return self._forward_packed(input, hx)
        input, hx, is_batched, batch_dim = self._prepare(input, hx, False)
        self.check_input(input)
        expected = self.get_expected_hidden_size(input)
        if hx is None:
            hx = _creation.zeros(expected, dtype=input.dtype, device=input.device)
        self.check_hidden_size(hx, expected)
        out, h_n, _ = self._run(input, hx, None)
        if not is_batched:
            out, h_n = out.squeeze(batch_dim), h_n.squeeze(1)
        return out, h_n

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
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


class RNN(RNNBase):
    """RNN(*args, **kwargs)

    Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class GRU(RNNBase):
    """GRU(*args, **kwargs)

    Gated recurrent unit layers (gates r, z, n).
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """LSTM(*args, **kwargs)

    Long short-term memory layers (gates i, f, g, o), with optional projection (proj_size).
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def forward(self, input, hx=None):
        if isinstance(input, _rnn_utils().PackedSequence):
            return self._forward_packed(input, hx)
        input, hx, is_batched, batch_dim = self._prepare(input, hx, True)
        self.check_input(input)
        expected_h = self.get_expected_hidden_size(input)
        expected_c = self.get_expected_cell_size(input)
        if hx is None:
            hx = (
                _creation.zeros(expected_h, dtype=input.dtype, device=input.device),
                _creation.zeros(expected_c, dtype=input.dtype, device=input.device),
            )
        self.check_hidden_size(hx[0], expected_h, "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hx[1], expected_c, "Expected hidden[1] size {}, got {}")
        out, h_n, c_n = self._run(input, hx[0], hx[1])
        if not is_batched:
            out, h_n, c_n = out.squeeze(batch_dim), h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


class RNNCellBase(Module):
    """RNNCellBase(input_size, hidden_size, bias, num_chunks, device=None, dtype=None)

    Parameters, init and checks shared by the single-step cells.
    """

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, input, hx):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for h in hx if isinstance(hx, tuple) else (hx,):
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(0)
        return input, hx, is_batched

    def _step(self, mode, input, h, c):
        if _C._autocast_is_active():  # Note [RNN under autocast] in nn/functional/_composite.py
            gi = F.linear(input, self.weight_ih, self.bias_ih)
            return F._cell_step(mode, gi, h, c, self.weight_hh, self.bias_hh, None)
        # A one-step sequence through the fused layer op (Note [Fused RNN layer] in ops/rnn.cpp).
        _, h, c = _nn.rnn_layer(
            input.unsqueeze(0),
            h,
            c,
            self.weight_ih,
            self.weight_hh,
            self.bias_ih,
            self.bias_hh,
            mode,
            False,
        )
        return h, c


class RNNCell(RNNCellBase):
    """RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None)

    One step of an Elman RNN.
    """

    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batch(input, hx)
        if hx is None:
            hx = _creation.zeros(
                input.size(0), self.hidden_size, dtype=input.dtype, device=input.device
            )
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret, _ = self._step(mode, input, hx, None)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """LSTMCell(input_size, hidden_size, bias=True, device=None, dtype=None)

    One LSTM step: returns (h, c).
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batch(input, hx)
        if hx is None:
            zeros = _creation.zeros(
                input.size(0), self.hidden_size, dtype=input.dtype, device=input.device
            )
            hx = (zeros, zeros)
        h, c = self._step("LSTM", input, hx[0], hx[1])
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """GRUCell(input_size, hidden_size, bias=True, device=None, dtype=None)

    One GRU step.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batch(input, hx)
        if hx is None:
            hx = _creation.zeros(
                input.size(0), self.hidden_size, dtype=input.dtype, device=input.device
            )
        ret, _ = self._step("GRU", input, hx, None)
        return ret if is_batched else ret.squeeze(0)
