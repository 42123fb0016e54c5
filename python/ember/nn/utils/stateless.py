"""torch.nn.utils.stateless: functional_call under its older home (see ember.func)."""

from ...func import functional_call  # noqa: F401

__all__ = ["functional_call"]
