# ruff: noqa: E501
"""Sequence-to-sequence translation in the style of the nn.Transformer tutorial: special
tokens and a toy parallel corpus, a collate_fn padding source and target, token embedding
scaled by sqrt(d_model) plus sinusoidal positional encoding, nn.Transformer with
src/tgt masks and key-padding masks, label-smoothed cross entropy with ignore_index, and
greedy decoding through encode() / decode()."""

import math

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3
PAIRS = [
    ("ein hund", "a dog"),
    ("eine katze", "a cat"),
    ("der hund läuft", "the dog runs"),
    ("die katze schläft", "the cat sleeps"),
    ("ein hund schläft", "a dog sleeps"),
    ("eine katze läuft", "a cat runs"),
    ("der hund schläft", "the dog sleeps"),
    ("die katze läuft", "the cat runs"),
]


def build_vocab(sents):
    itos = ["<unk>", "<pad>", "<bos>", "<eos>"] + sorted({w for s in sents for w in s.split()})
    return {w: i for i, w in enumerate(itos)}, itos


def det_init(module, scale=0.2):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            if p.dim() == 1:
                p.fill_(1.0) if "norm" in name and name.endswith("weight") else p.zero_()
            else:
                n = p.numel()
                k = torch.arange(n, dtype=torch.float32)
                p.copy_((torch.sin(k * 0.61 + 0.011 * k * k + i) * scale).view_as(p))


class PositionalEncoding(nn.Module):
    def __init__(self, emb_size, dropout, maxlen=50):
        super().__init__()
        den = torch.exp(-torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pos_embedding", pos_embedding)

    def forward(self, token_embedding):
        return self.dropout(token_embedding + self.pos_embedding[: token_embedding.size(0), :])


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, emb_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class Seq2SeqTransformer(nn.Module):
    def __init__(
        self,
        num_encoder_layers,
        num_decoder_layers,
        emb_size,
        nhead,
        src_vocab_size,
        tgt_vocab_size,
        dim_feedforward=64,
        dropout=0.0,
    ):
        super().__init__()
        self.transformer = nn.Transformer(
            d_model=emb_size,
            nhead=nhead,
            num_encoder_layers=num_encoder_layers,
            num_decoder_layers=num_decoder_layers,
            dim_feedforward=dim_feedforward,
            dropout=dropout,
        )
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)

    def forward(
        self,
        src,
        trg,
        src_mask,
        tgt_mask,
        src_padding_mask,
        tgt_padding_mask,
        memory_key_padding_mask,
    ):
        src_emb = self.positional_encoding(self.src_tok_emb(src))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
        outs = self.transformer(
            src_emb,
            tgt_emb,
            src_mask,
            tgt_mask,
            None,
            src_padding_mask,
            tgt_padding_mask,
            memory_key_padding_mask,
        )
        return self.generator(outs)

    def encode(self, src, src_mask):
        return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)), src_mask)

    def decode(self, tgt, memory, tgt_mask):
        return self.transformer.decoder(
            self.positional_encoding(self.tgt_tok_emb(tgt)), memory, tgt_mask
        )


def generate_square_subsequent_mask(sz):
    mask = (torch.triu(torch.ones((sz, sz))) == 1).transpose(0, 1)
    return mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, float(0.0))


def create_mask(src, tgt):
    src_seq_len, tgt_seq_len = src.shape[0], tgt.shape[0]
    tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
    src_mask = torch.zeros((src_seq_len, src_seq_len)).type(torch.bool)
    src_padding_mask = (src == PAD_IDX).transpose(0, 1)
    tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask


def greedy_decode(model, src, src_mask, max_len, start_symbol):
    memory = model.encode(src, src_mask)
    ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long)
    for i in range(max_len - 1):
        tgt_mask = generate_square_subsequent_mask(ys.size(0)).type(torch.bool)
        out = model.decode(ys, memory, tgt_mask)
        out = out.transpose(0, 1)
        prob = model.generator(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()
        ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
        if next_word == EOS_IDX:
            break
    return ys


def main():
    torch.manual_seed(0)
    src_stoi, src_itos = build_vocab([p[0] for p in PAIRS])
    tgt_stoi, tgt_itos = build_vocab([p[1] for p in PAIRS])
    print(f"vocab src {len(src_itos)} tgt {len(tgt_itos)}")

    def tensor_transform(ids):
        return torch.cat((torch.tensor([BOS_IDX]), torch.tensor(ids), torch.tensor([EOS_IDX])))

    def collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(
                tensor_transform([src_stoi.get(w, UNK_IDX) for w in src_sample.split()])
            )
            tgt_batch.append(
                tensor_transform([tgt_stoi.get(w, UNK_IDX) for w in tgt_sample.split()])
            )
        return pad_sequence(src_batch, padding_value=PAD_IDX), pad_sequence(
            tgt_batch, padding_value=PAD_IDX
        )

    loader = DataLoader(PAIRS, batch_size=4, collate_fn=collate_fn)
    src, tgt = next(iter(loader))
    print(
        f"batch src {tuple(src.shape)} tgt {tuple(tgt.shape)} pads {(src == PAD_IDX).sum().item()}"
    )
    model = Seq2SeqTransformer(2, 2, 32, 4, len(src_itos), len(tgt_itos))
    det_init(model)
    print(f"params {sum(p.numel() for p in model.parameters())}")
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX, label_smoothing=0.1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001, betas=(0.9, 0.98), eps=1e-9)
    for epoch in range(1, 31):
        model.train()
        losses = 0.0
        for src, tgt in loader:
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
            logits = model(
                src,
                tgt_input,
                src_mask,
                tgt_mask,
                src_padding_mask,
                tgt_padding_mask,
                src_padding_mask,
            )
            optimizer.zero_grad()
            tgt_out = tgt[1:, :]
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            loss.backward()
            optimizer.step()
            losses += loss.item()
        if epoch in (1, 10, 30):
            print(f"epoch{epoch} train_loss {losses / len(loader):.4f}")

    model.eval()
    outs = []
    for sentence in ("der hund läuft", "eine katze schläft", "die hund"):
        src = tensor_transform([src_stoi.get(w, UNK_IDX) for w in sentence.split()]).view(-1, 1)
        num_tokens = src.shape[0]
        src_mask = torch.zeros(num_tokens, num_tokens).type(torch.bool)
        tgt_tokens = greedy_decode(
            model, src, src_mask, max_len=num_tokens + 5, start_symbol=BOS_IDX
        ).flatten()
        outs.append(
            " ".join(tgt_itos[i] for i in tgt_tokens.tolist())
            .replace("<bos>", "")
            .replace("<eos>", "")
            .strip()
        )
    print(f"translations {outs}")
    with torch.no_grad():
        src, tgt = next(iter(loader))
        tgt_input = tgt[:-1, :]
        masks = create_mask(src, tgt_input)
        full = model(src, tgt_input, *masks, masks[2])
        print(
            f"eval_logits {tuple(full.shape)} mean {full.mean().item():.5f} mask_row1 {masks[1][1].tolist()}"
        )
        print(
            f"builtin_mask_eq {torch.equal(nn.Transformer.generate_square_subsequent_mask(4), generate_square_subsequent_mask(4))}"
        )


if __name__ == "__main__":
    main()
