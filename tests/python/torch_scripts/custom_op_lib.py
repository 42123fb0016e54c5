# ruff: noqa: E501
"""A user-defined operator with torch.library.custom_op as the custom-ops tutorial writes it:
a numpy-backed kernel, register_fake for meta tensors, register_autograd with
setup_context, calling through torch.ops.<ns>, gradients against finite differences via
gradcheck, opcheck-free use inside a module and under torch.compile, plus a mutating op with
mutates_args and a Library fragment defining an op by schema."""

import numpy as np
import torch
from torch import Tensor
from torch.library import Library, custom_op


@custom_op("mylib::numpy_sin_scaled", mutates_args=())
def numpy_sin_scaled(x: Tensor, scale: float) -> Tensor:
    return torch.from_numpy(np.sin(x.numpy()) * scale)


@numpy_sin_scaled.register_fake
def _(x, scale):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, scale = inputs
    ctx.save_for_backward(x)
    ctx.scale = scale


def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * torch.cos(x) * ctx.scale, None


numpy_sin_scaled.register_autograd(backward, setup_context=setup_context)


@custom_op("mylib::add_inplace", mutates_args={"out"})
def add_inplace(x: Tensor, out: Tensor) -> None:
    out.copy_(out + x)


lib = Library("mylib2", "DEF")
lib.define("clamp_mul(Tensor x, float lo, float hi) -> Tensor")


def clamp_mul_impl(x, lo, hi):
    return x.clamp(lo, hi) * 2


lib.impl("clamp_mul", clamp_mul_impl, "CompositeExplicitAutograd")


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        with torch.no_grad():
            self.lin.weight.copy_(torch.linspace(-1, 1, 9).view(3, 3))
            self.lin.bias.fill_(0.1)

    def forward(self, x):
        return numpy_sin_scaled(self.lin(x), 2.0)


def main():
    x = torch.linspace(-1.5, 1.5, 6, requires_grad=True)
    y = torch.ops.mylib.numpy_sin_scaled(x, 0.5)
    y.sum().backward()
    print(f"forward {[round(v, 5) for v in y.tolist()]}")
    print(f"grad {[round(v, 5) for v in x.grad.tolist()]}")
    xd = torch.linspace(-1, 1, 4, dtype=torch.float64, requires_grad=True)
    print(f"gradcheck {torch.autograd.gradcheck(lambda t: numpy_sin_scaled(t, 1.5), (xd,))}")
    meta = numpy_sin_scaled(torch.empty(2, 3, device="meta"), 1.0)
    print(f"meta {meta.shape} {meta.device}")

    buf = torch.zeros(4)
    add_inplace(torch.arange(4.0), buf)
    torch.ops.mylib.add_inplace(torch.ones(4), buf)
    print(f"mutated {buf.tolist()}")
    print(
        f"schema_op {torch.ops.mylib2.clamp_mul(torch.tensor([-3.0, 0.5, 3.0]), -1.0, 1.0).tolist()}"
    )

    layer = Layer()
    inp = torch.linspace(0, 1, 6).view(2, 3)
    eager = layer(inp)
    compiled = torch.compile(layer)(inp)
    print(
        f"layer {[round(v, 5) for v in eager.flatten().tolist()]} compiled_same {torch.allclose(eager, compiled)}"
    )
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        loss = layer(inp).pow(2).mean()
        loss.backward()
        opt.step()
    print(f"trained_loss {loss.item():.5f} bias {[round(v, 5) for v in layer.lin.bias.tolist()]}")


if __name__ == "__main__":
    main()
