"""The dynamic quantized modules: Linear, LSTM, GRU and the three cells."""

from .linear import Linear
from .rnn import GRU, LSTM, RNNBase
from .rnn_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = [
    "Linear",
    "RNNBase",
    "LSTM",
    "GRU",
    "RNNCellBase",
    "LSTMCell",
    "GRUCell",
    "RNNCell",
]
