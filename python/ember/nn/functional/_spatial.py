"""Convolution, pooling, padding, interpolation, fold/unfold, embedding."""

__all__ = []
