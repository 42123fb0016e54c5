"""ember.ao: architecture optimisation (torch.ao): quantization, quantized and fused modules,
pruning and sparsity."""

from . import nn, ns, pruning, quantization

__all__ = ["nn", "ns", "pruning", "quantization"]
