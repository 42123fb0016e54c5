# ruff: noqa: E501
"""torch.nn.utils as model code uses it: custom parametrizations (symmetric, positive,
low-rank) with register_parametrization, cached(), right_inverse and remove_parametrizations;
parametrizations.orthogonal / weight_norm / spectral_norm; pruning (l1_unstructured,
ln_structured, global_unstructured, custom masks, remove); parameters_to_vector;
fuse_conv_bn_eval; skip_init; and gradient checkpointing of a block."""

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
import torch.nn.utils.prune as prune
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.fusion import fuse_conv_bn_eval
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


def det_init(module, scale=0.4, phase=0.0):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            k = torch.arange(n, dtype=torch.float32)
            p.copy_((torch.sin(k * 0.83 + 0.05 * k * k + i + phase) * scale).view_as(p))


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Positive(nn.Module):
    def forward(self, X):
        return torch.nn.functional.softplus(X)

    def right_inverse(self, Y):
        return torch.log(torch.expm1(Y))


def main():
    torch.manual_seed(0)
    layer = nn.Linear(3, 3)
    det_init(layer)
    P.register_parametrization(layer, "weight", Symmetric())
    W = layer.weight
    print(
        f"symmetric {torch.allclose(W, W.T)} is_parametrized {P.is_parametrized(layer)} {P.is_parametrized(layer, 'bias')} original {tuple(layer.parametrizations.weight.original.shape)}"
    )
    print(f"param_names {[n for n, _ in layer.named_parameters()]}")
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    x = torch.linspace(-1, 1, 12).view(4, 3)
    for _ in range(5):
        opt.zero_grad()
        layer(x).pow(2).sum().backward()
        opt.step()
    print(
        f"still_symmetric {torch.allclose(layer.weight, layer.weight.T)} w00 {layer.weight[0, 0].item():.5f}"
    )
    with P.cached():
        a = layer.weight
        b = layer.weight
        print(f"cached_same {a is b}")
    P.remove_parametrizations(layer, "weight", leave_parametrized=True)
    print(
        f"removed {P.is_parametrized(layer)} type {type(layer.weight).__name__} sym {torch.allclose(layer.weight, layer.weight.T)}"
    )

    pos = nn.Linear(2, 2)
    P.register_parametrization(pos, "weight", Positive())
    pos.weight = torch.tensor([[1.0, 2.0], [0.5, 3.0]])
    print(
        f"right_inverse {[round(v, 5) for v in pos.weight.flatten().tolist()]} raw {[round(v, 4) for v in pos.parametrizations.weight.original.flatten().tolist()]}"
    )
    P.register_parametrization(pos, "weight", Symmetric())
    print(
        f"chained {len(pos.parametrizations.weight)} sym {torch.allclose(pos.weight, pos.weight.T)}"
    )

    q = orthogonal(nn.Linear(4, 4))
    det_init(q)
    Q = q.weight
    print(f"orthogonal {torch.allclose(Q @ Q.T, torch.eye(4), atol=1e-5)}")
    wn = weight_norm(nn.Linear(3, 2), name="weight", dim=0)
    det_init(wn)
    print(
        f"weight_norm params {sorted(n for n, _ in wn.named_parameters())} g {[round(v, 5) for v in wn.parametrizations.weight.original0.flatten().tolist()]} row_norms {[round(v, 5) for v in wn.weight.norm(dim=1).tolist()]}"
    )
    sn = spectral_norm(nn.Linear(5, 4))
    det_init(sn)
    sn.train()
    for _ in range(15):
        sn(torch.ones(1, 5))
    sn.eval()
    print(
        f"spectral_norm_sigma {torch.linalg.matrix_norm(sn.weight, 2).item():.3f} buffers {sorted(n for n, _ in sn.named_buffers())}"
    )

    # Pruning.
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
    det_init(net)
    prune.l1_unstructured(net[0], name="weight", amount=0.3)
    print(
        f"l1_pruned {int((net[0].weight == 0).sum())} of {net[0].weight.numel()} names {sorted(n for n, _ in net[0].named_buffers())} hooks {len(net[0]._forward_pre_hooks)}"
    )
    prune.ln_structured(net[3], name="weight", amount=0.4, n=2, dim=0)
    print(f"ln_structured_rows_zero {int((net[3].weight.abs().sum(1) == 0).sum())}")
    prune.global_unstructured(
        [(net[0], "bias"), (net[3], "bias")], pruning_method=prune.L1Unstructured, amount=3
    )
    print(
        f"global_zero_biases {int((net[0].bias == 0).sum() + (net[3].bias == 0).sum())} is_pruned {prune.is_pruned(net)}"
    )
    prune.custom_from_mask(net[3], name="bias", mask=torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0]))
    print(f"custom_mask {net[3].bias_mask.tolist()}")
    out = net(torch.linspace(0, 1, 36).view(1, 1, 6, 6))
    print(f"pruned_out {[round(v, 5) for v in out.flatten().tolist()]}")
    prune.remove(net[0], "weight")
    print(
        f"after_remove {sorted(n for n, _ in net[0].named_parameters())} zeros {int((net[0].weight == 0).sum())}"
    )
    sparsity = 100.0 * float(torch.sum(net[3].weight == 0)) / float(net[3].weight.nelement())
    print(f"sparsity {sparsity:.2f}")

    # Flattening parameters, fusing conv+bn, skip_init.
    small = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    det_init(small)
    vec = parameters_to_vector(small.parameters())
    vector_to_parameters(vec * 2, small.parameters())
    print(f"param_vector {vec.numel()} doubled {small[1].bias.item() / vec[-1].item():.4f}")
    conv, bn = nn.Conv2d(2, 3, 3, bias=False), nn.BatchNorm2d(3)
    det_init(conv)
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor([0.1, -0.2, 0.3]))
        bn.running_var.copy_(torch.tensor([1.5, 0.5, 2.0]))
        bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
        bn.bias.copy_(torch.tensor([0.0, 0.1, -0.1]))
    conv.eval()
    bn.eval()
    fused = fuse_conv_bn_eval(conv, bn)
    xi = torch.linspace(-1, 1, 50).view(1, 2, 5, 5)
    print(
        f"fused_equal {torch.allclose(fused(xi), bn(conv(xi)), atol=1e-5)} has_bias {fused.bias is not None}"
    )
    lazy = torch.nn.utils.skip_init(nn.Linear, 3, 2)
    print(f"skip_init {tuple(lazy.weight.shape)}")

    # Activation checkpointing gives the same gradients.
    block = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    det_init(block)
    xin = torch.linspace(-1, 1, 20).view(5, 4).requires_grad_()
    block(xin).sum().backward()
    ref = [p.grad.clone() for p in block.parameters()] + [xin.grad.clone()]
    block.zero_grad()
    xin.grad = None
    checkpoint(block, xin, use_reentrant=False).sum().backward()
    got = [p.grad.clone() for p in block.parameters()] + [xin.grad.clone()]
    print(f"checkpoint_same {all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ref, got))}")
    block.zero_grad()
    xin.grad = None
    checkpoint_sequential(block, 2, xin, use_reentrant=False).sum().backward()
    print(
        f"checkpoint_seq_same {all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ref, [p.grad for p in block.parameters()] + [xin.grad]))}"
    )


if __name__ == "__main__":
    main()
