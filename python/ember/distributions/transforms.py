"""ember.distributions.transforms: torch's transforms module (the classes live in
transform_base, transforms_elementwise and transforms_structural)."""

from .transform_base import (
    ComposeTransform,
    IndependentTransform,
    Transform,
    _InverseTransform,
    identity_transform,
)
from .transforms_elementwise import (
    AbsTransform,
    AffineTransform,
    CorrCholeskyTransform,
    ExpTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
)
from .transforms_structural import (
    CatTransform,
    CumulativeDistributionTransform,
    ReshapeTransform,
    StackTransform,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
    "_InverseTransform",
]
