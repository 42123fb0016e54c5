"""ember.fx.experimental: torch.fx.experimental's ``optimization.fuse`` (Conv/Linear + BatchNorm
folding for inference) and ``proxy_tensor.make_fx`` (graph capture by running a function)."""

from . import optimization, proxy_tensor

__all__ = ["optimization", "proxy_tensor"]
