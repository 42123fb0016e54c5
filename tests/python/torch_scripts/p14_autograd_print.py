"""An autograd walkthrough that prints tensors as the tutorials do: each result shows its
grad_fn, so the node names of everyday ops (clamp, 1 - x, stack, repeat, reshape after a
transpose, tril, lerp, addcmul, the linalg factorizations, losses) are part of the output; then
the graph is walked through next_functions and gradients are checked."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_printoptions(precision=4)
x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3).requires_grad_()
w = torch.tensor([[0.5, -0.25, 1.0], [0.75, 0.1, -0.5]], requires_grad=True)

print("clamp", x.clamp(min=-0.5, max=0.5))
print("clamp_min", x.clamp_min(0.0))
print("clamp_t", torch.clamp(x, min=w))
print("relu_like", x.clamp(min=0))
print("rsub", 1 - x)
print("rsub_f", 0.5 - x * 2)
print("stack", torch.stack([x, w], dim=0).sum(0))
print("repeat", x[:, :1].repeat(1, 3))
print("tile", x.tile((1, 2)).shape, x.tile((1, 2)).grad_fn.name())
print("roll", torch.roll(x, 1))
print("reshape_t", x.t().reshape(6))
print("flatten_t", x.transpose(0, 1).flatten())
print("tril", torch.tril(x @ w.T))
print("triu", (x @ w.T).triu(1))
print("diag", (x @ w.T).diag())
print("trace", (x @ w.T).trace())
print("lerp", torch.lerp(x, w, 0.25))
print("lerp_t", torch.lerp(x, w, torch.full((2, 3), 0.25)))
print("addcmul", torch.addcmul(x, x, w, value=0.5))
print("addcdiv", torch.addcdiv(x, x, w.abs() + 1))
A = x @ x.T + torch.eye(2)
print("inv", torch.linalg.inv(A))
print("inverse", A.inverse())
print("det", torch.linalg.det(A), A.det())
print("slogdet", torch.linalg.slogdet(A).logabsdet)
print("solve", torch.linalg.solve(A, w))
print("cholesky", torch.linalg.cholesky(A))
U, S, Vh = torch.linalg.svd(w, full_matrices=False)
print("svd_S", S)
print("eigvalsh", torch.linalg.eigvalsh(A))
print("qr_R", torch.linalg.qr(w.T).R)
print("pinv", torch.linalg.pinv(w))
print("matrix_exp", torch.linalg.matrix_exp(A / 4))
print("xlogy", torch.xlogy(x.abs(), w.abs()))
print("logaddexp", torch.logaddexp(x, w))
print("std_mean", torch.std_mean(x, dim=1))
print("rot90", torch.rot90(x))
print("block_diag", torch.block_diag(x[:, :1], w[:1, :1]))
print("diag_embed", torch.diag_embed(x[0]))

# losses as printed by training loops
lin = nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(w)
    lin.bias.fill_(0.1)
print("linear_vec", lin(x[0]))
print("linear_mat", lin(x))
probs = torch.tensor([[0.2, 0.8], [0.6, 0.4]])
print("ce_probs", F.cross_entropy(lin(x), probs))
print("ce_probs_sum", F.cross_entropy(lin(x), probs, reduction="sum"))
print("ce_index", F.cross_entropy(lin(x), torch.tensor([1, 0])))
print("mse", F.mse_loss(lin(x), probs))

# walking the graph of a small network, as the autograd tutorial does
out = (torch.relu(lin(x)) * 2).sum().exp()
names = []
frontier = [out.grad_fn]
while frontier:
    node = frontier.pop(0)
    names.append(type(node).__name__)
    frontier.extend(n for n, _ in node.next_functions if n is not None)
print("graph", names)
out.backward()
print("grad_x", x.grad)
print("grad_lin", lin.weight.grad, lin.bias.grad)
x.grad = None
(torch.stack([x.clamp(0, 1), 1 - w]).sum() * 2).backward()
print("grad_stack", x.grad, w.grad)
x.grad = None
y = torch.linalg.solve(A, w).sum() + torch.linalg.det(A)
y.backward()
print("grad_solve_det", x.grad)
