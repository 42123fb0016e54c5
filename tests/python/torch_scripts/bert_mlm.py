# ruff: noqa: E501
"""A BERT-style masked language model on a toy corpus: a WordPiece-free vocabulary with
[PAD]/[CLS]/[SEP]/[MASK] specials, padded batches with attention (key padding) masks, the
80/10/10 masking rule driven by a seeded torch.Generator, token + position + segment
embeddings, nn.TransformerEncoder with src_key_padding_mask, a custom attention layer on
F.scaled_dot_product_attention with a boolean mask, an MLM head tied to the embedding matrix,
cross entropy with ignore_index=-100, and top-k predictions for masked slots."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

SENTENCES = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a cat saw a dog",
    "the dog saw the cat on the mat",
    "a log is near the mat",
    "the cat ran",
]
SPECIALS = ["[PAD]", "[CLS]", "[SEP]", "[MASK]"]


def build_vocab(sentences):
    words = sorted({w for s in sentences for w in s.split()})
    itos = SPECIALS + words
    return {w: i for i, w in enumerate(itos)}, itos


def encode_batch(sentences, stoi):
    ids = [[stoi["[CLS]"]] + [stoi[w] for w in s.split()] + [stoi["[SEP]"]] for s in sentences]
    max_len = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), max_len), stoi["[PAD]"], dtype=torch.long)
    for i, x in enumerate(ids):
        input_ids[i, : len(x)] = torch.tensor(x)
    attention_mask = (input_ids != stoi["[PAD]"]).long()
    return input_ids, attention_mask


def mask_tokens(input_ids, special_mask, vocab_size, mask_id, generator, prob=0.3):
    labels = input_ids.clone()
    probs = torch.full(labels.shape, prob)
    probs.masked_fill_(special_mask, 0.0)
    masked = torch.bernoulli(probs, generator=generator).bool()
    labels[~masked] = -100
    replace = torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & masked
    inputs = input_ids.clone()
    inputs[replace] = mask_id
    rand = (
        torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool()
        & masked
        & ~replace
    )
    inputs[rand] = torch.randint(len(SPECIALS), vocab_size, labels.shape, generator=generator)[rand]
    return inputs, labels


def det_mask(input_ids, special_mask, mask_id):
    """A fixed masking (every third real token) for the deterministic figures."""
    pos = torch.arange(input_ids.size(1)).expand_as(input_ids)
    masked = ((pos + torch.arange(input_ids.size(0))[:, None]) % 3 == 0) & ~special_mask
    labels = input_ids.masked_fill(~masked, -100)
    return input_ids.masked_fill(masked, mask_id), labels


class Embeddings(nn.Module):
    def __init__(self, vocab, d, max_len=16):
        super().__init__()
        self.word = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Embedding(max_len, d)
        self.seg = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d, eps=1e-12)
        self.register_buffer(
            "position_ids", torch.arange(max_len).expand((1, -1)), persistent=False
        )

    def forward(self, ids, token_type_ids=None):
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(ids)
        x = (
            self.word(ids)
            + self.pos(self.position_ids[:, : ids.size(1)])
            + self.seg(token_type_ids)
        )
        return self.norm(x)


class SdpaSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, attention_mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        mask = attention_mask[:, None, None, :].bool()  # True = attend
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class MiniBert(nn.Module):
    def __init__(self, vocab, d=32, heads=4, layers=2):
        super().__init__()
        self.emb = Embeddings(vocab, d)
        layer = nn.TransformerEncoderLayer(
            d, heads, 64, dropout=0.0, activation="gelu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.extra = SdpaSelfAttention(d, heads)
        self.transform = nn.Sequential(
            nn.Linear(d, d), nn.GELU(approximate="tanh"), nn.LayerNorm(d)
        )
        self.decoder = nn.Linear(d, vocab, bias=False)
        self.decoder_bias = nn.Parameter(torch.zeros(vocab))
        self.decoder.weight = self.emb.word.weight  # tied

    def forward(self, ids, attention_mask):
        x = self.emb(ids)
        x = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        x = x + self.extra(x, attention_mask)
        return self.decoder(self.transform(x)) + self.decoder_bias


def det_init(module, scale=0.15):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if "norm" in name or name.endswith("bias"):
                p.fill_(1.0 if name.endswith("weight") else 0.0)
                continue
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.cos(k * 0.53 + 0.007 * k * k + i) * scale).view_as(p))


def main():
    torch.manual_seed(0)
    stoi, itos = build_vocab(SENTENCES)
    ids, attn = encode_batch(SENTENCES, stoi)
    special = torch.isin(ids, torch.tensor([stoi[s] for s in SPECIALS]))
    print(
        f"vocab {len(itos)} batch {tuple(ids.shape)} real_tokens {attn.sum().item()} special {special.sum().item()}"
    )
    g = torch.Generator().manual_seed(42)
    rin, rlab = mask_tokens(ids, special, len(itos), stoi["[MASK]"], g)
    print(f"rng_masked {(rlab != -100).sum().item()} rng_first {rin[0].tolist()}")
    inputs, labels = det_mask(ids, special, stoi["[MASK]"])
    print(
        f"masked {(labels != -100).sum().item()} inputs0 {inputs[0].tolist()} labels0 {labels[0].tolist()}"
    )

    model = MiniBert(len(itos))
    det_init(model)
    print(
        f"tied {model.decoder.weight is model.emb.word.weight} params {sum(p.numel() for p in model.parameters())}"
    )
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
    for step in range(40):
        model.train()
        logits = model(inputs, attn)
        loss = loss_fn(logits.view(-1, len(itos)), labels.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step in (0, 39):
            print(f"step{step} loss {loss.item():.5f} ppl {math.exp(loss.item()):.4f}")
    model.eval()
    with torch.no_grad():
        logits = model(inputs, attn)
        pred = logits.argmax(-1)
        sel = labels != -100
        acc = (pred[sel] == labels[sel]).float().mean().item()
        probs = logits[0].softmax(-1)
        top = probs[1].topk(3)
    print(
        f"masked_acc {acc:.4f} top3 {[itos[i] for i in top.indices.tolist()]} p {[round(v, 4) for v in top.values.tolist()]}"
    )
    # Padding positions must not change the outputs of the real tokens.
    with torch.no_grad():
        short = model(inputs[5:6, :5], attn[5:6, :5])
        full = model(inputs[5:6], attn[5:6])
    print(f"pad_invariant {torch.allclose(short, full[:, :5], atol=1e-5)}")
    none_loss = F.cross_entropy(logits.view(-1, len(itos)), labels.view(-1), reduction="none")
    print(
        f"ignored_zero {(none_loss[labels.view(-1) == -100] == 0).all().item()} sum {none_loss.sum().item():.4f}"
    )


if __name__ == "__main__":
    main()
