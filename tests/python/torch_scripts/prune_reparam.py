"""Model compression and reparametrization utilities of torch.nn.utils as model code uses them:
prune.l1_unstructured / ln_structured / global_unstructured / custom_from_mask / identity, the
weight_orig + weight_mask pair and its forward pre-hook, is_pruned, prune.remove, sparsity
reports, fine-tuning a pruned network (masked weights stay zero), a custom BasePruningMethod;
parametrizations.weight_norm (original0/original1) and the deprecated nn.utils.weight_norm
(weight_g/weight_v), remove_weight_norm, parametrizations.orthogonal, and spectral_norm's
largest singular value after power iteration."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrize, prune


def det_init(module):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 1.113 + i) * 0.3).view_as(p))


def sparsity(t):
    return round(float((t == 0).sum()) / t.numel(), 4)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc1 = nn.Linear(36, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class EveryOther(prune.BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def main():
    net = Net()
    det_init(net)
    x = torch.cos(torch.arange(2 * 1 * 8 * 8, dtype=torch.float32) * 0.21).view(2, 1, 8, 8)
    y = torch.tensor([0, 2])
    base = net(x)

    prune.l1_unstructured(net.fc1, name="weight", amount=0.3)
    print(
        "fc1_names",
        sorted(n for n, _ in net.fc1.named_parameters()),
        sorted(n for n, _ in net.fc1.named_buffers()),
    )
    print("fc1_sparsity", sparsity(net.fc1.weight), prune.is_pruned(net), prune.is_pruned(net.fc2))
    print("hooks", [type(h).__name__ for h in net.fc1._forward_pre_hooks.values()])
    prune.ln_structured(net.conv, name="weight", amount=0.5, n=2, dim=0)
    print("conv_channels_kept", (net.conv.weight.abs().sum(dim=(1, 2, 3)) > 0).tolist())
    prune.l1_unstructured(net.fc1, name="weight", amount=0.2)  # iterative: a PruningContainer
    print(
        "iterative",
        sparsity(net.fc1.weight),
        type(next(iter(net.fc1._forward_pre_hooks.values()))).__name__,
    )
    prune.global_unstructured(
        [(net.fc2, "weight"), (net.fc2, "bias")], pruning_method=prune.L1Unstructured, amount=10
    )
    print(
        "global",
        sparsity(net.fc2.weight),
        sparsity(net.fc2.bias),
        int((net.fc2.weight == 0).sum() + (net.fc2.bias == 0).sum()),
    )
    EveryOther.apply(net.conv, "bias")
    print(
        "custom",
        net.conv.bias.tolist()
        == (net.conv.bias_orig * torch.tensor([0.0, 1.0, 0.0, 1.0])).tolist(),
    )
    print("out_changed", round((net(x) - base).abs().max().item(), 5))

    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(10):
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(
        "finetune_loss",
        round(loss.item(), 5),
        "masked_still_zero",
        sparsity(net.fc1.weight) >= 0.44,
    )
    print("orig_grad_masked", bool((net.fc1.weight_orig.grad[net.fc1.weight_mask == 0] == 0).all()))
    for m, name in [
        (net.fc1, "weight"),
        (net.conv, "weight"),
        (net.conv, "bias"),
        (net.fc2, "weight"),
        (net.fc2, "bias"),
    ]:
        prune.remove(m, name)
    print(
        "removed",
        sorted(n for n, _ in net.fc1.named_parameters()),
        list(net.fc1.named_buffers()),
        prune.is_pruned(net),
    )
    print("kept_zeros", sparsity(net.fc1.weight), isinstance(net.fc1.weight, nn.Parameter))
    lin = nn.Linear(3, 3)
    prune.custom_from_mask(lin, "weight", torch.eye(3))
    prune.identity(lin, "bias")
    print("from_mask", lin.weight.count_nonzero().item(), lin.bias_mask.tolist())

    # weight norm, new and old APIs
    wn = nn.Linear(4, 2)
    det_init(wn)
    ref = wn.weight.detach().clone()
    wn = nn.utils.parametrizations.weight_norm(wn, name="weight", dim=0)
    g, v = wn.parametrizations.weight.original0, wn.parametrizations.weight.original1
    print(
        "wn_new",
        tuple(g.shape),
        tuple(v.shape),
        torch.allclose(wn.weight, ref),
        [round(t, 4) for t in g.flatten().tolist()],
    )
    print(
        "wn_parametrized", parametrize.is_parametrized(wn), parametrize.is_parametrized(wn, "bias")
    )
    inp = torch.linspace(-1, 1, 8).view(2, 4)
    wn(inp).sum().backward()
    print(
        "wn_grads", [round(t, 4) for t in g.grad.flatten().tolist()], round(v.grad.norm().item(), 4)
    )
    with parametrize.cached():
        a, b = wn.weight, wn.weight
        print("cached_same", a is b)
    parametrize.remove_parametrizations(wn, "weight", leave_parametrized=True)
    print("wn_removed", parametrize.is_parametrized(wn), torch.allclose(wn.weight, ref, atol=1e-6))

    old = nn.Linear(4, 2)
    det_init(old)
    old = nn.utils.weight_norm(old, dim=0)
    print(
        "wn_old",
        sorted(n for n, _ in old.named_parameters()),
        [round(t, 4) for t in old.weight_g.flatten().tolist()],
    )
    nn.utils.remove_weight_norm(old)
    print("wn_old_removed", sorted(n for n, _ in old.named_parameters()))

    orth = nn.utils.parametrizations.orthogonal(nn.Linear(3, 3))
    with torch.no_grad():
        q = orth.weight
    print("orthogonal", torch.allclose(q @ q.T, torch.eye(3), atol=1e-5))

    sn = nn.Linear(5, 4)
    det_init(sn)
    true_sigma = torch.linalg.matrix_norm(sn.weight.detach(), ord=2).item()
    sn = nn.utils.parametrizations.spectral_norm(sn, n_power_iterations=1)
    for _ in range(60):
        sn(torch.ones(1, 5))
    sn.eval()
    w = sn.weight.detach()
    print(
        "spectral_sigma", round(true_sigma, 3), round(torch.linalg.matrix_norm(w, ord=2).item(), 3)
    )


if __name__ == "__main__":
    main()
