# ruff: noqa: E501
"""Data code that builds tensors out of numpy pieces, as feature pipelines and evaluation loops
do: per-row numpy scalars collected into lists (float64 metrics, int32 ids, bool flags) turned
into tensors, lists of per-sample arrays stacked by torch.tensor, read-only buffers
(np.frombuffer over bytes, a read-only view) wrapped by from_numpy / as_tensor, a Dataset of
numpy records collated into tensors, and the model's outputs going back to numpy once detached."""

import io
import warnings

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

warnings.simplefilter("ignore")

rows = [
    {
        "id": np.int32(i),
        "score": np.float64(0.1 * i + 0.05),
        "flag": np.bool_(i % 3 == 0),
        "feat": np.linspace(0, 1, 4, dtype=np.float32) * (i + 1),
        "label": np.int64(i % 2),
    }
    for i in range(6)
]
ids = torch.tensor([r["id"] for r in rows])
scores = torch.tensor([r["score"] for r in rows])
flags = torch.tensor([r["flag"] for r in rows])
labels = torch.tensor([r["label"] for r in rows])
print("scalar_lists", ids.dtype, scores.dtype, flags.dtype, labels.dtype)
print("flags", flags.tolist(), "ids_sum", ids.sum().item(), "scores", round(scores.sum().item(), 6))
print(
    "mixed",
    torch.tensor([np.float32(1.5), 2.0]).dtype,
    torch.tensor([np.int64(1), 2.5]).dtype,
    torch.tensor([np.float16(1), np.float32(2)]).dtype,
    torch.tensor([1, np.uint8(2)]).dtype,
)
print(
    "nested",
    torch.tensor([[np.float64(1), 2.0], [3.0, 4.0]]).dtype,
    torch.tensor([np.int8(1), np.int16(300)]).tolist(),
)
feats = torch.tensor([r["feat"] for r in rows])
print("array_list", feats.dtype, tuple(feats.shape), round(feats.sum().item(), 5))
print("np_scalar_0d", torch.tensor(np.float16(2.5)).dtype, torch.tensor(np.bool_(False)).dtype)

raw = bytes(range(16))
buf = np.frombuffer(raw, dtype=np.uint8)
t = torch.from_numpy(buf)
print("frombuffer", t.dtype, t.sum().item(), t[3:6].tolist())
words = np.frombuffer(raw, dtype=np.int32)
print("frombuffer_i32", torch.as_tensor(words).tolist()[:2], torch.tensor(words).dtype)
base = np.arange(6, dtype=np.float64)
ro = base.view()
ro.flags.writeable = False
shared = torch.from_numpy(ro)
base[0] = 42.0
print("readonly_view_shares", shared[0].item(), shared.dtype)
try:
    torch.from_numpy([1, 2])
except TypeError as e:
    print("from_numpy_list", str(e))


class Records(Dataset):
    def __len__(self):
        return len(rows)

    def __getitem__(self, i):
        r = rows[i]
        return r["feat"], r["label"], r["score"]


batch = next(iter(DataLoader(Records(), batch_size=4)))
print("collated", [b.dtype for b in batch], tuple(batch[0].shape), batch[1].tolist())

model = nn.Linear(4, 2)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-1, 1, 8).view(2, 4))
    model.bias.fill_(0.1)
logits = model(feats)
try:
    np.asarray(logits)
except RuntimeError as e:
    print("asarray_refused", "detach" in str(e))
probs = torch.softmax(logits, 1).detach().numpy()
acc = float((probs.argmax(1) == labels.numpy()).mean())
print("probs", probs.dtype, np.round(probs[:2], 5).tolist(), "acc", round(acc, 4))
metric_hist = [np.float64(v) for v in probs[:, 1]]
print(
    "metric_tensor",
    torch.tensor(metric_hist).dtype,
    round(torch.tensor(metric_hist).mean().item(), 6),
)
out = io.BytesIO()
np.save(out, logits.detach().numpy())
out.seek(0)
print("np_roundtrip", torch.allclose(torch.from_numpy(np.load(out)), logits.detach()))
