# ruff: noqa: E501
"""Model ensembling and functional training with torch.func: stack_module_state, vmap over
functional_call with in_dims for shared or per-model batches, grad / grad_and_value with
has_aux, jacrev / jacfwd / hessian of a functional model, vjp and linearize, vmap with
out_dims, chunk_size and randomness='different', and an SGD step written on parameter dicts."""

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
    linearize,
    stack_module_state,
    vjp,
    vmap,
)


def r(t, n=4):
    return round(float(t), n)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def det_init(m, phase):
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.61 + i + phase).view_as(
                    p
                )
                * 0.4
            )
    return m


models = [det_init(MLP(), k) for k in range(3)]
params, buffers = stack_module_state(models)
print(
    "stacked", sorted(params), tuple(params["fc1.weight"].shape), params["fc1.weight"].requires_grad
)
base = copy.deepcopy(models[0]).to("meta")
x = torch.cos(torch.arange(20, dtype=torch.float32) * 0.7).view(5, 4)


def fmodel(p, b, x):
    return functional_call(base, (p, b), (x,))


shared = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
print(
    "ensemble_shared",
    tuple(shared.shape),
    r(shared.sum()),
    torch.allclose(shared[1], models[1](x), atol=1e-6),
)
xs = torch.stack([x, x * 2, x - 1])
per = vmap(fmodel)(params, buffers, xs)
print("ensemble_per_model", tuple(per.shape), torch.allclose(per[2], models[2](x - 1), atol=1e-6))
print(
    "vmap_out_dims", tuple(vmap(fmodel, in_dims=(0, 0, None), out_dims=1)(params, buffers, x).shape)
)
print(
    "vmap_chunk",
    torch.allclose(vmap(lambda row: models[0](row), chunk_size=2)(x), models[0](x), atol=1e-6),
)

m = models[0]
p0 = {k: v.detach() for k, v in m.named_parameters()}
y = torch.tensor([0, 2, 1, 1, 0])


def loss_fn(p, x, y):
    out = functional_call(m, p, (x,))
    return F.cross_entropy(out, y), out


g, out = grad(loss_fn, has_aux=True)(p0, x, y)
(gv, (lv, _)) = grad_and_value(loss_fn, has_aux=True)(p0, x, y)
print(
    "func_grad",
    sorted(g),
    r(g["fc1.weight"].abs().sum()),
    r(lv),
    torch.allclose(gv["fc2.bias"], g["fc2.bias"]),
)
ref = m(x)
F.cross_entropy(ref, y).backward()
print("matches_autograd", torch.allclose(m.fc1.weight.grad, g["fc1.weight"], atol=1e-6))
psg = vmap(
    grad(lambda p, xi, yi: loss_fn(p, xi.unsqueeze(0), yi.unsqueeze(0))[0]), in_dims=(None, 0, 0)
)(p0, x, y)
print(
    "per_sample",
    tuple(psg["fc2.weight"].shape),
    torch.allclose(psg["fc2.weight"].mean(0), g["fc2.weight"], atol=1e-6),
)
new = {k: v - 0.1 * g[k] for k, v in p0.items()}
print("sgd_step", r(loss_fn(new, x, y)[0]), "<", r(lv))

f = lambda v: torch.sin(v) * v.sum()  # noqa: E731
v = torch.tensor([0.3, -0.5, 1.2])
jr, jf = jacrev(f)(v), jacfwd(f)(v)
print("jac", torch.allclose(jr, jf, atol=1e-6), r(jr.sum()), r(jr.diagonal().sum()))
print(
    "jac_argnums",
    [tuple(t.shape) for t in jacrev(lambda a, b: a * b.sum(), argnums=(0, 1))(v, torch.ones(2))],
)
H = hessian(lambda v: (v**3).sum() + v.prod())(v)
print("hess", [r(t, 4) for t in H.flatten().tolist()])
out, fn = vjp(f, v)
print("vjp", [r(t) for t in fn(torch.ones(3))[0].tolist()])
o2, jvp_fn = linearize(f, v)
print(
    "linearize",
    [r(t) for t in jvp_fn(torch.tensor([1.0, 0.0, 0.0])).tolist()],
    torch.allclose(o2, f(v)),
)
print(
    "jac_model",
    tuple(jacrev(lambda xi: m(xi))(x[0]).shape),
    r(jacrev(lambda xi: m(xi))(x[0]).sum()),
)
print("hess_model_loss", tuple(hessian(lambda xi: m(xi).logsumexp(-1))(x[0]).shape))
rs = vmap(lambda t: t + torch.rand(1), randomness="different")(torch.zeros(4, 1))
print("rng_different", rs.flatten().tolist())
print(
    "randomness_same",
    vmap(lambda t: t + torch.rand(1), randomness="same")(torch.zeros(4, 1)).unique().numel(),
)
try:
    vmap(lambda t: t + torch.rand(1))(torch.zeros(4, 1))
except RuntimeError as e:
    print("randomness_error", str(e)[:80])
print("vmap_nested", tuple(vmap(vmap(torch.dot))(torch.ones(2, 3, 4), torch.ones(2, 3, 4)).shape))
print(
    "vmap_kw_in_dims",
    tuple(vmap(lambda a, b: a @ b, in_dims=(1, None))(torch.ones(3, 5, 2), torch.ones(2)).shape),
)
