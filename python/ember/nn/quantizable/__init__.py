"""ember.nn.quantizable: float modules built so that quantization can observe each step
(torch.nn.quantizable): LSTM and LSTMCell made of Linear gates with torch's module layout and
state_dict keys, and MultiheadAttention."""

from . import modules  # noqa: F401
from .modules import LSTM, LSTMCell, MultiheadAttention

__all__ = ["LSTM", "LSTMCell", "MultiheadAttention"]
