"""Scientific-computing linear algebra as people write it with torch: least squares, pinv,
Cholesky and LU factor/solve, triangular solves, eigh with gradients, SVD/low rank, QR,
matrix_exp, slogdet, matrix_rank, cond, matrix_power, batched solves and a Gaussian-process
regression fit by gradient descent on the marginal likelihood, in float64."""

import math

import torch

torch.set_default_dtype(torch.float64)


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


def spd(n, shift=0.0):
    a = torch.sin(torch.arange(n * n).view(n, n) ** 1.5 + shift)
    return a @ a.T + n * torch.eye(n)


def main():
    A = torch.sin(torch.arange(20.0).view(5, 4) ** 1.5)
    b = torch.cos(torch.arange(5.0)).unsqueeze(1)
    sol = torch.linalg.lstsq(A, b)
    print("lstsq", r(sol.solution), sol.rank, r(sol.residuals) if sol.residuals.numel() else [])
    print("pinv", r(torch.linalg.pinv(A) @ b))
    S = spd(4)
    L = torch.linalg.cholesky(S)
    y = torch.ones(4, 2)
    print("cholesky_solve", r(torch.cholesky_solve(y, L)))
    print("solve", r(torch.linalg.solve(S, y)))
    print("solve_triangular", r(torch.linalg.solve_triangular(L, y, upper=False)))
    print(
        "triangular_left_false", r(torch.linalg.solve_triangular(L.T, y.T, upper=True, left=False))
    )
    LU, piv = torch.linalg.lu_factor(A[:4])
    print("lu_solve", r(torch.linalg.lu_solve(LU, piv, y)), piv.tolist())
    P, Lm, U = torch.linalg.lu(A[:4])
    print("lu_recon", torch.allclose(P @ Lm @ U, A[:4]))
    w, V = torch.linalg.eigh(S)
    print("eigh", r(w), abs(round(V[0, 0].item(), 5)))
    Q, R = torch.linalg.qr(A)
    print("qr", tuple(Q.shape), r(R.diagonal().abs()))
    Qc, Rc = torch.linalg.qr(A, mode="complete")
    print("qr_complete", tuple(Qc.shape), tuple(Rc.shape))
    U_, s, Vh = torch.linalg.svd(A, full_matrices=False)
    print("svd", r(s), torch.allclose(U_ * s @ Vh, A))
    print("svdvals", r(torch.linalg.svdvals(A)))
    print("matrix_exp", r(torch.linalg.matrix_exp(torch.tensor([[0.0, 1.0], [-1.0, 0.0]]))))
    sign, logabs = torch.linalg.slogdet(S)
    print(
        "slogdet",
        sign.item(),
        round(logabs.item(), 6),
        round(torch.logdet(S).item(), 6),
        round(torch.det(S).item(), 4),
    )
    print("rank_cond", torch.linalg.matrix_rank(A).item(), round(torch.linalg.cond(S).item(), 5))
    print("matrix_power", r(torch.linalg.matrix_power(torch.tensor([[1.0, 1.0], [0.0, 1.0]]), 5)))
    print("inv", r(torch.linalg.inv(S)[0]))
    print(
        "norms",
        round(torch.linalg.matrix_norm(A).item(), 5),
        round(torch.linalg.matrix_norm(A, ord=2).item(), 5),
        round(torch.linalg.norm(A, "nuc").item(), 5),
    )
    batch = torch.stack([spd(3, k) for k in range(4)])
    rhs = torch.ones(4, 3, 1)
    print("batched_solve", r(torch.linalg.solve(batch, rhs)[:, 0]))
    print("batched_det", r(torch.linalg.det(batch), 3))
    ev = torch.linalg.eigvalsh(batch)
    print("batched_eigvalsh", r(ev[:, 0]))
    print("vander", r(torch.linalg.vander(torch.tensor([1.0, 2.0, 3.0]))))
    print("householder", r(torch.linalg.householder_product(*torch.geqrf(A))[:2]))
    print("multi_dot", r(torch.linalg.multi_dot([A.T, A, torch.ones(4, 1)])))
    print("tensorsolve", r(torch.linalg.tensorsolve(S.view(4, 2, 2), torch.ones(4))))

    # gradients through decompositions
    X = S.clone().requires_grad_(True)
    wv = torch.linalg.eigvalsh(X)
    wv.max().backward()
    print("eig_grad", r(X.grad.diagonal()))
    Y = A.clone().requires_grad_(True)
    torch.linalg.svdvals(Y).sum().backward()
    print("svd_grad", r(Y.grad[0]))
    Z = S.clone().requires_grad_(True)
    torch.linalg.cholesky(Z).diagonal().log().sum().backward()
    print("chol_grad", r(Z.grad.diagonal()))
    M = S.clone().requires_grad_(True)
    torch.linalg.solve(M, torch.ones(4)).sum().backward()
    print("solve_grad", r(M.grad[0]))

    # Gaussian process regression: fit RBF lengthscale and noise by marginal likelihood
    xt = torch.linspace(0, 5, 20).unsqueeze(1)
    yt = torch.sin(xt).squeeze(1) + 0.1 * torch.cos(7 * xt).squeeze(1)
    log_ls = torch.tensor(0.0, requires_grad=True)
    log_noise = torch.tensor(-1.0, requires_grad=True)
    opt = torch.optim.Adam([log_ls, log_noise], lr=0.05)

    def nll():
        d2 = torch.cdist(xt, xt).pow(2)
        K = torch.exp(-0.5 * d2 / log_ls.exp() ** 2) + (log_noise.exp() ** 2 + 1e-6) * torch.eye(20)
        Lk = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(yt.unsqueeze(1), Lk)
        return (
            0.5 * (yt.unsqueeze(0) @ alpha).squeeze()
            + Lk.diagonal().log().sum()
            + 10 * math.log(2 * math.pi)
        )

    first = nll().item()
    for _ in range(40):
        opt.zero_grad()
        loss = nll()
        loss.backward()
        opt.step()
    print(
        f"gp nll {first:.5f} -> {nll().item():.5f} ls {log_ls.exp().item():.5f} "
        f"noise {log_noise.exp().item():.5f}"
    )


if __name__ == "__main__":
    main()
