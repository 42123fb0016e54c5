"""The modules of ember.nn.quantizable. LSTMCell computes its gates with two Linear modules
(igates on the input, hgates on the hidden state) so that an observer can sit after each; LSTM
stacks cells in torch's layout (layers.<i>.layer_fw / layer_bw .cell), so a state_dict moves
between ember and torch. from_float builds one from an nn.LSTM's weights."""

from ... import _C
from ..modules import Linear, Module, ModuleList
from ..modules import MultiheadAttention as _FloatMHA

__all__ = ["LSTM", "LSTMCell", "MultiheadAttention"]


class LSTMCell(Module):
    """LSTMCell(input_dim, hidden_dim, bias=True, device=None, dtype=None, *, split_gates=False)

    One LSTM step with the gates computed by Linear modules `igates` (input) and `hgates`
    (hidden), in torch's gate order (input, forget, cell, output). forward(x, hidden=None)
    returns (h, c); hidden defaults to zeros."""

    def __init__(
        self, input_dim, hidden_dim, bias=True, device=None, dtype=None, *, split_gates=False
    ):
        super().__init__()
        if split_gates:
            raise NotImplementedError("LSTMCell: split_gates=True is not supported")
        self.input_size, self.hidden_size, self.bias = input_dim, hidden_dim, bias
        self.split_gates = split_gates
        self.igates = Linear(input_dim, 4 * hidden_dim, bias=bias, dtype=dtype)
        self.hgates = Linear(hidden_dim, 4 * hidden_dim, bias=bias, dtype=dtype)

    def forward(self, x, hidden=None):
        if hidden is None or hidden[0] is None or hidden[1] is None:
            hidden = self.initialize_hidden(x.shape[0])
        hx, cx = hidden
        gates = self.igates(x) + self.hgates(hx)
        i, f, g, o = gates.chunk(4, 1)
        cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
        return o.sigmoid() * cy.tanh(), cy

    def initialize_hidden(self, batch_size, is_quantized=False):
        """initialize_hidden(batch_size, is_quantized=False) -> (Tensor, Tensor)

        Zero hidden and cell states for a batch."""
        w = self.igates.weight
        h = w.new_zeros((batch_size, self.hidden_size))
        return h, w.new_zeros((batch_size, self.hidden_size))

    @classmethod
    def from_params(cls, wi, wh, bi=None, bh=None, split_gates=False):
        """from_params(wi, wh, bi=None, bh=None, split_gates=False) -> LSTMCell

        A cell with the given gate weights (4*hidden x input, 4*hidden x hidden) and biases."""
        cell = cls(
            wi.shape[1], wh.shape[1], bias=bi is not None, dtype=wi.dtype, split_gates=split_gates
        )
        with _no_grad():
            cell.igates.weight.copy_(wi)
            cell.hgates.weight.copy_(wh)
            if bi is not None:
                cell.igates.bias.copy_(bi)
                cell.hgates.bias.copy_(bh)
        return cell


class _LSTMSingleLayer(Module):
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x, hidden=None):
        out = []
        for t in range(x.shape[0]):
            hidden = self.cell(x[t], hidden)
            out.append(hidden[0])
        return _C.stack(out, 0), hidden


class _LSTMLayer(Module):
    def __init__(self, fw, bw=None, batch_first=False):
        super().__init__()
        self.batch_first = batch_first
        self.bidirectional = bw is not None
        self.layer_fw = _LSTMSingleLayer(fw)
        if bw is not None:
            self.layer_bw = _LSTMSingleLayer(bw)

    def forward(self, x, hidden=None):
        if self.batch_first:
            x = x.transpose(0, 1)
        h, c = (None, None) if hidden is None else hidden
        if not self.bidirectional:
            y, (h, c) = self.layer_fw(x, None if h is None else (h, c))
        else:
            hf = None if h is None else (h[0], c[0])
            hb = None if h is None else (h[1], c[1])
            yf, (h_f, c_f) = self.layer_fw(x, hf)
            yb, (h_b, c_b) = self.layer_bw(x.flip(0), hb)
            y = _C.cat([yf, yb.flip(0)], -1)
            h, c = _C.stack([h_f, h_b], 0), _C.stack([c_f, c_b], 0)
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, (h, c)


