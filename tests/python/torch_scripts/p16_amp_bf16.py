"""Mixed-precision training on CPU as the AMP recipe writes it: torch.autocast("cpu",
dtype=torch.bfloat16) around the forward and loss of a small conv + attention classifier,
the dtypes autocast gives each op (matmul/conv/linear in bfloat16, softmax/layer_norm/loss in
float32), float32 master weights and gradients, a GradScaler("cpu") that is disabled for
bfloat16 (scale 1, no-op step), gradient accumulation, and a bfloat16 model evaluated
against its float32 original."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 8, 3, padding=1)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        h = F.relu(self.conv(x)).transpose(1, 2)
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.head(self.norm(h + a).mean(1))


def make():
    m = Net()
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 1.3).cos() * 0.4)
    return m


t = torch.linspace(0, 6.28, 12)
x = torch.stack([torch.stack([torch.sin(t * (k % 3 + 1)), torch.cos(t + k)]) for k in range(8)])
y = torch.tensor([k % 3 for k in range(8)])

model = make()
with torch.autocast("cpu", dtype=torch.bfloat16):
    h = model.conv(x)
    logits = model(x)
    probs = logits.softmax(-1)
    loss = F.cross_entropy(logits, y)
    normed = model.norm(h.transpose(1, 2))
print("dtypes", h.dtype, logits.dtype, probs.dtype, loss.dtype, normed.dtype)
print("autocast_state", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
loss.backward()
print("master", model.conv.weight.dtype, model.conv.weight.grad.dtype)

model = make()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scaler = torch.amp.GradScaler("cpu", enabled=False)
accum = 2
for step in range(6):
    for micro in range(accum):
        xb, yb = x[micro * 4 : micro * 4 + 4], y[micro * 4 : micro * 4 + 4]
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(xb), yb) / accum
        scaler.scale(loss).backward()
    scaler.unscale_(opt)
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
    if step % 2 == 1:
        print(f"step {step} loss {loss.item() * accum:.3f} gn {gn.item():.2f}")
print("scaler", scaler.is_enabled(), scaler.get_scale(), scaler.state_dict())

with torch.no_grad():
    ref = model(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = model(x)
    low = copy.deepcopy(model).to(torch.bfloat16)
    lowp = low(x.to(torch.bfloat16))
print("eval", ref.argmax(1).tolist(), mixed.argmax(1).tolist(), lowp.dtype)
print(
    "close",
    (mixed.float() - ref).abs().max().item() < 0.1,
    (lowp.float() - ref).abs().max().item() < 0.2,
)
print("bf16_params", {p.dtype for p in low.parameters()}, low.norm.weight.dtype)
print("bf16_round", torch.tensor([1.0, 1.00390625, 3.14159]).bfloat16().tolist())
