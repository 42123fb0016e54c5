# ruff: noqa: E501
"""Word-level language model in the style of the classic example: a corpus dictionary,
batchify / get_batch with narrow and views, tied encoder/decoder weights, hidden-state
repackaging, perplexity, whole-model save/load and a sequence model fit by LBFGS."""

import io
import math
import os
import pickle
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = """the cat sat on the mat . the dog sat on the log .
a cat and a dog met on the mat . the log was near the mat .
the dog ran and the cat sat . a log and a mat were there .""".split("\n")


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


def tokenize(lines, dictionary):
    idss = []
    for line in lines:
        words = line.split() + ["<eos>"]
        idss.append(torch.tensor([dictionary.add_word(w) for w in words]).type(torch.int64))
    return torch.cat(idss)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i : i + seq_len], source[i + 1 : i + 1 + seq_len].view(-1)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, tie_weights=True):
        super().__init__()
        self.drop = nn.Dropout(0.0)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (
            weight.new_zeros(self.nlayers, bsz, self.nhid),
            weight.new_zeros(self.nlayers, bsz, self.nhid),
        )


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def det_init(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + i) * 0.1).view_as(
                    p
                )
            )


def evaluate(model, data, bptt, bsz):
    model.eval()
    total = 0.0
    hidden = model.init_hidden(bsz)
    with torch.no_grad():
        for i in range(0, data.size(0) - 1, bptt):
            x, t = get_batch(data, i, bptt)
            out, hidden = model(x, hidden)
            total += len(x) * F.nll_loss(out, t).item()
    return total / (len(data) - 1)


def main():
    torch.manual_seed(1111)
    d = Dictionary()
    ids = tokenize(CORPUS, d)
    print(f"vocab {len(d)} tokens {ids.numel()} dtype {ids.dtype}")
    train = batchify(ids, 4)
    print(f"batchified {tuple(train.shape)} contiguous {train.is_contiguous()}")
    model = RNNModel(len(d), 16, 16, 2)
    det_init(model)
    print(
        f"tied {model.decoder.weight is model.encoder.weight} nparams {sum(p.numel() for p in model.parameters())}"
    )
    print(f"state_dict_keys {len(model.state_dict())}")
    lr, bptt, clip = 1.0, 5, 0.25
    for epoch in range(12):
        model.train()
        hidden = model.init_hidden(4)
        for batch, i in enumerate(range(0, train.size(0) - 1, bptt)):
            x, t = get_batch(train, i, bptt)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            out, hidden = model(x, hidden)
            loss = F.nll_loss(out, t)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
        val = evaluate(model, train, bptt, 4)
        if epoch in (0, 11):
            print(f"epoch{epoch} val_loss {val:.5f} ppl {math.exp(val):.4f}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.pt")
        with open(path, "wb") as f:
            torch.save(model, f)
        with open(path, "rb") as f:
            loaded = torch.load(f, weights_only=False)
        print(
            f"whole_model {type(loaded).__name__} tied_after_load {loaded.decoder.weight is loaded.encoder.weight}"
        )
        print(f"reload_same {abs(evaluate(loaded, train, bptt, 4) - val) < 1e-6}")
        loaded.rnn.flatten_parameters()
        buf = io.BytesIO()
        torch.save(model.state_dict(), buf)
        buf.seek(0)
        sd = torch.load(buf)
        print(f"bytesio_keys {list(sd)[:3]}")
        try:
            torch.load(path)
        except Exception as e:
            print(f"weights_only_default {isinstance(e, pickle.UnpicklingError)}")

    # Sequence fit with LBFGS in double precision (LSTMCell unrolled by hand).
    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, 12)
            self.linear = nn.Linear(12, 1)

        def forward(self, inp, future=0):
            outputs = []
            h = torch.zeros(inp.size(0), 12, dtype=torch.double)
            c = torch.zeros(inp.size(0), 12, dtype=torch.double)
            out = None
            for input_t in inp.split(1, dim=1):
                h, c = self.lstm1(input_t, (h, c))
                out = self.linear(h)
                outputs.append(out)
            for _ in range(future):
                h, c = self.lstm1(out, (h, c))
                out = self.linear(h)
                outputs.append(out)
            return torch.cat(outputs, dim=1)

    t = torch.arange(0, 40, dtype=torch.double)
    data = torch.sin((t.unsqueeze(0) + 4 * torch.arange(6, dtype=torch.double).unsqueeze(1)) / 4.0)
    seq = Sequence().double()
    det_init(seq)
    seq.double()
    opt = torch.optim.LBFGS(seq.parameters(), lr=0.5, max_iter=8)
    crit = nn.MSELoss()
    inp, target = data[:, :-1], data[:, 1:]
    losses = []
    for _ in range(3):

        def closure():
            opt.zero_grad()
            loss = crit(seq(inp), target)
            loss.backward()
            return loss

        losses.append(opt.step(closure).item())
    print(f"lbfgs_losses {[f'{v:.6e}' for v in losses]}")
    with torch.no_grad():
        pred = seq(inp[:2], future=5)
    print(f"future_shape {tuple(pred.shape)} dtype {pred.dtype}")
    print(f"lbfgs_state_keys {sorted(opt.state_dict()['state'][0])}")


if __name__ == "__main__":
    main()
