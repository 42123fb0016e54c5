"""Forward-mode AD: dual numbers (torch.autograd.forward_ad), a custom Function with jvp, forward
AD through a module with functional_call, torch.func.jvp / grad / grad_and_value / vjp, and
autograd.functional.jvp / jacobian with both strategies."""

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
from torch.func import functional_call, grad, grad_and_value, jacfwd, jvp, vjp


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


x = torch.linspace(-1.0, 1.0, 6)
tangent = torch.linspace(0.5, 1.5, 6)

with fwAD.dual_level():
    dual = fwAD.make_dual(x, tangent)
    y = torch.sin(dual) * dual.exp() + dual.pow(2).sum()
    primal, tan = fwAD.unpack_dual(y)
    print("dual_primal", r(primal))
    print("dual_tangent", r(tan))
    print("unpacked_type", type(fwAD.unpack_dual(y)).__name__, fwAD.unpack_dual(x).tangent is None)
    z = fwAD.unpack_dual(torch.tanh(dual) @ dual).tangent
    print("matvec_tangent", round(z.item(), 5))


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        ctx.save_for_forward(inp)
        return inp**3

    @staticmethod
    def backward(ctx, g):
        (inp,) = ctx.saved_tensors
        return 3 * inp**2 * g

    @staticmethod
    def jvp(ctx, t):
        (inp,) = ctx.saved_tensors
        return 3 * inp**2 * t


with fwAD.dual_level():
    out = Cube.apply(fwAD.make_dual(x, tangent))
    print("cube_jvp", r(fwAD.unpack_dual(out).tangent))
xr = x.clone().requires_grad_()
Cube.apply(xr).sum().backward()
print("cube_grad", r(xr.grad))

# forward AD through a module: directional derivative w.r.t. the parameters
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 4)
inp = torch.linspace(-1, 1, 15).reshape(5, 3)
params = {k: v.detach() for k, v in model.named_parameters()}
directions = {k: torch.ones_like(v) * 0.1 for k, v in params.items()}
with fwAD.dual_level():
    duals = {k: fwAD.make_dual(v, directions[k]) for k, v in params.items()}
    out = functional_call(model, duals, (inp,))
    print("param_jvp", r(fwAD.unpack_dual(out).tangent))


def f(p, data):
    return functional_call(model, p, (data,)).pow(2).mean()


primal_out, jvp_out = jvp(lambda p: f(p, inp), (params,), (directions,))
print("func_jvp", round(primal_out.item(), 5), round(jvp_out.item(), 5))
g = grad(f)(params, inp)
print("func_grad_keys", sorted(g))
print("func_grad_w0", r(g["0.weight"]))
gv, val = grad_and_value(f)(params, inp)
print("grad_and_value", round(val.item(), 5), round(sum(v.sum() for v in gv.values()).item(), 5))
# consistency: the jvp equals <grad, direction>
print("jvp_vs_grad", round(sum((g[k] * directions[k]).sum() for k in g).item(), 5))


def loss_aux(w, b):
    pred = inp @ w + b
    return pred.square().mean(), pred.detach().max()


(gw, gb), aux = grad(loss_aux, argnums=(0, 1), has_aux=True)(
    torch.linspace(-1, 1, 3), torch.tensor(0.3)
)
print("argnums_aux", r(gw), round(gb.item(), 5), round(aux.item(), 5))

out, vjp_fn = vjp(lambda a: torch.cumsum(a, 0) * a, x)
print("vjp", r(out), r(vjp_fn(torch.ones(6))[0]))
print("jacfwd", r(jacfwd(lambda a: a.sin() * a.sum())(x[:3])))


def fn(a, b):
    return a * b.exp(), (a + b).sin()


va, vb = torch.linspace(0.1, 0.6, 3), torch.linspace(-0.3, 0.3, 3)
outs, jv = torch.autograd.functional.jvp(fn, (va, vb), (torch.ones(3), torch.zeros(3)))
print("functional_jvp", r(jv[0]), r(jv[1]))
for strategy in ("reverse-mode", "forward-mode"):
    jac = torch.autograd.functional.jacobian(
        fn, (va, vb), strategy=strategy, vectorize=strategy == "forward-mode"
    )
    print("jacobian", strategy, r(jac[0][1]), r(jac[1][0]))
