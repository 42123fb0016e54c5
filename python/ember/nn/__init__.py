"""ember.nn: modules, parameters, initialization and utilities, as torch.nn."""

from . import functional  # noqa: F401
