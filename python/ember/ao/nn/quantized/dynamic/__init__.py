"""ember.ao.nn.quantized.dynamic (torch.ao.nn.quantized.dynamic): modules with int8 weights
whose float activations are quantized on the fly."""

from .modules import (
    GRU,
    LSTM,
    GRUCell,
    Linear,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)

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
