"""State-dict surgery: hooks on save/load, strict=False reports, non-persistent buffers."""

import torch
import torch.nn as nn


def fill(module):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.register_buffer("scale", torch.full((d,), 2.0))
        self.register_buffer("cache", torch.zeros(d), persistent=False)

    def forward(self, x):
        return self.norm(self.lin(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1 = Block(4)
        self.b2 = Block(4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.b2(self.b1(x)))


net = Net()
fill(net)
sd = net.state_dict()
print("keys", list(sd.keys()))
print("persistent_buffers", [k for k, _ in net.named_buffers() if k in sd])
print("all_buffers", [k for k, _ in net.named_buffers()])

calls = []


def pre_hook(module, prefix, keep_vars):
    calls.append(("pre", type(module).__name__, prefix, keep_vars))


def post_hook(module, state_dict, prefix, local_metadata):
    # rename the head's keys as an older checkpoint layout would have them
    for k in list(state_dict):
        if k.startswith(prefix + "head."):
            state_dict[k.replace("head.", "classifier.")] = state_dict.pop(k)


h1 = net.b1.register_state_dict_pre_hook(pre_hook)
h2 = net.register_state_dict_post_hook(post_hook)
sd2 = net.state_dict(keep_vars=True)
print("pre_calls", calls)
print("renamed", [k for k in sd2 if "classifier" in k])
print("keep_vars_param", type(sd2["b1.lin.weight"]).__name__, sd2["b1.lin.weight"].requires_grad)
h1.remove()
h2.remove()
print("after_remove", "head.weight" in net.state_dict())

# a checkpoint from an older model version: renamed head, missing b2, an extra key
old = {
    k.replace("head.", "classifier."): v.clone() * 2
    for k, v in sd.items()
    if not k.startswith("b2.")
}
old["extra.step"] = torch.tensor(7)

seen = []


def load_pre_hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
    for k in list(state_dict):
        if k.startswith(prefix + "classifier."):
            state_dict[k.replace("classifier.", "head.")] = state_dict.pop(k)


def load_post_hook(module, incompatible):
    seen.append((sorted(incompatible.missing_keys), sorted(incompatible.unexpected_keys)))
    incompatible.unexpected_keys[:] = [k for k in incompatible.unexpected_keys if k != "extra.step"]


net2 = Net()
net2.register_load_state_dict_pre_hook(load_pre_hook)
net2.register_load_state_dict_post_hook(load_post_hook)
res = net2.load_state_dict(old, strict=False)
print("missing", sorted(res.missing_keys))
print("unexpected", sorted(res.unexpected_keys))
print("post_seen_missing", len(seen[0][0]), "unexpected", seen[0][1])
print(
    "head_loaded",
    round(net2.head.weight.abs().sum().item(), 5),
    round(2 * net.head.weight.abs().sum().item(), 5),
)

try:
    Net().load_state_dict({"head.weight": torch.zeros(3, 4)}, strict=False)
except RuntimeError as e:
    print("size_mismatch", "size mismatch for head.weight" in str(e))

# strict=True with the post hook clearing everything still passes
net3 = Net()


def clear_all(module, incompatible):
    incompatible.missing_keys.clear()
    incompatible.unexpected_keys.clear()


net3.register_load_state_dict_post_hook(clear_all)
print("strict_cleared", net3.load_state_dict({"head.bias": torch.ones(2)}, strict=True))

# submodule access / replacement
print("get_submodule", type(net.get_submodule("b1.norm")).__name__)
net.set_submodule("b2.lin", nn.Identity())
x = torch.linspace(-1, 1, 12).reshape(3, 4)
print("out", [round(v, 5) for v in net(x).sum(0).tolist()])
print("params_after_swap", sum(p.numel() for p in net.parameters()))
