"""Deployment round trip: torch.jit.trace / torch.jit.script a small CNN classifier, save to a
buffer and to a file, load back, and serve batches of other sizes."""

import io
import os
import tempfile

import torch
import torch.nn as nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn(self.conv(x))))
        return torch.log_softmax(self.fc(h.flatten(1)), dim=1)


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


model = SmallCNN()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.6, 0.7, p.numel()).reshape(p.shape) * (1 + 0.3 * i))
    model.bn.running_mean.copy_(torch.tensor([0.1, -0.1, 0.2, 0.0]))
    model.bn.running_var.copy_(torch.tensor([1.2, 0.8, 1.0, 1.5]))
model.eval()
x = torch.linspace(-1, 1, 2 * 64).reshape(2, 1, 8, 8)
x5 = torch.linspace(1, -1, 5 * 64).reshape(5, 1, 8, 8)
ref, ref5 = model(x), model(x5)
print("eager", r(ref))

traced = torch.jit.trace(model, x)
print("traced_same", torch.allclose(traced(x), ref, atol=1e-6))
buf = io.BytesIO()
torch.jit.save(traced, buf)
buf.seek(0)
loaded = torch.jit.load(buf)
print("traced_loaded", torch.allclose(loaded(x), ref, atol=1e-6))
print("traced_loaded_batch5", torch.allclose(loaded(x5), ref5, atol=1e-6))
print("loaded_is_module", isinstance(loaded, torch.nn.Module), loaded.training)
print("loaded_state", sorted(k for k in loaded.state_dict() if not k.startswith("bn.num")))

scripted = torch.jit.script(model)
print("scripted_same", torch.allclose(scripted(x), ref, atol=1e-6))
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "model.pt")
    scripted.save(path)
    served = torch.jit.load(path, map_location="cpu")
with torch.no_grad():
    out5 = served(x5)
print("scripted_loaded_batch5", torch.allclose(out5, ref5, atol=1e-6))
print("pred", out5.argmax(1).tolist())
print("probs_sum", r(out5.exp().sum(1)))
frozen = torch.jit.freeze(torch.jit.script(model))
print("frozen_same", torch.allclose(frozen(x), ref, atol=1e-6))
