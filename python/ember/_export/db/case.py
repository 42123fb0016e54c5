"""``SupportLevel``: how far export handles the feature an exportdb example shows (torch's
``torch._export.db.case.SupportLevel``; the examples set ``support_level`` from it)."""

import enum

__all__ = ["SupportLevel"]


class SupportLevel(enum.Enum):
    """SupportLevel.SUPPORTED / SupportLevel.NOT_SUPPORTED_YET"""

    SUPPORTED = 1
    NOT_SUPPORTED_YET = 0
