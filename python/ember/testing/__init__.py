"""ember.testing, as torch.testing: `make_tensor` builds test inputs with torch's value ranges
per dtype, and `assert_close` compares tensors, numbers and nested sequences and mappings of them
with torch's default tolerances and mismatch messages."""

from ._allclose import assert_allclose
from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
