"""ember.utils.data._utils.collate, as torch's: default_collate and default_convert under the
module path older programs import them from."""

from .._collate import default_collate, default_convert  # noqa: F401

__all__ = ["default_collate", "default_convert"]
