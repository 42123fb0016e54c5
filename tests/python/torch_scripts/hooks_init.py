# ruff: noqa: E501
"""Inspecting and initializing a model: forward / pre / backward hooks for activation
statistics and gradient checks, named_modules walks, apply(init_fn), nn.init, containers."""

from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.norm = nn.GroupNorm(2, c)
        self.act = nn.GELU()
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        self.register_buffer("scratch", torch.zeros(1), persistent=False)

    def forward(self, x):
        self.calls += 1
        return x + self.act(self.norm(self.conv(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.blocks = nn.ModuleList([Block(4) for _ in range(2)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in range(2)])
        self.proj = nn.Sequential(
            OrderedDict([("fc", nn.Linear(4, 4)), ("drop", nn.Dropout(0.0)), ("act", nn.ReLU())])
        )
        self.temperature = nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        x = self.stem(x)
        for blk, s in zip(self.blocks, self.scales):
            x = blk(x) * s
        z = self.proj(F.adaptive_avg_pool2d(x, 1).flatten(1))
        return self.heads["cls"](z) / self.temperature, self.heads["reg"](z)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain("relu"))
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        nn.init.constant_(m.bias, 0.01)
    elif isinstance(m, nn.GroupNorm):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


def det_fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.47 + i) * 0.3
                    + (1.0 if p.dim() == 0 else 0.0)
                ).view_as(p)
            )


def main():
    torch.manual_seed(0)
    net = Net()
    print(f"modules {[n for n, _ in net.named_modules()]}")
    print(f"children {[n for n, _ in net.named_children()]}")
    print(f"params {[(n, tuple(p.shape)) for n, p in net.named_parameters()]}")
    print(f"buffers {[n for n, _ in net.named_buffers()]}")
    print(f"state_dict {list(net.state_dict().keys())}")
    print(f"num_params {sum(p.numel() for p in net.parameters())}")
    print(f"param_str {str(net.temperature)!r}")
    print(f"repr {repr(net)!r}")
    net.apply(init_weights)
    print(f"bias_const {net.stem.bias[0].item():.4f} zeros {bool((net.heads.cls.bias == 0).all())}")
    print(
        f"gains {nn.init.calculate_gain('relu'):.6f} {nn.init.calculate_gain('leaky_relu', 0.2):.6f} {nn.init.calculate_gain('tanh'):.6f} {nn.init.calculate_gain('selu'):.6f}"
    )
    w = torch.empty(256, 128)
    nn.init.xavier_uniform_(w)
    bound = (6.0 / (256 + 128)) ** 0.5
    print(f"xavier_bound {bool(w.abs().max() <= bound)} spread {bool(w.abs().max() > 0.9 * bound)}")
    nn.init.kaiming_uniform_(w, a=5**0.5)
    print(f"kaiming_a_bound {bool(w.abs().max() <= 1 / 128**0.5 + 1e-6)}")
    nn.init.orthogonal_(w)
    print(f"orthogonal {torch.allclose(w.T @ w, torch.eye(128), atol=1e-4)}")
    nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04)
    print(f"trunc_normal {bool(w.abs().max() <= 0.04)}")
    e = torch.empty(3, 5)
    nn.init.eye_(e)
    print(f"eye {e.sum().item()} dirac {nn.init.dirac_(torch.empty(2, 2, 3)).sum().item()}")
    nn.init.uniform_(e, -0.1, 0.1)
    nn.init.normal_(e, 0, 0.01)
    print(
        f"sparse_init_zeros {(nn.init.sparse_(torch.empty(10, 4), sparsity=0.3) == 0).sum(0).tolist()}"
    )

    det_fill(net)
    acts = {}
    handles = []

    def save_output(name):
        def hook(module, inp, out):
            acts[name] = (tuple(inp[0].shape), out.detach().mean().item())

        return hook

    for name, m in net.named_modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            handles.append(m.register_forward_hook(save_output(name)))
    pre_calls = []
    handles.append(
        net.proj.register_forward_pre_hook(lambda m, args: pre_calls.append(args[0].shape[-1]))
    )

    def double_input(module, args):
        return (args[0] * 2,)

    grads = {}

    def grad_hook(module, grad_input, grad_output):
        grads[type(module).__name__] = (grad_output[0].norm().item(), grad_input[0] is None)

    handles.append(net.heads.cls.register_full_backward_hook(grad_hook))
    handles.append(net.stem.register_full_backward_hook(grad_hook))
    pre_bw = []
    handles.append(
        net.heads.cls.register_full_backward_pre_hook(lambda m, go: pre_bw.append(len(go)))
    )
    x = torch.cos(torch.arange(2 * 3 * 6 * 6, dtype=torch.float32) * 0.2).reshape(2, 3, 6, 6)
    x.requires_grad_(True)
    logits, reg = net(x)
    loss = F.cross_entropy(logits, torch.tensor([0, 2])) + reg.pow(2).mean()
    loss.backward()
    print(f"acts {sorted((k, v[0], round(v[1], 5)) for k, v in acts.items())}")
    print(f"pre_calls {pre_calls} pre_bw {pre_bw}")
    print(f"grads {sorted((k, round(v[0], 5), v[1]) for k, v in grads.items())}")
    print(f"x_grad_norm {x.grad.norm().item():.6f}")
    print(f"loss {loss.item():.6f}")
    print(f"calls {net.blocks[0].calls.item()}")
    for h in handles:
        h.remove()
    acts.clear()
    h2 = net.proj.register_forward_pre_hook(double_input)
    doubled = net(x)[0]
    h2.remove()
    print(
        f"hooks_removed {acts == {}} pre_hook_changes_output {not torch.allclose(doubled, net(x)[0])}"
    )
    tensor_grads = []
    y = x * 3
    y.register_hook(lambda g: tensor_grads.append(g.sum().item()))
    y.sum().backward()
    print(f"tensor_hook {tensor_grads}")
    kw = []
    hk = net.register_forward_hook(
        lambda m, args, kwargs, out: kw.append(sorted(kwargs)), with_kwargs=True
    )
    net(x)
    hk.remove()
    print(f"with_kwargs {kw}")
    net.requires_grad_(False)
    net.heads.requires_grad_(True)
    print(f"trainable {[n for n, p in net.named_parameters() if p.requires_grad]}")
    print(
        f"get_submodule {type(net.get_submodule('blocks.1.norm')).__name__} get_parameter {tuple(net.get_parameter('heads.reg.weight').shape)}"
    )
    net.zero_grad()
    print(f"zero_grad_none {net.stem.weight.grad is None}")
    print(
        f"train_flags {net.training} {net.eval().training} {net.blocks[0].training} {net.train().proj.drop.training}"
    )
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    print(f"seq_slice {type(seq[:2]).__name__} {len(seq[:2])} {type(seq[-1]).__name__}")
    seq.append(nn.Sigmoid())
    seq.insert(0, nn.Identity())
    print(f"seq_len {len(seq)} {repr(seq[0])}")
    ml = nn.ModuleList([nn.ReLU()])
    ml.extend([nn.Tanh(), nn.Sigmoid()])
    print(f"modulelist {[type(m).__name__ for m in ml[1:]]} {len(ml)}")
    print(f"extra_repr {net.stem.extra_repr()}")


if __name__ == "__main__":
    main()
