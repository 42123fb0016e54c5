# ruff: noqa: E501
"""Variable-length sequence code: pad_sequence (batch_first, left padding, padding_value),
pack_padded_sequence with unsorted lengths, PackedSequence fields, a bidirectional LSTM with
proj_size and a GRU over packed input, pad_packed_sequence with total_length, pack_sequence,
unpack_sequence / unpad_sequence, last-hidden gathering by length, and a masked mean-pool classifier
trained for a few steps."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def det_init(m, scale=0.2):
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.41 + i).view_as(p)
                * scale
            )


def r(t, n=4):
    return round(float(t), n)


lens = [3, 5, 2, 4]
seqs = [
    torch.cos(torch.arange(n * 3, dtype=torch.float32) * 0.3 + i).view(n, 3)
    for i, n in enumerate(lens)
]
padded = pad_sequence(seqs, batch_first=True)
print("pad_bf", tuple(padded.shape), r(padded.sum()), padded[2, 2:].abs().sum().item())
print(
    "pad_tf",
    tuple(pad_sequence(seqs).shape),
    tuple(pad_sequence(seqs, padding_value=-1.0)[:, 2].shape),
)
left = pad_sequence(seqs, batch_first=True, padding_value=9.0, padding_side="left")
print("pad_left", left[2, :3, 0].tolist(), r(left[2, 3:].sum()))
packed = pack_padded_sequence(padded, torch.tensor(lens), batch_first=True, enforce_sorted=False)
print(
    "packed_fields",
    isinstance(packed, PackedSequence),
    packed.batch_sizes.tolist(),
    packed.sorted_indices.tolist(),
    packed.unsorted_indices.tolist(),
    tuple(packed.data.shape),
)
print("packed_data_head", [round(v, 4) for v in packed.data[:4, 0].tolist()])
try:
    pack_padded_sequence(padded, lens, batch_first=True)
except RuntimeError as e:
    print("unsorted_error", str(e)[:70])

lstm = nn.LSTM(3, 6, num_layers=2, bidirectional=True, batch_first=True, proj_size=4)
det_init(lstm)
out, (h, c) = lstm(packed)
print("lstm_packed_out", type(out).__name__, tuple(out.data.shape), tuple(h.shape), tuple(c.shape))
unp, out_lens = pad_packed_sequence(out, batch_first=True, total_length=7)
print(
    "lstm_unpacked",
    tuple(unp.shape),
    out_lens.tolist(),
    r(unp.sum()),
    unp[2, 2:].abs().sum().item(),
)
print("lstm_h_last_layer", r(h[-2:].sum()), r(h[-1, 1].sum()), r(c.sum()))
full_out, _ = lstm(padded)
print("lstm_unpacked_input_differs", not torch.allclose(full_out[0, :3], unp[0, :3]))
print(
    "lstm_len_slice_equal_fwd",
    torch.allclose(lstm(seqs[1].unsqueeze(0))[0], unp[1:2, :5], atol=1e-5),
)
gru = nn.GRU(3, 5, batch_first=False)
det_init(gru)
pk2 = pack_sequence(sorted(seqs, key=len, reverse=True))
o2, h2 = gru(pk2)
print("gru_pack_sequence", pk2.batch_sizes.tolist(), tuple(h2.shape), r(h2.sum()))
pk3 = pack_sequence(seqs, enforce_sorted=False)
o3, h3 = gru(pk3)
un = unpack_sequence(o3)
print("unpack_sequence", [tuple(t.shape) for t in un], r(sum(t.sum() for t in un)))
print("h_equals_last_output", all(torch.allclose(un[i][-1], h3[0, i], atol=1e-6) for i in range(4)))
tf_pad = pad_sequence(seqs)
print(
    "unpad",
    [tuple(t.shape) for t in unpad_sequence(tf_pad, torch.tensor(lens))],
    [tuple(t.shape) for t in unpad_sequence(padded, torch.tensor(lens), batch_first=True)],
)
pdt = packed.to(torch.float64)
print(
    "packed_to",
    pdt.data.dtype,
    pdt.batch_sizes.dtype,
    packed.is_cuda,
    tuple(packed.float().data.shape),
)
again, l2 = pad_packed_sequence(packed, batch_first=True, padding_value=-5.0)
print("roundtrip", torch.equal(again.masked_fill(again == -5.0, 0.0), padded), l2.tolist())


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 8, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, x, lengths):
        pk = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h = self.rnn(pk)
        out, _ = pad_packed_sequence(out, batch_first=True)
        mask = (torch.arange(out.size(1))[None] < lengths[:, None]).unsqueeze(-1)
        pooled = (out * mask).sum(1) / lengths[:, None]
        last = torch.cat([h[-2], h[-1]], dim=-1)
        return self.fc(pooled + last)


clf = Classifier()
det_init(clf)
opt = torch.optim.Adam(clf.parameters(), lr=0.05)
labels = torch.tensor([0, 1, 0, 1])
L = torch.tensor(lens)
for step in range(6):
    loss = F.cross_entropy(clf(padded, L), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        print(f"clf_step{step}", r(loss, 5))
print("clf_pred", clf(padded, L).argmax(-1).tolist())
idx = (L - 1).view(-1, 1, 1).expand(-1, 1, unp.size(-1))
print("gather_last", tuple(unp.gather(1, idx).squeeze(1).shape), r(unp.gather(1, idx).sum()))
