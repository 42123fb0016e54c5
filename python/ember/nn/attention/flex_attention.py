"""ember.nn.attention.flex_attention: attention with a user score_mod and a block-sparse mask
built from a mask_mod, as torch.nn.attention.flex_attention.

torch compiles the mods into a fused kernel (eagerly it materializes the scores, as here). ember
evaluates score_mod and mask_mod once on broadcast index tensors b (B,1,1,1), h (1,H,1,1),
q_idx (1,1,L,1) and kv_idx (1,1,1,S) instead of vmapping them per element: the same results for
mods written in tensor operations (arithmetic, comparisons, torch.where, indexing a captured
tensor with the indices), which is what torch's vmap requires of them too. BlockMask keeps
torch's block bookkeeping (partial and full blocks per query block) for shape, sparsity() and
to_dense(); the attention itself applies mask_mod to every score."""

import inspect
import itertools
import math
from typing import NamedTuple

from ... import _C
from ..._ops.creation import arange, zeros
from .. import functional as F

__all__ = [
    "BlockMask",
    "flex_attention",
    "AuxOutput",
    "AuxRequest",
    "create_block_mask",
    "create_mask",
    "or_masks",
    "and_masks",
    "noop_mask",
]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's auxiliary outputs (None where not requested)."""

    lse: object = None
    max_scores: object = None


def noop_mask(b, h, q_idx, kv_idx):
    """A mask_mod that keeps every score."""
    return b.new_ones(size=(), dtype=_C.bool)


def or_masks(*mask_mods):
    """A mask_mod keeping a score where any of mask_mods keeps it."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=_C.bool)
        for mod in mask_mods:
            result = result | mod(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods):
    """A mask_mod keeping a score where all of mask_mods keep it."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=_C.bool)
        for mod in mask_mods:
            result = result & mod(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _indices(B, H, L, S, device):
    return (
        arange(B, device=device).view(B, 1, 1, 1),
        arange(H, device=device).view(1, H, 1, 1),
        arange(L, device=device).view(1, 1, L, 1),
        arange(S, device=device).view(1, 1, 1, S),
    )


def _is_score_mod(fn):
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return len(params) == 5


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None) -> Tensor

    The boolean (B, H, Q_LEN, KV_LEN) mask of a mask_mod (or of a score_mod: where it gives
    -inf); B or H None mean 1."""
    B, H = B or 1, H or 1
    device = device or "cpu"
    idx = _indices(B, H, Q_LEN, KV_LEN, device)
    if _is_score_mod(mod_fn):
        out = mod_fn(zeros(B, H, Q_LEN, KV_LEN, device=device), *idx)
        return out.isneginf().logical_not().expand(B, H, Q_LEN, KV_LEN).contiguous()
    return mod_fn(*idx).expand(B, H, Q_LEN, KV_LEN).contiguous()


def _dense_to_ordered(dense):
    num_blocks = dense.sum(dim=-1, dtype=_C.int32)
    indices = dense.to(_C.int8).argsort(dim=-1, descending=True, stable=True).to(_C.int32)
    return num_blocks, indices


def _transpose_ordered(num_blocks, indices):
    """The q-major (num_blocks, indices) of kv-major ones, and the other way round."""
    return _dense_to_ordered(_ordered_to_dense(num_blocks, indices).transpose(-2, -1).bool())


def _ordered_to_dense(num_blocks, indices):
    cols = indices.shape[-1]
    keep = arange(cols).view(*([1] * (indices.dim() - 1)), cols) < num_blocks.unsqueeze(-1)
    dense = zeros(*indices.shape, dtype=_C.int32)
    return dense.scatter(-1, indices.long(), keep.to(_C.int32))


def _sliced_mask_mod_error(b, h, q_idx, kv_idx):
    """The mask_mod of a sliced BlockMask (BlockMask.__getitem__): torch's error."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the "
        "mask_mod attribute is reset. You must set it from the original BlockMask's mask_mod."
        "\n\nIncorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(sliced_mask.mask_mod, offset)  # WRONG!"
        "\n\nCorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(base_mask.mask_mod, offset)  # Use base_mask!"
    )