class LSTM(Module):
    """LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None, *, split_gates=False)

    A multi-layer LSTM made of quantizable LSTMCells (`layers.<i>.layer_fw.cell`, and
    `layer_bw` when bidirectional, as torch lays them out). forward(x, hidden=None) returns
    (output, (h_n, c_n)) as nn.LSTM's; dropout applies between layers in training."""  # noqa: E501

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
        *,
        split_gates=False,
    ):
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        dirs = 2 if bidirectional else 1
        layers = []
        for i in range(num_layers):
            width = input_size if i == 0 else hidden_size * dirs
            fw = LSTMCell(width, hidden_size, bias, dtype=dtype, split_gates=split_gates)
            bw = (
                LSTMCell(width, hidden_size, bias, dtype=dtype, split_gates=split_gates)
                if bidirectional
                else None
            )
            layers.append(_LSTMLayer(fw, bw))
        self.layers = ModuleList(layers)

    def forward(self, x, hidden=None):
        from .. import functional as F

        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(1)
            if hidden is not None:
                hidden = (hidden[0].unsqueeze(1), hidden[1].unsqueeze(1))
        if self.batch_first:
            x = x.transpose(0, 1)
        dirs = 2 if self.bidirectional else 1
        hs, cs = [], []
        for i, layer in enumerate(self.layers):
            hx = None
            if hidden is not None:
                hx = (hidden[0][i * dirs : (i + 1) * dirs], hidden[1][i * dirs : (i + 1) * dirs])
                if dirs == 1:
                    hx = (hx[0][0], hx[1][0])
            x, (h, c) = layer(x, hx)
            hs.append(h if dirs == 2 else h.unsqueeze(0))
            cs.append(c if dirs == 2 else c.unsqueeze(0))
            if self.dropout > 0 and self.training and i < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        if self.batch_first:
            x = x.transpose(0, 1)
        h, c = _C.cat(hs, 0), _C.cat(cs, 0)
        if unbatched:
            x, h, c = x.squeeze(1), h.squeeze(1), c.squeeze(1)
        return x, (h, c)

    @classmethod
    def from_float(cls, other, qconfig=None, split_gates=False):
        """from_float(other, qconfig=None, split_gates=False) -> LSTM

        The quantizable LSTM computing what the nn.LSTM `other` computes (its weights copied);
        a qconfig is recorded on it for the quantization flow."""
        dirs = 2 if other.bidirectional else 1
        out = cls(
            other.input_size,
            other.hidden_size,
            other.num_layers,
            other.bias,
            other.batch_first,
            other.dropout,
            other.bidirectional,
            dtype=other.weight_ih_l0.dtype,
            split_gates=split_gates,
        )
        for i in range(other.num_layers):
            for d in range(dirs):
                sfx = f"_l{i}" + ("_reverse" if d == 1 else "")
                cell = (out.layers[i].layer_fw if d == 0 else out.layers[i].layer_bw).cell
                with _no_grad():
                    cell.igates.weight.copy_(getattr(other, "weight_ih" + sfx))
                    cell.hgates.weight.copy_(getattr(other, "weight_hh" + sfx))
                    if other.bias:
                        cell.igates.bias.copy_(getattr(other, "bias_ih" + sfx))
                        cell.hgates.bias.copy_(getattr(other, "bias_hh" + sfx))
        out.qconfig = qconfig if qconfig is not None else getattr(other, "qconfig", None)
        return out

    @classmethod
    def from_observed(cls, other):
        """from_observed(other) -> LSTM

        Raises NotImplementedError, as torch's: convert an observed LSTM with ember's
        quantization flow (ember.ao.quantization.convert)."""
        raise NotImplementedError(
            "It looks like you are trying to convert a non-quantizable LSTM module. Please, see "
            "the examples on quantizable LSTMs."
        )


class MultiheadAttention(_FloatMHA):
    """MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None)

    nn.MultiheadAttention for the quantization flow (torch.nn.quantizable's): the same
    computation; from_float copies a float module's parameters."""  # noqa: E501

    @classmethod
    def from_float(cls, other):
        """from_float(other) -> MultiheadAttention

        A quantizable MultiheadAttention with other's configuration and parameters."""
        out = cls(
            other.embed_dim,
            other.num_heads,
            other.dropout,
            bias=other.in_proj_bias is not None,
            add_bias_kv=other.bias_k is not None,
            add_zero_attn=other.add_zero_attn,
            kdim=other.kdim,
            vdim=other.vdim,
            batch_first=other.batch_first,
        )
        out.load_state_dict(other.state_dict())
        out.qconfig = getattr(other, "qconfig", None)
        return out


def _no_grad():
    from ...autograd.grad_mode import no_grad

    return no_grad()
