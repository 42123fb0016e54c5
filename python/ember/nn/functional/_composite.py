"""Recurrent and multi-head attention functionals built from the others."""

__all__ = []
