"""Constraints through torch.nn.utils.parametrize, as in the parametrizations tutorial: a
symmetric weight, a positive-definite one via matrix_exp, a learnable scale stacked on top,
right_inverse used by assignment, cached() around a recurrent loop, the consistency checks at
registration (a shape-changing parametrization needs unsafe=True), state_dict keys, and
remove_parametrizations with and without leave_parametrized."""

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class SkewExp(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return torch.matrix_exp(A - A.transpose(-1, -2))


class PositiveDiag(nn.Module):
    def forward(self, X):
        return (
            X
            - torch.diag_embed(torch.diagonal(X))
            + torch.diag_embed(nn.functional.softplus(torch.diagonal(X)))
        )


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_s = nn.Parameter(torch.tensor(0.1))

    def forward(self, X):
        return X * self.log_s.exp()


class LowRank(nn.Module):
    """Changes the shape: registered with unsafe=True."""

    def forward(self, U):
        return U @ U.T


class RNNCell(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.W = nn.Linear(n, n, bias=False)
        self.U = nn.Linear(n, n)
        parametrize.register_parametrization(self.W, "weight", SkewExp())

    def forward(self, xs):
        h = torch.zeros(xs.shape[1], xs.shape[2])
        with parametrize.cached():
            for x in xs:
                h = torch.tanh(self.W(h) + self.U(x))
        return h


def fill(t, k):
    with torch.no_grad():
        t.copy_(
            (torch.sin(torch.arange(t.numel(), dtype=torch.float32) * 0.7 + k) * 0.5).view_as(t)
        )


def main():
    layer = nn.Linear(3, 3)
    fill(layer.weight, 0)
    fill(layer.bias, 1)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    W = layer.weight
    print("class", type(layer).__name__, parametrize.type_before_parametrizations(layer).__name__)
    print("symmetric", torch.allclose(W, W.T), [round(v, 4) for v in W[0].tolist()])
    parametrize.register_parametrization(layer, "weight", Scale())
    print("stacked", [type(m).__name__ for m in layer.parametrizations.weight])
    print("state_keys", list(layer.state_dict().keys()))
    print("params", [(n, tuple(p.shape)) for n, p in layer.named_parameters()])
    try:
        layer.weight = torch.eye(3)
    except RuntimeError as e:
        print("assign_fails", e)

    sym = nn.Linear(3, 3, bias=False)
    parametrize.register_parametrization(sym, "weight", Symmetric())
    sym.weight = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    print("assigned_original", sym.parametrizations.weight.original.tolist())

    try:
        parametrize.register_parametrization(nn.Linear(4, 2), "weight", LowRank())
    except (ValueError, RuntimeError) as e:
        print("shape_check", type(e).__name__, str(e).splitlines()[0])
    lr = nn.Linear(2, 4)
    parametrize.register_parametrization(lr, "weight", LowRank(), unsafe=True)
    print("unsafe_shape", tuple(lr.weight.shape), tuple(lr.parametrizations.weight.original.shape))
    try:
        parametrize.register_parametrization(nn.Linear(2, 2), "weights", Symmetric())
    except ValueError as e:
        print("bad_name", str(e).split("with name")[1])

    pd = nn.Linear(3, 3, bias=False)
    fill(pd.weight, 2)
    parametrize.register_parametrization(pd, "weight", PositiveDiag())
    print("pos_diag", [round(v, 4) for v in torch.diagonal(pd.weight).tolist()])

    cell = RNNCell(4)
    fill(cell.W.parametrizations.weight.original, 3)
    fill(cell.U.weight, 4)
    fill(cell.U.bias, 5)
    Wq = cell.W.weight
    print("orthogonal", torch.allclose(Wq @ Wq.T, torch.eye(4), atol=1e-5))
    xs = torch.cos(torch.arange(5 * 2 * 4, dtype=torch.float32) * 0.3).view(5, 2, 4)
    opt = torch.optim.SGD(list(cell.parameters()) + list(layer.parameters()), lr=0.1)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = cell(xs).pow(2).mean() + layer(xs[0, :, :3]).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 5))
    print("losses", losses)
    print("scale", round(layer.parametrizations.weight[1].log_s.item(), 5))
    Wq = cell.W.weight
    print("still_orthogonal", torch.allclose(Wq @ Wq.T, torch.eye(4), atol=1e-5))
    with parametrize.cached():
        print("cached_identity", cell.W.weight is cell.W.weight)

    before = layer.weight.detach().clone()
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
    print(
        "removed",
        type(layer).__name__,
        torch.equal(layer.weight, before),
        parametrize.is_parametrized(layer),
    )
    parametrize.remove_parametrizations(sym, "weight", leave_parametrized=False)
    print("left_original", sym.weight.tolist())
    try:
        parametrize.remove_parametrizations(sym, "weight")
    except ValueError as e:
        print("remove_again", str(e).split(" does ")[1])


if __name__ == "__main__":
    main()
