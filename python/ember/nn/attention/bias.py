"""ember.nn.attention.bias: causal masks for scaled_dot_product_attention that are described by
their variant and lengths instead of a materialized tensor, as torch.nn.attention.bias.

torch makes CausalBias a Tensor subclass whose __torch_function__ routes sdpa; ember's is a plain
object that scaled_dot_product_attention recognises (it is only ever passed as attn_mask)."""

import warnings
from enum import IntEnum

from ..._C import bool as _bool
from ..._ops.creation import ones

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """UPPER_LEFT: query i sees keys 0..i. LOWER_RIGHT: the diagonal ends at the bottom-right
    corner, so the last query sees every key (the form for queries appended to a KV cache)."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """CausalBias(variant, seq_len_q, seq_len_kv): a causal attention mask, materialized on use."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn(
                "Lower right causal bias will produce NaNs in the output when seq_len_q > "
                "seq_len_kv!",
                stacklevel=2,
            )

    def _upper_left(self, device):
        return ones(self.seq_len_q, self.seq_len_kv, dtype=_bool, device=device).tril(0)

    def _lower_right(self, device):
        diagonal_offset = self.seq_len_kv - self.seq_len_q
        keep = ones(self.seq_len_q, self.seq_len_kv, dtype=_bool, device=device)
        return keep.tril(diagonal=diagonal_offset)

    def _materialize(self, device=None):
        """The boolean mask (True = attend) this bias stands for."""
        if device is None:
            device = "cpu"
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    def __repr__(self):
        return repr(self._materialize())


def _size2(name, size):
    if len(size) != 2:
        raise AssertionError(f"{name} only supports 2D tensors")
    return size


def causal_upper_left(*size):
    """causal_upper_left(seq_len_q, seq_len_kv) -> CausalBias (the is_causal=True mask)."""
    seq_len_q, seq_len_kv = _size2("causal_upper_left", size)
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size):
    """causal_lower_right(seq_len_q, seq_len_kv) -> CausalBias (aligned to the last key)."""
    seq_len_q, seq_len_kv = _size2("causal_lower_right", size)
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
