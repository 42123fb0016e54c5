# ruff: noqa: E501
"""Linear/MLP regression with torch.func: per-sample gradients with vmap(grad),
functional_call, jacobians, hessians, jvp/vjp and model ensembling with stack_module_state."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stack_module_state,
    vjp,
    vmap,
)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x))).squeeze(-1)


def det_init(model, phase=0.0):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                (torch.sin(torch.arange(n, dtype=torch.float32) * 0.83 + i + phase) * 0.4).view_as(
                    p
                )
            )


def main():
    torch.manual_seed(0)
    model = MLP()
    det_init(model)
    x = torch.linspace(-1, 1, 30).reshape(10, 3)
    y = torch.sin(x).sum(-1)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_one(p, b, xi, yi):
        pred = functional_call(model, (p, b), (xi.unsqueeze(0),))
        return F.mse_loss(pred, yi.unsqueeze(0))

    per_sample = vmap(grad(loss_one), in_dims=(None, None, 0, 0))(params, buffers, x, y)
    print(f"per_sample_shapes {[tuple(v.shape) for v in per_sample.values()]}")
    loop = []
    for i in range(x.size(0)):
        model.zero_grad()
        F.mse_loss(model(x[i : i + 1]), y[i : i + 1]).backward()
        loop.append(model.fc1.weight.grad.clone())
    print(f"matches_loop {torch.allclose(per_sample['fc1.weight'], torch.stack(loop), atol=1e-6)}")
    print(
        f"grad_norms {[round(v, 5) for v in per_sample['fc2.weight'].flatten(1).norm(dim=1).tolist()[:4]]}"
    )
    # Clipped, noised-free DP-SGD style aggregation.
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
    factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
    agg = {k: torch.einsum("i,i...->...", factor, g) / x.size(0) for k, g in per_sample.items()}
    print(f"clipped_agg_fc2 {agg['fc2.bias'].item():.6f}")

    g, v = grad_and_value(lambda p: F.mse_loss(functional_call(model, p, (x,)), y))(params)
    print(f"grad_and_value {v.item():.6f} {g['fc2.bias'].item():.6f}")

    f = lambda t: torch.sin(t) * t.pow(2)  # noqa: E731
    t = torch.tensor([0.3, -0.7, 1.2])
    J = jacrev(f)(t)
    print(
        f"jacrev_diag {[round(v, 5) for v in J.diagonal().tolist()]} offdiag_zero {bool((J - torch.diag(J.diagonal())).abs().max() == 0)}"
    )
    print(f"jacfwd_eq {torch.allclose(jacfwd(f)(t), J)}")
    H = hessian(lambda t: (t.pow(3) * torch.tensor([1.0, 2.0, 3.0])).sum() + t[0] * t[1])(t)
    print(f"hessian {[[round(v, 4) for v in row] for row in H.tolist()]}")
    out, tangent = jvp(f, (t,), (torch.ones(3),))
    print(f"jvp {[round(v, 5) for v in tangent.tolist()]}")
    out, vjp_fn = vjp(f, t)
    print(f"vjp {[round(v, 5) for v in vjp_fn(torch.ones(3))[0].tolist()]}")
    batched_jac = vmap(jacrev(f))(torch.stack([t, 2 * t]))
    print(f"batched_jac_shape {tuple(batched_jac.shape)}")

    # Ensembling: one call runs several copies of the model.
    models = [MLP() for _ in range(4)]
    for k, m in enumerate(models):
        det_init(m, phase=float(k))
    stacked_p, stacked_b = stack_module_state(models)
    base = copy.deepcopy(models[0])

    def call(p, b, xx):
        return functional_call(base, (p, b), (xx,))

    ens = vmap(call, in_dims=(0, 0, None))(stacked_p, stacked_b, x)
    ref = torch.stack([m(x) for m in models])
    print(f"ensemble_shape {tuple(ens.shape)} matches {torch.allclose(ens, ref, atol=1e-6)}")

    # Train the regression with the functional gradients.
    p = {k: v.clone() for k, v in params.items()}
    for step in range(100):
        gr = grad(lambda q: F.mse_loss(functional_call(model, q, (x,)), y))(p)
        p = {k: p[k] - 0.1 * gr[k] for k in p}
    final = F.mse_loss(functional_call(model, p, (x,)), y).item()
    print(f"final_mse {final:.6f}")
    print(f"vmap_chunk {torch.allclose(vmap(f, chunk_size=2)(x), f(x))}")
    print(
        f"vmap_out_dims {tuple(vmap(lambda r: r.sum(0, keepdim=True), in_dims=1, out_dims=1)(x).shape)}"
    )


if __name__ == "__main__":
    main()
