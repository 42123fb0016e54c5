"""torch's TORCH_WARN_ONCE: a warning given once a process (for each key), at the caller's line."""

import warnings

from ._argparse import _caller_level

_given = set()


def warn_once(key, message, category=UserWarning):
    """Warns `message` the first time `key` is seen in this process, pointing at the first
    frame outside ember."""
    if key in _given:
        return
    _given.add(key)
    warnings.warn(message, category, stacklevel=_caller_level())
