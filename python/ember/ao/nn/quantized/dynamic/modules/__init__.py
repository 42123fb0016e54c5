"""The dynamic quantized modules: Linear, LSTM and GRU."""

from .linear import Linear
from .rnn import GRU, LSTM, RNNBase

__all__ = ["Linear", "RNNBase", "LSTM", "GRU"]
