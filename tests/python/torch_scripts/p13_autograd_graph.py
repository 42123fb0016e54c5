"""Autograd graph tooling: Node prehooks/hooks and next_functions, allow_mutation_on_saved_tensors,
gradcheck fast mode, batched-grad checks and a custom Function whose backward is wrong."""

import torch
from torch.autograd.graph import allow_mutation_on_saved_tensors


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


# node hooks: a prehook scales the incoming gradient, a post hook sees both sides
y = torch.linspace(1, 2, 3, requires_grad=True)
z = y.sin()
node = z.grad_fn
log = []
node.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))
node.register_hook(
    lambda grad_inputs, grad_outputs: log.append((r(grad_inputs[0]), r(grad_outputs[0])))
)
z.sum().backward()
print("node_name", node.name())
print("node_hook_in", log[0][0])
print("node_hook_out", log[0][1])
print("y_grad", r(y.grad))
print("next_fn", [type(f).__name__ if f is not None else None for f, _ in node.next_functions])

# mutation of a saved tensor is fine inside the context (a copy is saved)
with allow_mutation_on_saved_tensors():
    w = torch.linspace(0.1, 0.4, 4, requires_grad=True)
    s = w.clone()
    prod = s * s
    s.mul_(2)
    prod.sum().backward()
print("mutation_ok_grad", r(w.grad))
w2 = torch.linspace(0.1, 0.4, 4, requires_grad=True)
s2 = w2.clone()
prod2 = s2 * s2
s2.mul_(2)
try:
    prod2.sum().backward()
except RuntimeError as e:
    print("mutation_error", "modified by an inplace operation" in str(e))


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.save_for_backward(t)
        ctx.limit = limit
        return t * limit

    @staticmethod
    def backward(ctx, grad):
        (t,) = ctx.saved_tensors
        return grad * (1 - t * t), None


inp = torch.linspace(-2, 2, 5, dtype=torch.float64, requires_grad=True)
print(
    "gradcheck_fast",
    torch.autograd.gradcheck(lambda v: SoftClip.apply(v, 1.5), (inp,), fast_mode=True),
)
print(
    "gradcheck_batched",
    torch.autograd.gradcheck(lambda v: torch.tanh(v) * 2, (inp,), check_batched_grad=True),
)
print("gradgradcheck", torch.autograd.gradgradcheck(lambda v: torch.tanh(v) * v, (inp,)))
bad = torch.linspace(-1, 1, 3, dtype=torch.float64, requires_grad=True)


class WrongGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


print("gradcheck_catches", torch.autograd.gradcheck(WrongGrad.apply, (bad,), raise_exception=False))
