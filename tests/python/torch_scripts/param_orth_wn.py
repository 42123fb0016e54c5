# ruff: noqa: E501
"""torch.nn.utils.parametrize as models use it: the orthogonal parametrization (matrix_exp,
cayley, householder) keeping a recurrent matrix orthogonal through training, the new
weight_norm (g and v as original0/original1), a user parametrization with right_inverse
(symmetric matrices), a chain of two, cached(), and removal that keeps the values."""

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
from torch.nn.utils.parametrizations import orthogonal, weight_norm


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, X):
        return X * self.s

    def right_inverse(self, A):
        return A / self.s


def det(shape, phase):
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float32) * 0.77 + phase) * 0.5).view(shape)


def orth_err(W):
    eye = torch.eye(W.shape[-1])
    return (W.T @ W - eye).abs().max().item()


def main():
    for i, kind in enumerate(["matrix_exp", "cayley", "householder"]):
        lin = nn.Linear(5, 5, bias=False)
        with torch.no_grad():
            lin.weight.copy_(torch.linalg.qr(det((5, 5), i) + torch.eye(5))[0])
        orthogonal(lin, orthogonal_map=kind)
        W0 = lin.weight.detach().clone()
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        x = det((8, 5), 3.0)
        for _ in range(10):
            loss = (lin(x) - x.flip(1)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(
            f"orth_{kind} err {orth_err(lin.weight) < 1e-5} moved {(lin.weight - W0).abs().max().item() > 1e-3} loss {loss.item():.5f}"
        )
        print(f"orth_{kind}_params {[n for n, _ in lin.named_parameters()]}")

    conv = nn.Conv1d(3, 4, 3)
    with torch.no_grad():
        conv.weight.copy_(det((4, 3, 3), 0.5))
        conv.bias.zero_()
    weight_norm(conv, name="weight", dim=0)
    names = sorted(conv.state_dict())
    g = conv.parametrizations.weight.original0
    v = conv.parametrizations.weight.original1
    print(f"wn_keys {names} g {tuple(g.shape)} v {tuple(v.shape)}")
    print(f"wn_g {[round(t, 5) for t in g.flatten().tolist()]}")
    print(f"wn_same {torch.allclose(conv.weight, det((4, 3, 3), 0.5), atol=1e-6)}")
    x = det((2, 3, 7), 1.0)
    opt = torch.optim.Adam(conv.parameters(), lr=0.05)
    for _ in range(5):
        loss = conv(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"wn_loss {loss.item():.5f} g_after {g.flatten()[:2].tolist()}")
    print(f"wn_grads {[p.grad is not None for p in conv.parameters()]}")

    m = nn.Linear(4, 4)
    with torch.no_grad():
        m.weight.copy_(det((4, 4), 2.0))
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale(2.0))
    print(
        f"sym {torch.equal(m.weight, m.weight.T)} parametrized {P.is_parametrized(m)} {P.is_parametrized(m, 'bias')}"
    )
    print(
        f"chain {[type(p).__name__ for p in m.parametrizations.weight]} orig {m.parametrizations.weight.original[0].tolist()}"
    )
    target = torch.diag(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    m.weight = target  # assignment goes through the right_inverse chain
    print(
        f"assigned {torch.allclose(m.weight, target)} orig_row {m.parametrizations.weight.original[1].tolist()}"
    )
    with P.cached():
        a = m.weight
        b = m.weight
        print(f"cached_same {a is b}")
    print(f"uncached_same {m.weight is m.weight}")
    out = m(torch.ones(1, 4))
    out.sum().backward()
    print(f"sym_grad {m.parametrizations.weight.original.grad[0].tolist()}")
    P.remove_parametrizations(m, "weight", leave_parametrized=True)
    print(
        f"removed {P.is_parametrized(m)} {type(m.weight).__name__} {torch.allclose(m.weight, target)} {sorted(m.state_dict())}"
    )
    try:
        P.remove_parametrizations(m, "weight")
    except ValueError as e:
        print(f"remove_error {e}")
    print(f"module_class {type(conv).__name__} {type(conv).__mro__[1].__name__}")


if __name__ == "__main__":
    main()
