"""ember.utils.data._utils, as torch's: the path older programs import collate from."""

from . import collate  # noqa: F401
