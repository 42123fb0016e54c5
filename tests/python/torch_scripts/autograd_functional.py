# ruff: noqa: E501
"""torch.autograd.functional and forward-mode AD as optimisation and physics code use them:
jacobian of tuple inputs and outputs (reverse, vectorized, forward-mode), hessian, vjp/jvp/hvp/vhp
with create_graph, autograd.grad with grad_outputs / allow_unused / materialize_grads, backward
with inputs=, retain_grad, and dual numbers from torch.autograd.forward_ad."""

import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def f(x):
    return torch.stack([x[0] ** 2 * x[1], torch.sin(x[1]) + x[2].exp(), (x * x).sum()])


def rosen(x):
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def two_in(a, b):
    return a @ b, (a * 2).sum(0)


x = torch.tensor([0.5, -1.0, 0.25])
J = jacobian(f, x)
print("jac", [round(v, 5) for v in J.flatten().tolist()])
Jv = jacobian(f, x, vectorize=True)
Jf = jacobian(f, x, vectorize=True, strategy="forward-mode")
print("jac_agree", torch.allclose(J, Jv), torch.allclose(J, Jf))
a = torch.arange(6.0).view(2, 3) / 5
b = torch.arange(3.0).view(3, 1) - 1
Ja = jacobian(two_in, (a, b))
print("jac_tuple_types", type(Ja).__name__, len(Ja), type(Ja[0]).__name__, len(Ja[0]))
print("jac_tuple_shapes", [[tuple(t.shape) for t in row] for row in Ja])
print("jac_tuple_sum", [[round(t.sum().item(), 5) for t in row] for row in Ja])

H = hessian(rosen, torch.tensor([1.2, 0.8, 1.1]))
print("hessian", [round(v, 3) for v in H.flatten().tolist()])
Hv = hessian(
    rosen, torch.tensor([1.2, 0.8, 1.1]), vectorize=True, outer_jacobian_strategy="forward-mode"
)
print("hessian_fwd_agree", torch.allclose(H, Hv))
print("hessian_sym", torch.allclose(H, H.T))

v = torch.tensor([1.0, 0.0, -1.0])
out, g = vjp(f, x, v)
print("vjp", [round(t, 5) for t in out.tolist()], [round(t, 5) for t in g.tolist()])
out, jv = jvp(f, x, torch.tensor([0.0, 1.0, 0.0]))
print("jvp", [round(t, 5) for t in jv.tolist()])
val, hv = hvp(rosen, torch.tensor([1.2, 0.8, 1.1]), v)
val2, vh = vhp(rosen, torch.tensor([1.2, 0.8, 1.1]), v)
print("hvp", round(val.item(), 4), [round(t, 3) for t in hv.tolist()], torch.allclose(hv, vh))
xx = torch.tensor([0.3, 0.7, 0.1], requires_grad=True)
_, g2 = vjp(f, xx, v, create_graph=True)
g2.sum().backward()
print("vjp_create_graph", g2.requires_grad, [round(t, 5) for t in xx.grad.tolist()])
print("vjp_strict_none", vjp(lambda t: t.sum() * 0 + 1.0, x)[1].tolist())

w = torch.tensor([1.0, 2.0], requires_grad=True)
u = torch.tensor([3.0, 4.0], requires_grad=True)
z = torch.tensor([5.0], requires_grad=True)
y = (w * u).sum() + w.pow(3).sum()
gw, gz = torch.autograd.grad(y, [w, z], allow_unused=True, retain_graph=True)
print("grad_unused", gw.tolist(), gz)
gw2, gz2 = torch.autograd.grad(y, [w, z], materialize_grads=True, retain_graph=True)
print("grad_materialized", gz2.tolist())
vec = torch.autograd.grad(w * u, w, grad_outputs=torch.tensor([1.0, -1.0]))[0]
print("grad_outputs", vec.tolist())
y.backward(inputs=[u])
print("backward_inputs", u.grad.tolist(), w.grad)
mid = w * 2
mid.retain_grad()
(mid**2).sum().backward()
print("retain_grad", mid.grad.tolist(), w.grad.tolist(), mid.is_leaf, mid.grad_fn.name())
gg = torch.autograd.grad((w**3).sum(), w, create_graph=True)[0]
ggg = torch.autograd.grad(gg.sum(), w)[0]
print("double_grad", gg.tolist(), ggg.tolist())

primal = torch.tensor([0.5, 1.5])
tangent = torch.tensor([1.0, 0.0])
with fwAD.dual_level():
    dual = fwAD.make_dual(primal, tangent)
    out = torch.tanh(dual) * dual.exp() + dual.sum()
    p, t = fwAD.unpack_dual(out)
    print("fwd_primal", [round(v, 5) for v in p.tolist()])
    print("fwd_tangent", [round(v, 5) for v in t.tolist()])
    lin = torch.nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.5, -0.25]]))
        lin.bias.fill_(0.1)
    o = fwAD.unpack_dual(lin(dual.unsqueeze(0)))
    print("fwd_linear", round(o.primal.item(), 5), round(o.tangent.item(), 5))
    print("unpack_plain_tangent", fwAD.unpack_dual(primal).tangent)
