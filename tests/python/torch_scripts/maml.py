# ruff: noqa: E501
"""Model-agnostic meta-learning on sine-wave regression tasks: inner-loop adaptation with
torch.autograd.grad(create_graph=True) and torch.func.functional_call on a dict of fast
weights, second-order meta-gradients into Adam, first-order MAML, the same inner step
batched over tasks with torch.func (grad + vmap), and Reptile's parameter interpolation."""

import copy
import math
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


def det_init(module, scale=0.5):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            k = torch.arange(n, dtype=torch.float32)
            p.copy_((torch.sin(k * 0.91 + 0.017 * k * k + i) * scale).view_as(p))


def make_net():
    net = nn.Sequential(
        OrderedDict(
            [
                ("l1", nn.Linear(1, 32)),
                ("a1", nn.ReLU()),
                ("l2", nn.Linear(32, 32)),
                ("a2", nn.ReLU()),
                ("out", nn.Linear(32, 1)),
            ]
        )
    )
    det_init(net)
    return net


def task(i, k=10):
    amp = 0.5 + (i * 0.37) % 4.5
    phase = (i * 0.61) % math.pi
    xs = torch.linspace(-5, 5, 2 * k).view(-1, 1)
    ys = amp * torch.sin(xs + phase)
    return xs[0::2], ys[0::2], xs[1::2], ys[1::2]


def inner_adapt(net, params, x, y, steps=1, lr=0.01, first_order=False):
    for _ in range(steps):
        loss = F.mse_loss(functional_call(net, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=not first_order)
        params = OrderedDict((name, p - lr * g) for (name, p), g in zip(params.items(), grads))
    return params


def main():
    torch.manual_seed(0)
    net = make_net()
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for it in range(30):
        meta_opt.zero_grad()
        meta_loss = 0.0
        for t in range(4):
            xs, ys, xq, yq = task(it * 4 + t)
            fast = inner_adapt(net, OrderedDict(net.named_parameters()), xs, ys)
            meta_loss = meta_loss + F.mse_loss(functional_call(net, fast, (xq,)), yq)
        meta_loss = meta_loss / 4
        meta_loss.backward()
        meta_opt.step()
        if it in (0, 29):
            print(
                f"maml_iter{it} {meta_loss.item():.5f} grad_norm {sum(p.grad.norm() ** 2 for p in net.parameters()).sqrt().item():.5f}"
            )

    xs, ys, xq, yq = task(1000)
    base_loss = F.mse_loss(net(xq), yq).item()
    fast = inner_adapt(net, OrderedDict(net.named_parameters()), xs, ys, steps=5)
    print(
        f"adapt_test before {base_loss:.5f} after {F.mse_loss(functional_call(net, fast, (xq,)), yq).item():.5f}"
    )

    # Second-order vs first-order meta-gradient on one task.
    p0 = OrderedDict(net.named_parameters())
    xs, ys, xq, yq = task(7)
    so = torch.autograd.grad(
        F.mse_loss(functional_call(net, inner_adapt(net, p0, xs, ys, lr=0.1), (xq,)), yq),
        list(p0.values()),
    )
    fo_params = inner_adapt(net, p0, xs, ys, lr=0.1, first_order=True)
    fo = torch.autograd.grad(
        F.mse_loss(functional_call(net, fo_params, (xq,)), yq), list(p0.values())
    )
    print(
        f"second_order_norm {torch.cat([g.flatten() for g in so]).norm().item():.5f} first_order_norm {torch.cat([g.flatten() for g in fo]).norm().item():.5f} differ {not all(torch.allclose(a, b) for a, b in zip(so, fo))}"
    )

    # The inner step for many tasks at once with torch.func.
    params = {k: v.detach() for k, v in net.named_parameters()}

    def loss_fn(p, x, y):
        return F.mse_loss(functional_call(net, p, (x,)), y)

    def adapt(p, x, y):
        g = grad(loss_fn)(p, x, y)
        return {k: p[k] - 0.01 * g[k] for k in p}

    tasks = [task(i) for i in range(5)]
    X = torch.stack([t[0] for t in tasks])
    Y = torch.stack([t[1] for t in tasks])
    XQ = torch.stack([t[2] for t in tasks])
    YQ = torch.stack([t[3] for t in tasks])
    adapted = vmap(adapt, in_dims=(None, 0, 0))(params, X, Y)
    q_losses = vmap(loss_fn, in_dims=(0, 0, 0))(adapted, XQ, YQ)
    loop = torch.stack([loss_fn(adapt(params, X[i], Y[i]), XQ[i], YQ[i]) for i in range(5)])
    print(
        f"vmap_adapt {tuple(adapted['l1.weight'].shape)} matches_loop {torch.allclose(q_losses, loop, atol=1e-5)} mean {q_losses.mean().item():.5f}"
    )

    # Reptile: move the initialization toward task-adapted weights.
    reptile = make_net()
    for it in range(10):
        xs, ys, _, _ = task(it)
        clone = copy.deepcopy(reptile)
        opt = torch.optim.SGD(clone.parameters(), lr=0.02)
        for _ in range(5):
            opt.zero_grad()
            F.mse_loss(clone(xs), ys).backward()
            opt.step()
        with torch.no_grad():
            for p, q in zip(reptile.parameters(), clone.parameters()):
                p.add_(q - p, alpha=0.5)
    xs, ys, xq, yq = task(3)
    print(
        f"reptile_query {F.mse_loss(reptile(xq), yq).item():.5f} l1_bias_mean {reptile.l1.bias.mean().item():.6f}"
    )


if __name__ == "__main__":
    main()
