"""Attention variants through torch.nn.attention as gpt-fast / torchtune style code writes them:
flex_attention with a document (packed sequences) + causal + sliding-window mask_mod combined by
and_masks / or_masks, an ALiBi score_mod indexing a per-head slope tensor, grouped-query heads,
return_aux for the log-sum-exp, BlockMask bookkeeping (shape, sparsity, to_dense), create_mask,
and causal_lower_right / causal_upper_left biases for decoding against a KV cache with sdpa."""

import math
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right, causal_upper_left
from torch.nn.attention.flex_attention import (
    AuxRequest,
    and_masks,
    create_block_mask,
    create_mask,
    flex_attention,
    or_masks,
)

warnings.simplefilter("ignore")  # torch warns that uncompiled flex_attention is unfused


def get_alibi_slopes(n_heads):
    start = 2 ** (-(2 ** -(math.log2(n_heads) - 3)))
    return torch.tensor([start * (start**i) for i in range(n_heads)])


def main():
    B, Hq, Hkv, L, E = 2, 4, 2, 8, 8
    q = torch.sin(torch.arange(B * Hq * L * E, dtype=torch.float32) * 0.31).view(B, Hq, L, E)
    k = torch.cos(torch.arange(B * Hkv * L * E, dtype=torch.float32) * 0.53).view(B, Hkv, L, E)
    v = torch.sin(torch.arange(B * Hkv * L * E, dtype=torch.float32) * 0.17 + 1).view(B, Hkv, L, E)

    # packed sequences: tokens attend causally within their own document only
    document_id = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 2], [0, 0, 0, 0, 0, 1, 1, 1]])

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def same_doc(b, h, q_idx, kv_idx):
        return document_id[b, q_idx] == document_id[b, kv_idx]

    def sliding(b, h, q_idx, kv_idx):
        return q_idx - kv_idx <= 2

    def sink(b, h, q_idx, kv_idx):
        return kv_idx == 0

    doc_mask = and_masks(causal, same_doc)
    block_mask = create_block_mask(doc_mask, B, None, L, L, device="cpu", BLOCK_SIZE=4)
    print("block_shape", block_mask.shape, f"{block_mask.sparsity():.2f}")
    print("block_dense", block_mask.to_dense().tolist())
    print("block_counts", block_mask.kv_num_blocks.tolist(), block_mask.full_kv_num_blocks.tolist())
    dense = create_mask(doc_mask, B, 1, L, L, device="cpu")
    print("dense_rows", dense[1, 0, 5].int().tolist(), int(dense.sum()))

    out = flex_attention(q, k, v, block_mask=block_mask, enable_gqa=True)
    ref = F.scaled_dot_product_attention(
        q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), attn_mask=dense
    )
    print(
        "doc_out",
        [round(x, 4) for x in out[1, 2, 5, :4].tolist()],
        torch.allclose(out, ref, atol=1e-5),
    )

    slopes = get_alibi_slopes(Hq)
    print("slopes", [round(s, 5) for s in slopes.tolist()])

    def alibi(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)

    window = create_block_mask(
        and_masks(causal, or_masks(sliding, sink)), None, None, L, L, device="cpu"
    )
    print("window_block", window.BLOCK_SIZE, window.shape, f"{window.sparsity():.2f}")
    out2, aux = flex_attention(
        q,
        k,
        v,
        score_mod=alibi,
        block_mask=window,
        enable_gqa=True,
        return_aux=AuxRequest(lse=True),
    )
    print("alibi_out", [round(x, 4) for x in out2[0, 3, 7, :4].tolist()])
    print("lse", [round(x, 4) for x in aux.lse[0, 0].tolist()], aux.max_scores)
    keep = create_mask(and_masks(causal, or_masks(sliding, sink)), 1, 1, L, L, device="cpu")[0, 0]
    print("window_row7", keep[7].int().tolist())

    scale_out = flex_attention(
        q[:, :2], k, v, scale=0.5, score_mod=lambda s, b, h, qi, ki: torch.tanh(s / 4) * 4
    )
    print("softcap", [round(x, 4) for x in scale_out[0, 1, 2, :4].tolist()])
    try:
        flex_attention(q, k, v)
    except ValueError as e:
        print("heads", str(e).split(". ")[0])
    try:
        flex_attention(q[:, :, :6], k, v, block_mask=block_mask, enable_gqa=True)
    except ValueError as e:
        print("stale_mask", str(e).split(". ")[0])

    # decoding 2 new tokens against a cache of 8: the lower-right causal bias
    q_new = q[:, :, -2:]
    kv = k.repeat_interleave(2, 1)
    lower = F.scaled_dot_product_attention(q_new, kv, kv, attn_mask=causal_lower_right(2, L))
    manual = torch.ones(2, L, dtype=torch.bool).tril(diagonal=L - 2)
    print(
        "lower_right",
        torch.allclose(lower, F.scaled_dot_product_attention(q_new, kv, kv, attn_mask=manual)),
    )
    upper = F.scaled_dot_product_attention(q_new, kv, kv, attn_mask=causal_upper_left(2, L))
    print(
        "upper_left_is_causal",
        torch.allclose(upper, F.scaled_dot_product_attention(q_new, kv, kv, is_causal=True)),
    )
    print(
        "bias_variant",
        causal_lower_right(2, L).variant.name,
        causal_lower_right(2, L)._materialize().sum().item(),
    )
    try:
        F.scaled_dot_product_attention(
            q_new, kv, kv, attn_mask=causal_upper_left(2, L), is_causal=True
        )
    except ValueError as e:
        print("bias_with_causal", e)


if __name__ == "__main__":
    main()
