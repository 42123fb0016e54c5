"""Argument helpers: expand an int to an n-tuple, as torch.nn.modules.utils."""

import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """(1, 2) with n=2 -> (2, 2, 1, 1): the F.pad order of per-dimension paddings."""
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """consume_prefix_in_state_dict_if_present(state_dict, prefix) -> None

    Strip ``prefix`` in place from every key of ``state_dict`` that starts with it (the
    ``module.`` that DataParallel/DDP wrappers add), keeping the key order, and from the keys of
    its ``_metadata`` when it has one."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # the wrapper's own entry ("module" for the prefix "module.") becomes the root entry
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix) :]] = metadata.pop(key)
