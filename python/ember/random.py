"""ember.random: the default generator's seed and state, as torch.random."""

import contextlib

from ._ops import random as _random
from ._ops.random import get_rng_state, set_rng_state  # noqa: F401


def manual_seed(seed):
    return _random.manual_seed(seed)


def seed():
    return _random.seed()


def initial_seed():
    return _random.initial_seed()


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"
):
    """Restores the CPU generator's state on exit (there are no device generators to fork)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
