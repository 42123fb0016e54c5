# ruff: noqa: E501
"""Extending autograd as the docs show: Functions with ctx.save_for_backward,
needs_input_grad, mark_non_differentiable, mark_dirty, set_materialize_grads,
once_differentiable, the setup_context style, non-tensor arguments, double backward,
gradcheck / gradgradcheck, and a custom Function inside a module trained by SGD."""

import torch
import torch.nn as nn
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.autograd.function import once_differentiable


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class MyCube(Function):
    @staticmethod
    def forward(ctx, x):
        result = x**3
        dx = 3 * x**2
        ctx.save_for_backward(x, dx)
        return result, dx

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_output * dx + grad_dx * 6 * x


class SortWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g, _g_idx):
        (idx,) = ctx.saved_tensors
        grad = torch.zeros_like(g)
        grad.scatter_(0, idx, g)
        return grad


class InplaceDouble(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


class ClampGrad(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.lo, ctx.hi = lo, hi
        ctx.set_materialize_grads(False)
        return x.view_as(x), x * 0

    @staticmethod
    @once_differentiable
    def backward(ctx, g, g2):
        if g is None:
            return None, None, None
        return g.clamp(ctx.lo, ctx.hi), None, None


class StraightThroughSign(Function):
    @staticmethod
    def forward(ctx, x):
        return x.sign()

    @staticmethod
    def backward(ctx, g):
        return g


class MyLinear(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.weight = nn.Parameter(
            torch.cos(torch.arange(i * o, dtype=torch.float32)).view(o, i) * 0.3
        )
        self.bias = nn.Parameter(torch.zeros(o))

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


def main():
    torch.manual_seed(0)
    inp = (
        torch.linspace(-1, 1, 20, dtype=torch.double).view(4, 5).requires_grad_(),
        torch.linspace(0, 2, 15, dtype=torch.double).view(3, 5).requires_grad_(),
        torch.tensor([0.1, -0.2, 0.3], dtype=torch.double, requires_grad=True),
    )
    print(f"gradcheck_linear {gradcheck(LinearFunction.apply, inp, eps=1e-6, atol=1e-4)}")
    print(f"gradgradcheck_linear {gradgradcheck(LinearFunction.apply, inp)}")
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = MulConstant.apply(x, 2.5)
    y.sum().backward()
    print(f"mul_constant {y.tolist()} grad {x.grad.tolist()} fn {type(y.grad_fn).__name__}")
    x = torch.tensor([0.5, -1.5], dtype=torch.double, requires_grad=True)
    print(f"gradcheck_cube {gradcheck(lambda t: MyCube.apply(t), (x,))}")
    out, dx = MyCube.apply(x)
    (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    print(f"cube_grad {g.tolist()} second {gg.tolist()}")
    x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
    vals, idx = SortWithIndex.apply(x)
    print(f"sort_idx_requires_grad {idx.requires_grad} {idx.tolist()}")
    (vals * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
    print(f"sort_grad {x.grad.tolist()}")
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    c = InplaceDouble.apply(b)
    print(f"dirty_same_object {c is b} version_bumped {b._version > 0}")
    c.sum().backward()
    print(f"dirty_grad {a.grad.tolist()}")
    x = torch.tensor([-5.0, 0.2, 5.0], requires_grad=True)
    y1, y2 = ClampGrad.apply(x, -1.0, 1.0)
    (y1 * torch.tensor([3.0, 0.5, -4.0])).sum().backward()
    print(f"clamp_grad {x.grad.tolist()}")
    try:
        x2 = torch.tensor([1.0], requires_grad=True)
        o, _ = ClampGrad.apply(x2, -1.0, 1.0)
        (g,) = torch.autograd.grad(o.sum(), x2, create_graph=True)
        g.sum().backward()
        print("once_differentiable no_error")
    except RuntimeError as e:
        print(f"once_differentiable_error {'trying to differentiate twice' in str(e)}")

    # A custom function inside a model.
    model = nn.Sequential(MyLinear(4, 6), nn.Tanh(), MyLinear(6, 1))
    ref = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    with torch.no_grad():
        for p, q in zip(ref.parameters(), model.parameters()):
            p.copy_(q)
    X = torch.linspace(-1, 1, 32).view(8, 4)
    Y = X.pow(2).sum(1, keepdim=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.5)
    for step in range(30):
        for m, o in ((model, opt), (ref, opt_ref)):
            o.zero_grad()
            loss = nn.functional.mse_loss(m(X), Y)
            loss.backward()
            o.step()
    print(f"custom_vs_builtin {torch.allclose(model(X), ref(X), atol=1e-5)} loss {loss.item():.6f}")
    # Straight-through estimator for a binarized layer.
    w = torch.tensor([0.3, -0.2, 0.0, 0.7], requires_grad=True)
    out = (StraightThroughSign.apply(w) * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum()
    out.backward()
    print(f"ste {out.item()} grad {w.grad.tolist()}")
    # Errors people hit.
    try:
        LinearFunction.apply(
            torch.ones(2, 3, requires_grad=True), torch.ones(4, 3), None
        ).sum().backward()
        print("linear_no_bias ok")
    except Exception as e:  # noqa: BLE001
        print(f"linear_no_bias {type(e).__name__}")
    bad = torch.tensor([0.5, 1.0], dtype=torch.double, requires_grad=True)

    class WrongGrad(Function):
        @staticmethod
        def forward(ctx, t):
            return t * t

        @staticmethod
        def backward(ctx, g):
            return g

    print(f"gradcheck_wrong {gradcheck(WrongGrad.apply, (bad,), raise_exception=False)}")
    try:
        gradcheck(WrongGrad.apply, (bad,))
    except Exception as e:  # noqa: BLE001
        print(f"gradcheck_raises {type(e).__name__} {'Jacobian mismatch' in str(e)}")


if __name__ == "__main__":
    main()
