"""ember.utils.hooks, as torch.utils.hooks: the handle that hook registrations return."""

from ..nn.modules._hooks import RemovableHandle  # noqa: F401

__all__ = ["RemovableHandle"]
