"""A HuggingFace-style decoder attention: rotary embeddings (rotate_half, cos/sin cache
built from inv_freq with register_buffer(persistent=False)), grouped-query heads with
repeat_kv, a past_key_value cache grown with torch.cat, scaled_dot_product_attention with
is_causal for the prompt and an additive / boolean attn_mask for padded batches, enable_gqa and
scale keywords; greedy decoding with the cache must agree with the full forward."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=32, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = (
            self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        )
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim
    )
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class Attention(nn.Module):
    def __init__(self, hidden=16, heads=4, kv_heads=2):
        super().__init__()
        self.head_dim = hidden // heads
        self.num_heads, self.num_key_value_heads = heads, kv_heads
        self.num_key_value_groups = heads // kv_heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.rotary_emb = RotaryEmbedding(self.head_dim)

    def forward(self, hidden_states, position_ids, attention_mask=None, past_key_value=None):
        bsz, q_len, _ = hidden_states.size()
        q = (
            self.q_proj(hidden_states)
            .view(bsz, q_len, self.num_heads, self.head_dim)
            .transpose(1, 2)
        )
        k = self.k_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        cos, sin = self.rotary_emb(v, position_ids)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        if past_key_value is not None:
            k = torch.cat([past_key_value[0], k], dim=2)
            v = torch.cat([past_key_value[1], v], dim=2)
        present = (k, v)
        k_rep = repeat_kv(k, self.num_key_value_groups)
        v_rep = repeat_kv(v, self.num_key_value_groups)
        is_causal = attention_mask is None and q_len > 1
        out = F.scaled_dot_product_attention(
            q.contiguous(),
            k_rep.contiguous(),
            v_rep.contiguous(),
            attn_mask=attention_mask,
            dropout_p=0.0,
            is_causal=is_causal,
        )
        out = out.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(out), present


class TinyLM(nn.Module):
    def __init__(self, vocab=11, hidden=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden, padding_idx=0)
        self.attn = Attention(hidden)
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, position_ids, attention_mask=None, past_key_value=None):
        h = self.embed_tokens(input_ids)
        a, present = self.attn(self.norm(h), position_ids, attention_mask, past_key_value)
        return self.lm_head(self.norm(h + a)), present


def prepare_4d_causal_mask(padding_mask, dtype):
    bsz, seq = padding_mask.shape
    min_dtype = torch.finfo(dtype).min
    causal = torch.full((seq, seq), fill_value=min_dtype, dtype=dtype).triu(diagonal=1)
    mask = causal[None, None, :, :].expand(bsz, 1, -1, -1).clone()
    padding = mask + padding_mask[:, None, None, :].to(dtype) == 0
    return mask.masked_fill(padding == 0, 0.0).masked_fill(
        padding_mask[:, None, None, :] == 0, min_dtype
    )


def det_fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + i) * 0.5).view_as(
                    p
                )
            )


def main():
    model = TinyLM()
    det_fill(model)
    model.eval()
    print("buffers", [n for n, _ in model.named_buffers()], "state_keys", len(model.state_dict()))
    print("inv_freq", [round(v, 5) for v in model.attn.rotary_emb.inv_freq.tolist()])
    ids = torch.tensor([[3, 5, 7, 2]])
    pos = torch.arange(ids.shape[1]).unsqueeze(0)
    with torch.no_grad():
        full, (k, v) = model(ids, pos)
        print("prefill", tuple(k.shape), [round(x, 4) for x in full[0, -1, :5].tolist()])
        # greedy generation with the cache
        generated, past = ids, (k, v)
        next_tok = full[:, -1].argmax(-1, keepdim=True)
        steps = []
        for step in range(4):
            generated = torch.cat([generated, next_tok], dim=1)
            p = torch.tensor([[generated.shape[1] - 1]])
            logits, past = model(next_tok, p, past_key_value=past)
            next_tok = logits[:, -1].argmax(-1, keepdim=True)
            steps.append(round(logits[0, -1].max().item(), 4))
        print("generated", generated.tolist(), "cache_len", past[0].shape[2])
        print("step_max", steps)
        again, _ = model(generated, torch.arange(generated.shape[1]).unsqueeze(0))
        print("cache_matches_full", torch.allclose(again[0, -1], logits[0, -1], atol=1e-5))

        # left-padded batch: additive float mask built from the padding mask
        batch = torch.tensor([[0, 0, 3, 5], [4, 6, 8, 9]])
        pad = (batch != 0).long()
        position_ids = (pad.cumsum(-1) - 1).clamp(min=0)
        mask4d = prepare_4d_causal_mask(pad, torch.float32)
        print("mask_row", [x == 0 for x in mask4d[0, 0, 3].tolist()])
        out, _ = model(batch, position_ids, attention_mask=mask4d)
        alone, _ = model(torch.tensor([[3, 5]]), torch.arange(2).unsqueeze(0))
        print("left_pad_matches", torch.allclose(out[0, -1], alone[0, -1], atol=1e-5))

    # sdpa keywords used directly
    q = torch.sin(torch.arange(2 * 4 * 3 * 4, dtype=torch.float32)).view(2, 4, 3, 4)
    kk = torch.cos(torch.arange(2 * 2 * 5 * 4, dtype=torch.float32)).view(2, 2, 5, 4)
    vv = torch.sin(torch.arange(2 * 2 * 5 * 4, dtype=torch.float32) * 0.3).view(2, 2, 5, 4)
    o1 = F.scaled_dot_product_attention(q, kk, vv, enable_gqa=True, scale=0.25)
    o2 = F.scaled_dot_product_attention(q, repeat_kv(kk, 2), repeat_kv(vv, 2), scale=0.25)
    print("gqa_same", torch.allclose(o1, o2, atol=1e-6), tuple(o1.shape))
    bool_mask = torch.ones(3, 5, dtype=torch.bool).tril(diagonal=2)
    o3 = F.scaled_dot_product_attention(q, repeat_kv(kk, 2), repeat_kv(vv, 2), attn_mask=bool_mask)
    ref = (q @ repeat_kv(kk, 2).transpose(-2, -1) / math.sqrt(4)).masked_fill(
        ~bool_mask, float("-inf")
    )
    ref = ref.softmax(-1) @ repeat_kv(vv, 2)
    print("bool_mask_same", torch.allclose(o3, ref, atol=1e-5), round(o3.sum().item(), 4))
    causal_rect = F.scaled_dot_product_attention(
        q, repeat_kv(kk, 2), repeat_kv(vv, 2), is_causal=True
    )
    print(
        "causal_rect",
        round(causal_rect[0, 0, 0].sum().item(), 4),
        round(causal_rect.sum().item(), 4),
    )

    # training step through the attention
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    seq = torch.tensor([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
    for _ in range(3):
        logits, _ = model(seq[:, :-1], torch.arange(5).unsqueeze(0).expand(2, -1))
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), seq[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    print("loss", round(loss.item(), 5), "norm_w", round(model.norm.weight.sum().item(), 5))


if __name__ == "__main__":
    main()