class BlockMask:
    """Which (query block, key block) tiles of the score matrix hold any kept score: the
    partial tiles (kv_num_blocks / kv_indices, where mask_mod must be applied) and the full ones
    (full_kv_num_blocks / full_kv_indices), with the q-major transposes, as torch's."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, BLOCK_SIZE, mask_mod, compute_q_blocks=True):  # fmt: skip
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks = self.q_indices = self.full_q_num_blocks = self.full_q_indices = None
        if compute_q_blocks:
            self.q_num_blocks, self.q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                self.full_q_num_blocks, self.full_q_indices = _transpose_ordered(
                    full_kv_num_blocks, full_kv_indices
                )
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True, **_):  # fmt: skip
        """A BlockMask from its kv-major tiles (the q-major ones are derived); without
        seq_lengths the sequences are taken to fill their last blocks. The dq_* scheduling
        options of torch's GPU kernel are accepted and have no use on the CPU."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (
                kv_indices.shape[-2] * BLOCK_SIZE[0],
                kv_indices.shape[-1] * BLOCK_SIZE[1],
            )
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                   BLOCK_SIZE, mask_mod or noop_mask, compute_q_blocks)  # fmt: skip

    def __getitem__(self, index):
        """The BlockMask of some batches, heads and query-block rows (ints, slices or index
        tensors, applied to every tile table): an int keeps its dim, as a one-long slice, so the
        result stays (B, H, ...)-shaped for flex_attention. Its mask_mod raises when called:
        the original's would see the sliced positions' indices shifted."""
        index = index if isinstance(index, tuple) else (index,)
        index = (*index, slice(None), slice(None), slice(None))[:3]
        index = tuple(
            slice(i % n, i % n + 1) if isinstance(i, int) and -n <= i < 0 else
            slice(i, i + 1) if isinstance(i, int) else i
            for i, n in zip(index, self.kv_num_blocks.shape[:3])
        )  # fmt: skip
        full = self.full_kv_num_blocks is not None
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index],
            self.kv_indices[index],
            self.full_kv_num_blocks[index] if full else None,
            self.full_kv_indices[index] if full else None,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None,
        )

    @property
    def shape(self):
        *batch_dims, _, _ = self.kv_indices.shape
        return tuple(batch_dims) + self.seq_lengths

    def numel(self):
        return math.prod(self.shape)

    def sparsity(self):
        """The percentage of tiles that need no computation."""
        computed = self.kv_num_blocks.sum().item()
        if self.full_kv_num_blocks is not None:
            computed += self.full_kv_num_blocks.sum().item()
        computed_size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self):
        """The (B, H, query blocks, key blocks) int32 map of tiles that are computed."""
        partial = _ordered_to_dense(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is None:
            return partial
        return partial | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices)

    def to_string(self, grid_size=(20, 20), limit=4):
        """A picture of the computed tiles per (batch, head), at most grid_size characters
        pairs a side (-1: one per tile): full cells █, partly computed ░, skipped blank."""
        dense = self.to_dense()
        *batch_dims, rows, cols = dense.shape
        if grid_size == -1:
            max_rows, max_cols = rows, cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-rows // max_rows))
        col_step = max(1, -(-cols // max_cols))

        def picture(batch_idx):
            grid = dense[batch_idx]
            lines = [f"{batch_idx}"]
            for r in range(0, rows, row_step):
                line = ""
                for c in range(0, cols, col_step):
                    share = grid[r : r + row_step, c : c + col_step].float().mean().item()
                    line += ("█" if share == 1 else " " if share == 0 else "░") * 2
                lines.append(line)
            return "\n".join(lines) + "\n"

        parts = []
        for i, batch_idx in enumerate(itertools.product(*(range(n) for n in batch_dims))):
            if i == limit:
                parts += [
                    "...",
                    "To print out more, set BlockMask.to_string(limit=N)",
                    "You can also index (BlockMask[batch, head]) to choose a specific batch or "
                    "head",
                ]
                break
            parts.append(picture(batch_idx))
        return "\n".join(parts)

    def __str__(self):
        head = f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
        return head + self.to_string().strip() + "\n)"

    def __repr__(self):
        def shape_or_none(x):
            return x.shape if x is not None else None

        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (
            f"BlockMask(\n"
            f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
            f"    kv_indices={self.kv_indices.shape},\n"
            f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
            f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
            f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
            f"    q_indices={shape_or_none(self.q_indices)},\n"
            f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
            f"    full_q_indices={shape_or_none(self.full_q_indices)},\n"
            f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
            f"    shape={self.shape},\n"
            f"    sparsity={self.sparsity():.2f}%,\n"
            f"    mask_mod={name}\n"
            f")"
        )


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False, **_):  # fmt: skip
    """create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128) -> BlockMask

    B or H None mean 1 (the mask broadcasts over batches or heads)."""
    if _is_score_mod(mask_mod):
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B, H = B or 1, H or 1
    qb, kb = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    nq, nk = -(-Q_LEN // qb), -(-KV_LEN // kb)
    mask = F.pad(mask, (0, nk * kb - KV_LEN, 0, nq * qb - Q_LEN))  # padding counts as masked
    tiles = mask.view(B, H, nq, qb, nk, kb)
    any_kept = tiles.any(dim=5).any(dim=3)
    full = tiles.all(dim=5).all(dim=3)
    kv_num, kv_idx = _dense_to_ordered(any_kept & full.logical_not())
    full_num, full_idx = _dense_to_ordered(full)
    return BlockMask((Q_LEN, KV_LEN), kv_num, kv_idx, full_num, full_idx, (qb, kb), mask_mod)


def _check_inputs(query, key, value, block_mask, enable_gqa):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    hq, hkv = query.size(-3), key.size(-3)
    if not enable_gqa and hq != hkv:
        raise ValueError(
            f"Expect query and key/value to have the same number of heads but got Hq={hq} and "
            f"Hkv={hkv}. Try setting enable_gqa=True for GQA."
        )
    if enable_gqa and hq % hkv != 0:
        raise ValueError(
            "Expect number of query heads to be a multiple of kv heads for GQA but got "
            f"Hq={hq} and Hkv={hkv}."
        )
    if query.size(0) != key.size(0):
        raise ValueError(
            "Expect query and key/value to have the same batch size, or non-none block_mask, "
            f"but got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}."
        )
    if block_mask is None:
        return
    if block_mask.mask_mod is _sliced_mask_mod_error:  # before the shape checks, as torch's
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    L, S = query.size(-2), key.size(-2)
    bq, bkv = block_mask.shape[-2], block_mask.shape[-1]
    if L > bq or S > bkv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} "
            f"and kv_len={S}. As the block mask was created for a smaller length than you're "
            "using it for, you likely need to create a new block mask."
        )
    if L < bq or S < bkv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} "
            f"and kv_len={S}. As the block mask was created for a larger length than you're "
            "using it for, you can either 1. create a new block mask with the correct length, "
            "or 2. 'adjust' the existing block mask to the correct length by calling "
            "block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask to the "
            "upper left corner, which does not work for all mask_mods!"
        )


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):  # fmt: skip
    """flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
    enable_gqa=False, return_lse=False, kernel_options=None, *, return_aux=None) -> Tensor

    softmax(score_mod(Q K^T * scale) masked by block_mask.mask_mod) V over (B, H, L, E) inputs;
    a query row with every score masked gives zeros (and lse -inf)."""
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
            "return_aux=AuxRequest(lse=True) instead."
        )
    B, H, L, E = query.shape
    S = key.size(-2)
    if key.size(-3) != H:
        key = key.repeat_interleave(H // key.size(-3), -3)
        value = value.repeat_interleave(H // value.size(-3), -3)
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = query.matmul(key.transpose(-2, -1)) * scale
    idx = _indices(B, H, L, S, query.device)
    if score_mod is not None:
        scores = score_mod(scores, *idx).expand(B, H, L, S)
    if block_mask is not None:
        scores = scores.masked_fill(block_mask.mask_mod(*idx).logical_not(), float("-inf"))
    lse = scores.logsumexp(dim=-1)
    dead = lse.isneginf().unsqueeze(-1)
    probs = (scores - lse.unsqueeze(-1).masked_fill(dead, 0.0)).exp().masked_fill(dead, 0.0)
    out = probs.matmul(value)
    if return_aux is not None:
        return out, AuxOutput(
            lse=lse if return_aux.lse else None,
            max_scores=scores.amax(dim=-1) if return_aux.max_scores else None,
        )
    if return_lse:
        return out, lse
    return out
