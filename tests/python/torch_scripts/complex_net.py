"""Complex-valued learning: a complex linear layer (cfloat weights) trained by Adam on a
frequency-domain system identification task, with complex autograd (conjugate Wirtinger
gradients), abs/angle/conj/real/imag views, view_as_real/view_as_complex, torch.polar, complex
matmul/einsum, a complex nn.Linear(dtype=torch.cfloat), and printing of complex tensors."""

import math

import torch
import torch.nn as nn


class ComplexLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        re = torch.sin(torch.arange(n_out * n_in, dtype=torch.float32)).view(n_out, n_in) * 0.3
        im = (
            torch.cos(torch.arange(n_out * n_in, dtype=torch.float32) * 1.7).view(n_out, n_in) * 0.3
        )
        self.weight = nn.Parameter(torch.complex(re, im))
        self.bias = nn.Parameter(torch.zeros(n_out, dtype=torch.cfloat))

    def forward(self, x):
        return x @ self.weight.T + self.bias


def modrelu(z, b):
    mag = z.abs()
    return torch.polar(torch.relu(mag + b), z.angle())


def main():
    z = torch.complex(torch.tensor([1.0, -2.0, 0.0]), torch.tensor([0.5, 1.0, -3.0]))
    print("print", z)
    print("dtype", z.dtype, z.real.dtype, z.is_complex(), torch.is_complex(z.real))
    print(
        "abs_angle",
        [round(v, 5) for v in z.abs().tolist()],
        [round(v, 5) for v in z.angle().tolist()],
    )
    # (ember conjugates eagerly: is_conj() of z.conj() is where it differs, so it is not printed)
    print("conj", z.conj(), z.conj().resolve_conj().is_conj(), z.conj().conj().equal(z))
    v = torch.view_as_real(z)
    print("view_as_real", tuple(v.shape), v.stride(), v.data_ptr() == z.data_ptr())
    z.real[0] = 10.0
    print("real_view_write", z[0])
    print("view_as_complex", torch.view_as_complex(torch.tensor([[1.0, 2.0], [3.0, 4.0]])))
    print(
        "scalar_mix", (z * 1j)[:2], (z + 2).dtype, (torch.ones(2, dtype=torch.float64) * 1j).dtype
    )
    print("polar", torch.polar(torch.tensor([2.0]), torch.tensor([math.pi / 2])))
    a = torch.complex(torch.eye(2), torch.ones(2, 2))
    print("matmul", a @ a)
    print("einsum", torch.einsum("ij,jk->ik", a, a.conj()))
    print("sum_mean", a.sum(), a.mean())
    print("item", complex(a[0, 1]), a[0, 0].item())

    # complex autograd: d|w x - y|^2 / dw* convention
    w = torch.tensor(1.0 + 1.0j, requires_grad=True)
    x = torch.tensor(2.0 - 1.0j)
    loss = (w * x - (1.0 + 0.0j)).abs() ** 2
    loss.backward()
    print("wirtinger_grad", w.grad)
    u = torch.tensor([1.0 + 2.0j, -0.5 + 0.5j], requires_grad=True)
    (u.conj() * u).real.sum().backward()
    print("grad_abs2", u.grad)

    # frequency-domain system identification: find H with Y = X H
    n_in, n_out, n = 4, 3, 32
    t = torch.arange(n * n_in, dtype=torch.float32).view(n, n_in)
    X = torch.polar(1 + 0.5 * torch.sin(t * 0.3), t * 0.7)
    H_true = torch.complex(
        torch.cos(torch.arange(n_out * n_in, dtype=torch.float32) * 0.9),
        torch.sin(torch.arange(n_out * n_in, dtype=torch.float32) * 0.4),
    ).view(n_out, n_in)
    Y = X @ H_true.T
    layer = ComplexLinear(n_in, n_out)
    opt = torch.optim.Adam(layer.parameters(), lr=0.05)
    hist = []
    for _ in range(60):
        opt.zero_grad()
        err = layer(X) - Y
        loss = (err.abs() ** 2).mean()
        loss.backward()
        opt.step()
        hist.append(loss.item())
    print(f"sysid loss {hist[0]:.5f} -> {hist[-1]:.6f}")
    print(f"grad_dtype {layer.weight.grad.dtype} state {opt.state[layer.weight]['exp_avg'].dtype}")
    lin = nn.Linear(4, 2, dtype=torch.cfloat)
    print("nn_linear_cfloat", lin.weight.dtype, lin(X[:1]).shape)
    out = modrelu(layer(X[:2]), -0.1)
    print("modrelu", [round(v, 5) for v in out.abs().flatten().tolist()])
    print("cdouble", torch.zeros(2, dtype=torch.cdouble), torch.tensor(1 + 2j))


if __name__ == "__main__":
    main()
