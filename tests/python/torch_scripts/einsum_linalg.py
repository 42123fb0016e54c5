# ruff: noqa: E501
"""Einsum- and linalg-heavy model code: multi-head attention written with einsum, bilinear
scoring (nn.Bilinear vs einsum), tensordot / kron / outer / cartesian_prod, batched
least squares and a ridge regression solved with linalg.solve / cholesky / lstsq, QR / SVD /
eigh / pinv / matrix_exp / slogdet with their gradients, and a low-rank adapter (LoRA)
whose factors are trained by Adam."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det(shape, phase=0.0, scale=1.0):
    n = 1
    for s in shape:
        n *= s
    k = torch.arange(n, dtype=torch.float32)
    return (torch.sin(k * 0.731 + 0.037 * k * k + phase) * scale).reshape(shape)


class EinsumMHA(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.qkv = nn.Parameter(det((3, h, d, d // h), 0.1, 0.3))
        self.out = nn.Parameter(det((h, d // h, d), 0.7, 0.3))

    def forward(self, x, mask=None):
        q, k, v = (
            torch.einsum("btd,hdk->bhtk", x, self.qkv[0]),
            torch.einsum("btd,hdk->bhtk", x, self.qkv[1]),
            torch.einsum("btd,hdk->bhtk", x, self.qkv[2]),
        )
        scores = torch.einsum("bhqk,bhsk->bhqs", q, k) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        att = scores.softmax(-1)
        ctx = torch.einsum("bhqs,bhsk->bhqk", att, v)
        return torch.einsum("bhqk,hkd->bqd", ctx, self.out), att


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=2, alpha=4):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.A = nn.Parameter(det((r, base.in_features), 0.3, 0.1))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + torch.einsum("...i,ri,or->...o", x, self.A, self.B) * self.scale


def main():
    torch.manual_seed(0)
    x = det((2, 5, 8), 0.2)
    mha = EinsumMHA(8, 2)
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    y, att = mha(x, mask)
    print(
        f"mha {tuple(y.shape)} att_rowsum {att.sum(-1).mean().item():.5f} upper_zero {att[..., 0, 1:].abs().max().item() < 1e-6} mean {y.mean().item():.6f}"
    )
    ref_scores = (x @ mha.qkv[0][0]) @ (x @ mha.qkv[1][0]).transpose(1, 2) / 2.0
    print(
        f"einsum_vs_matmul {torch.allclose(torch.einsum('btd,hdk->bhtk', x, mha.qkv[0])[:, 0] @ torch.einsum('btd,hdk->bhtk', x, mha.qkv[1])[:, 0].transpose(1, 2) / 2.0, ref_scores, atol=1e-5)}"
    )
    y.sum().backward()
    print(
        f"einsum_grads {mha.qkv.grad.abs().sum().item():.5f} {mha.out.grad.abs().sum().item():.5f}"
    )

    bil = nn.Bilinear(3, 4, 2)
    with torch.no_grad():
        bil.weight.copy_(det((2, 3, 4), 0.5))
        bil.bias.copy_(torch.tensor([0.1, -0.1]))
    a, b = det((6, 3), 1.0), det((6, 4), 2.0)
    print(
        f"bilinear_eq {torch.allclose(bil(a, b), torch.einsum('bi,oij,bj->bo', a, bil.weight, b) + bil.bias, atol=1e-5)} {bil(a, b).sum().item():.5f}"
    )
    print(
        f"einsum_misc trace {torch.einsum('ii', det((4, 4))).item():.5f} diag {torch.einsum('ii->i', det((3, 3))).tolist()[:2]} outer {tuple(torch.einsum('i,j->ij', torch.arange(3.0), torch.arange(4.0)).shape)} ellipsis {tuple(torch.einsum('...ij,...jk->...ik', det((2, 3, 4)), det((2, 4, 5))).shape)} sum_all {torch.einsum('ijk->', det((2, 3, 4))).item():.5f}"
    )
    print(
        f"einsum_list_form {torch.allclose(torch.einsum(a, [0, 1], b[:, :3], [0, 1], [0]), (a * b[:, :3]).sum(1))} bmm_form {torch.einsum('bij,bjk->bik', det((2, 2, 3)), det((2, 3, 2))).sum().item():.5f}"
    )
    print(
        f"tensordot {torch.tensordot(det((3, 4, 5)), det((4, 5, 2)), dims=([1, 2], [0, 1])).sum().item():.5f} dims1 {tuple(torch.tensordot(det((3, 4)), det((4, 6)), dims=1).shape)}"
    )
    print(f"kron {torch.kron(torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()}")
    print(
        f"outer {torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0])).tolist()} cart {torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4])).tolist()}"
    )
    print(
        f"baddbmm {torch.baddbmm(torch.ones(2, 2, 2), det((2, 2, 3)), det((2, 3, 2)), beta=0.5, alpha=2.0).sum().item():.5f} addmv {torch.addmv(torch.ones(2), det((2, 3)), torch.ones(3)).tolist()}"
    )
    print(
        f"chain_matmul {torch.linalg.multi_dot([det((2, 3)), det((3, 4)), det((4, 2))]).sum().item():.5f} mv {torch.mv(det((2, 3)), torch.ones(3)).sum().item():.5f}"
    )

    # Ridge regression three ways.
    X = det((20, 4), 0.3)
    w_true = torch.tensor([1.0, -2.0, 0.5, 3.0])
    yv = X @ w_true + 0.01 * torch.cos(torch.arange(20.0))
    lam = 0.1
    A = X.T @ X + lam * torch.eye(4)
    w1 = torch.linalg.solve(A, X.T @ yv)
    L = torch.linalg.cholesky(A)
    w2 = torch.cholesky_solve((X.T @ yv).unsqueeze(1), L).squeeze(1)
    w3 = torch.linalg.lstsq(
        torch.cat([X, lam**0.5 * torch.eye(4)]), torch.cat([yv, torch.zeros(4)]).unsqueeze(1)
    ).solution.squeeze(1)
    print(
        f"ridge {[round(v, 4) for v in w1.tolist()]} agree {torch.allclose(w1, w2, atol=1e-4)} {torch.allclose(w1, w3, atol=1e-4)}"
    )
    print(
        f"tri_solve {torch.allclose(torch.linalg.solve_triangular(L, A[:, :1], upper=False), torch.linalg.inv(L) @ A[:, :1], atol=1e-4)}"
    )
    M = det((4, 4), 1.3) + 4 * torch.eye(4)
    Q, R = torch.linalg.qr(M)
    print(
        f"qr_orth {torch.allclose(Q.T @ Q, torch.eye(4), atol=1e-5)} recon {torch.allclose(Q @ R, M, atol=1e-5)} r_diag_abs {[round(abs(v), 4) for v in R.diagonal().tolist()]}"
    )
    U, S, Vh = torch.linalg.svd(X, full_matrices=False)
    print(
        f"svd S {[round(v, 4) for v in S.tolist()]} recon {torch.allclose(U @ torch.diag(S) @ Vh, X, atol=1e-5)} svdvals {torch.allclose(torch.linalg.svdvals(X), S)}"
    )
    sym = A
    evals, evecs = torch.linalg.eigh(sym)
    print(
        f"eigh {[round(v, 4) for v in evals.tolist()]} recon {torch.allclose(evecs @ torch.diag(evals) @ evecs.T, sym, atol=1e-4)} eigvalsh {torch.allclose(torch.linalg.eigvalsh(sym), evals)}"
    )
    print(
        f"pinv {torch.allclose(torch.linalg.pinv(X) @ X, torch.eye(4), atol=1e-4)} det {torch.linalg.det(M).item():.4f} slogdet {[round(v.item(), 4) for v in torch.linalg.slogdet(M)]} inv {torch.allclose(torch.linalg.inv(M) @ M, torch.eye(4), atol=1e-5)}"
    )
    print(
        f"norms fro {torch.linalg.norm(M).item():.4f} nuc {torch.linalg.matrix_norm(M, 'nuc').item():.4f} ord2 {torch.linalg.matrix_norm(M, 2).item():.4f} vec_inf {torch.linalg.vector_norm(M, float('inf')).item():.4f} cond {torch.linalg.cond(M).item():.4f} rank {torch.linalg.matrix_rank(X).item()}"
    )
    skew = torch.tensor([[0.0, -0.5], [0.5, 0.0]])
    print(
        f"matrix_exp {[round(v, 5) for v in torch.linalg.matrix_exp(skew).flatten().tolist()]} matrix_power {torch.linalg.matrix_power(torch.tensor([[1.0, 1.0], [0.0, 1.0]]), 5).tolist()}"
    )
    Mg = M.clone().requires_grad_()
    (
        torch.linalg.slogdet(Mg)[1] + torch.linalg.inv(Mg).sum() + torch.linalg.svdvals(Mg).sum()
    ).backward()
    print(f"linalg_grad {Mg.grad.sum().item():.5f} {Mg.grad[0].tolist()[:2]}")
    Sg = sym.clone().requires_grad_()
    torch.linalg.eigh(Sg)[0].max().backward()
    print(
        f"eigh_grad_sym {torch.allclose(Sg.grad, Sg.grad.T, atol=1e-5)} trace {Sg.grad.trace().item():.5f}"
    )
    print(
        f"batched_solve {tuple(torch.linalg.solve(M.expand(3, 4, 4), det((3, 4, 2))).shape)} cross {torch.linalg.cross(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 1.0, 0.0])).tolist()}"
    )

    # LoRA fine-tuning of a frozen layer.
    base = nn.Linear(6, 3)
    with torch.no_grad():
        base.weight.copy_(det((3, 6), 0.9, 0.4))
        base.bias.zero_()
    lora = LoRALinear(base)
    Xl = det((32, 6), 2.1)
    target = (
        Xl @ (base.weight + 0.3 * torch.outer(torch.tensor([1.0, -1.0, 0.5]), torch.ones(6) / 6)).T
    )
    opt = torch.optim.Adam([p for p in lora.parameters() if p.requires_grad], lr=0.05)
    print(
        f"lora_trainable {sum(p.numel() for p in lora.parameters() if p.requires_grad)} frozen {sum(p.numel() for p in lora.parameters() if not p.requires_grad)}"
    )
    for step in range(80):
        opt.zero_grad()
        loss = F.mse_loss(lora(Xl), target)
        loss.backward()
        opt.step()
    print(
        f"lora_loss {loss.item():.6f} base_grad_none {base.weight.grad is None} delta_rank {torch.linalg.matrix_rank(lora.B @ lora.A, atol=1e-4).item()}"
    )
    merged = base.weight + lora.scale * lora.B @ lora.A
    print(f"lora_merge {torch.allclose(F.linear(Xl, merged, base.bias), lora(Xl), atol=1e-5)}")


if __name__ == "__main__":
    main()
