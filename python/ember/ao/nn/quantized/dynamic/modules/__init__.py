"""The dynamic quantized modules: Linear and LSTM."""

from .linear import Linear
from .rnn import LSTM

__all__ = ["Linear", "LSTM"]
