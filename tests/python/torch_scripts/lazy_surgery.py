"""Building and rewiring models the way fine-tuning scripts do: lazy modules (LazyLinear,
LazyConv2d, LazyBatchNorm2d) materialized by a dry run, has_uninitialized_params; module surgery
(swap every ReLU for a GELU through named_modules + set_submodule, replace a head, delete a child,
get_submodule / get_parameter), freezing with requires_grad_ and BatchNorm eval, parameter groups
by name; containers (ModuleDict, ParameterList, ParameterDict); global hooks
(register_module_forward_pre_hook / forward_hook / full_backward_hook) and per-module
forward_pre / forward (with_kwargs) / full_backward / full_backward_pre hooks; apply(), children
order, named_modules(remove_duplicate=False), and state_dict keys before and after surgery."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules import module as module_mod


def det_init(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.59 + i) * 0.25).view_as(p))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.LazyConv2d(6, 3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU())
        self.block = nn.Sequential(
            nn.Conv2d(6, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(inplace=True)
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.LazyLinear(4)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.block(x)
        return self.head(self.pool(x).flatten(1))


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
        self.scales = nn.ParameterList(
            [nn.Parameter(torch.tensor(1.5)), nn.Parameter(torch.tensor(0.5))]
        )
        self.bias = nn.ParameterDict(
            {"cls": nn.Parameter(torch.zeros(3)), "reg": nn.Parameter(torch.ones(1))}
        )

    def forward(self, x, task="cls"):
        h = torch.tanh(self.trunk(x)) * self.scales[0 if task == "cls" else 1]
        return self.heads[task](h) + self.bias[task]


def main():
    model = Backbone()
    print(
        "uninitialized",
        model.head.has_uninitialized_params(),
        type(model.head).__name__,
        type(model.head.weight).__name__,
    )
    x = torch.cos(torch.arange(2 * 3 * 5 * 5, dtype=torch.float32) * 0.3).view(2, 3, 5, 5)
    model(x)
    print(
        "materialized",
        type(model.head).__name__,
        tuple(model.head.weight.shape),
        type(model.stem[0]).__name__,
        tuple(model.stem[0].weight.shape),
        type(model.stem[1]).__name__,
    )
    det_init(model)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()  # the dry run's statistics came from random weights
    model(x)
    model.eval()
    before = model(x)
    print("out", [round(v, 5) for v in before.flatten().tolist()])

    swapped = []
    for name, m in list(model.named_modules()):
        if isinstance(m, nn.ReLU):
            model.set_submodule(name, nn.GELU(approximate="tanh"))
            swapped.append(name)
    print("swapped", swapped, type(model.get_submodule("block.2")).__name__)
    print("after_swap", round((model(x) - before).abs().max().item(), 5))
    model.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(6, 2))
    det_init(model.head)
    del model.pool
    model.pool = nn.AdaptiveMaxPool2d(1)
    print("children", [n for n, _ in model.named_children()])
    print("keys", list(model.state_dict().keys())[:4], len(model.state_dict()))
    print("get_parameter", tuple(model.get_parameter("head.1.weight").shape))

    for p in model.stem.parameters():
        p.requires_grad_(False)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    print("trainable", trainable)
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() > 1]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() <= 1]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        lr=0.01,
    )
    model.train()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
    model.head[0].p = 0.0
    y = torch.tensor([0, 1])
    for _ in range(5):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(
        "frozen_loss",
        round(loss.item(), 5),
        model.stem[0].weight.grad is None,
        model.stem[1].running_mean.abs().sum().item() > 0,
    )
    print(
        "bn_train_flags",
        [m.training for m in model.modules() if isinstance(m, nn.BatchNorm2d)],
        model.training,
    )

    # containers
    mh = MultiHead()
    det_init(mh)
    inp = torch.linspace(-1, 1, 8).view(2, 4)
    print(
        "multihead",
        [round(v, 4) for v in mh(inp).flatten().tolist()],
        [round(v, 4) for v in mh(inp, task="reg").flatten().tolist()],
    )
    print("param_names", [n for n, _ in mh.named_parameters()])
    print(
        "moduledict", list(mh.heads.keys()), "reg" in mh.heads, len(mh.scales), list(mh.bias.keys())
    )
    mh.heads["aux"] = nn.Identity()
    mh.scales.append(nn.Parameter(torch.tensor(2.0)))
    mh.bias.update({"aux": nn.Parameter(torch.zeros(4))})
    print("grown", list(mh.heads), len(mh.scales), sorted(mh.bias), mh(inp, task="aux").shape)
    print("container_repr", repr(mh.scales).replace("\n", " | "))
    print("pop", type(mh.heads.pop("aux")).__name__, list(mh.heads))

    # hooks
    events = []
    g_pre = module_mod.register_module_forward_pre_hook(
        lambda m, a: events.append(("gpre", type(m).__name__))
    )
    g_fwd = nn.modules.module.register_module_forward_hook(
        lambda m, a, o: events.append(("gfwd", type(m).__name__))
    )
    g_bwd = nn.modules.module.register_module_full_backward_hook(
        lambda m, gi, go: events.append(("gbwd", type(m).__name__))
    )
    net = nn.Sequential(nn.Linear(4, 3), nn.Tanh())
    det_init(net)

    def pre(m, args, kwargs):
        events.append(("pre_kw", sorted(kwargs)))
        return (args[0] * 2,), kwargs

    def post(m, args, kwargs, out):
        events.append(("post_kw", tuple(out.shape)))
        return out + 1

    h1 = net[0].register_forward_pre_hook(pre, with_kwargs=True)
    h2 = net[0].register_forward_hook(post, with_kwargs=True)
    h3 = net[1].register_full_backward_pre_hook(
        lambda m, go: events.append(("bpre", round(go[0].sum().item(), 4)))
    )
    h4 = net[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))
    inp2 = inp.clone().requires_grad_(True)
    out = net(inp2)
    out.sum().backward()
    print("events", events)
    print(
        "hooked_out",
        [round(v, 4) for v in out.flatten().tolist()],
        round(inp2.grad.sum().item(), 4),
    )
    for h in (g_pre, g_fwd, g_bwd, h1, h2, h3, h4):
        h.remove()
    events.clear()
    net(inp)
    print("removed_hooks", events)

    counts = {}
    net.apply(lambda m: counts.__setitem__(type(m).__name__, counts.get(type(m).__name__, 0) + 1))
    print("apply", counts)
    shared = nn.Linear(2, 2)
    tied = nn.Sequential(shared, nn.ReLU(), shared)
    print(
        "named_modules",
        [n for n, _ in tied.named_modules()],
        [n for n, _ in tied.named_modules(remove_duplicate=False)],
    )
    print(
        "params_dedup",
        len(list(tied.parameters())),
        len(list(tied.named_parameters(remove_duplicate=False))),
    )


if __name__ == "__main__":
    main()
