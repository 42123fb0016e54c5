"""The tensor functions ember.ao uses, from wherever the package defines them (the extension,
or the Python creation and indexing ops), without importing the package root."""

from .. import _C
from .._ops import creation, elementwise, index, random, reduce, shape, sort

_SOURCES = (creation, index, elementwise, reduce, shape, sort, random, _C)


def __getattr__(name):
    for source in _SOURCES:
        found = getattr(source, name, None)
        if found is not None:
            return found
    raise AttributeError(f"module 'ember.ao._torch' has no attribute {name!r}")
