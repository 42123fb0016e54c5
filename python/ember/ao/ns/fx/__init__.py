"""ember.ao.ns.fx (torch.ao.ns.fx): the comparison functions the numeric suites apply."""

from . import utils  # noqa: F401
