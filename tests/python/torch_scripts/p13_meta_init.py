"""Large-model loading patterns: build on the meta device, materialize with to_empty, load a
checkpoint with assign=True, reset_parameters, extra state, hook order with prepend=True."""

import io

import torch
import torch.nn as nn


class Scaler(nn.Module):
    """Carries a non-tensor setting through the state dict as extra state."""

    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.temperature = 1.0

    def forward(self, x):
        return self.proj(x) / self.temperature

    def get_extra_state(self):
        return {"temperature": self.temperature}

    def set_extra_state(self, state):
        self.temperature = state["temperature"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.scale = Scaler(4)
        self.norm = nn.LayerNorm(4)
        self.out = nn.Linear(4, 3)

    def forward(self, idx):
        return self.out(self.norm(self.scale(self.emb(idx))))


def fill(module):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.linspace(-0.7, 0.6, p.numel()).reshape(p.shape) * (1 + 0.25 * i))


src = Net()
fill(src)
src.scale.temperature = 2.5
buf = io.BytesIO()
torch.save(src.state_dict(), buf)
print("extra_state_key", [k for k in src.state_dict() if "extra" in k])

with torch.device("meta"):
    big = Net()
p = big.out.weight
print("meta", p.device.type, p.is_meta, tuple(p.shape), p.requires_grad)
print("meta_numel", sum(q.numel() for q in big.parameters()))
try:
    p.sum().item()
except (RuntimeError, NotImplementedError) as e:
    print("meta_item_error", type(e).__name__)

big.to_empty(device="cpu")
print("to_empty", big.out.weight.device.type, big.out.weight.is_meta)
buf.seek(0)
sd = torch.load(buf, weights_only=True)
res = big.load_state_dict(sd, assign=True)
print("assign_result", res)
print("temperature", big.scale.temperature)
print("assign_is_param", type(big.out.weight).__name__, big.out.weight.requires_grad)
idx = torch.tensor([[1, 2, 3], [4, 5, 9]])
print("same_out", torch.allclose(big(idx), src(idx)))
print("out_sum", round(big(idx).sum().item(), 5))

# materialize another copy and re-initialize deterministically where layers allow
with torch.device("meta"):
    fresh = Net()
fresh.to_empty(device="cpu")
fresh.norm.reset_parameters()
print("norm_reset", fresh.norm.weight.tolist(), fresh.norm.bias.tolist())
with torch.no_grad():
    fresh.emb.weight.fill_(0.5)
print("emb_filled", fresh.emb.weight[3].tolist())

# hook order: prepend=True runs first
order = []
net = Net()
fill(net)
net.out.register_forward_hook(lambda m, i, o: order.append("a"))
net.out.register_forward_hook(lambda m, i, o: order.append("b"))
net.out.register_forward_hook(lambda m, i, o: order.append("first"), prepend=True)
net.out.register_forward_pre_hook(lambda m, i: order.append("pre_a"))
net.out.register_forward_pre_hook(lambda m, i: order.append("pre_first"), prepend=True)
net(idx)
print("hook_order", order)
print("named_prefix", [n for n, _ in net.scale.named_parameters(prefix="enc.scale")])
print("no_recurse", [n for n, _ in net.named_parameters(recurse=False)])
print("share_memory", net.share_memory() is net)
