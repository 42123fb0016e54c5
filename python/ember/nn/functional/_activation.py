"""Activations, softmax family, normalization, dropout, linear, attention."""

__all__ = []
