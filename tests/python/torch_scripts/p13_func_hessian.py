"""Second-order tools: torch.func.hessian / jacfwd / jacrev over a model's parameters, vmap of
per-sample Hessians, hvp, and a custom Function with setup_context used under vmap/jacrev."""

import torch
import torch.nn as nn
from torch.func import functional_call, hessian, jacfwd, jacrev, vmap


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.8, 0.9, p.numel()).reshape(p.shape) * (1 + 0.2 * i))
params = {k: v.detach() for k, v in model.named_parameters()}
x = torch.linspace(-1, 1, 15).reshape(5, 3)
y = torch.linspace(0, 1, 5).reshape(5, 1)


def loss_fn(p, xb, yb):
    return ((functional_call(model, p, (xb,)) - yb) ** 2).mean()


g = jacrev(loss_fn)(params, x, y)
print("grad_keys", sorted(g))
print("grad_w2", r(g["2.weight"]))

# Hessian w.r.t. the last layer only (a dict in, nested dict out)
last = {k: params[k] for k in ("2.weight", "2.bias")}
rest = {k: params[k] for k in params if k not in last}


def loss_last(pl):
    return loss_fn({**rest, **pl}, x, y)


H = hessian(loss_last)(last)
print("hess_ww_shape", tuple(H["2.weight"]["2.weight"].shape))
print("hess_wb", r(H["2.weight"]["2.bias"]))
print("hess_bb", r(H["2.bias"]["2.bias"]))
# compare with jacfwd(jacrev)
H2 = jacfwd(jacrev(loss_last))(last)
print(
    "fwd_rev_same", torch.allclose(H["2.weight"]["2.weight"], H2["2.weight"]["2.weight"], atol=1e-6)
)

# per-sample input Hessians of the network output
f = lambda xi: model(xi).squeeze()  # noqa: E731
Hx = vmap(hessian(f))(x)
print("per_sample_hess_shape", tuple(Hx.shape))
print("per_sample_trace", r(Hx.diagonal(dim1=-2, dim2=-1).sum(-1)))
print("symmetric", torch.allclose(Hx, Hx.transpose(-1, -2), atol=1e-6))

# Hessian-vector product two ways
v = torch.linspace(0.1, 0.5, 4).reshape(1, 4)
_, hvp_fn = torch.autograd.functional.vhp(
    lambda w: loss_last({"2.weight": w, "2.bias": last["2.bias"]}), last["2.weight"], v
)
print("vhp", r(hvp_fn))
Hww = H["2.weight"]["2.weight"].reshape(4, 4)
print("vhp_matches", torch.allclose(hvp_fn.flatten(), Hww @ v.flatten(), atol=1e-6))


class Cube(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


z = torch.linspace(-1, 1, 6)
print("cube_vmap_grad", r(vmap(jacrev(Cube.apply))(z)))
print("cube_jac_diag", r(torch.func.jacrev(Cube.apply)(z).diagonal()))
zz = z.clone().requires_grad_()
Cube.apply(zz).sum().backward()
print("cube_backward", r(zz.grad))
