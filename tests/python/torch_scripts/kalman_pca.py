# ruff: noqa: E501
"""State-space and subspace methods as research code writes them in torch: a batched
constant-velocity Kalman filter (predict/update with cholesky + cholesky_solve for the gain,
Joseph-form covariance), the Rauch-Tung-Striebel smoother, the innovation log-likelihood with
MultivariateNormal, learning the process-noise scale by gradient descent through the filter,
then PCA of the smoothed tracks with torch.pca_lowrank (full rank, centered) against
torch.linalg.svd, explained variance ratios, and whitening with the top components."""

import torch
from torch.distributions import MultivariateNormal


def make_model(dt=0.1, q=0.05, r=0.2):
    F = torch.tensor(
        [[1.0, 0.0, dt, 0.0], [0.0, 1.0, 0.0, dt], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
        dtype=torch.float64,
    )
    H = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    G = torch.tensor(
        [[0.5 * dt * dt, 0.0], [0.0, 0.5 * dt * dt], [dt, 0.0], [0.0, dt]], dtype=torch.float64
    )
    Q = q * G @ G.T + 1e-9 * torch.eye(4, dtype=torch.float64)
    R = r * torch.eye(2, dtype=torch.float64)
    return F, H, Q, R


def kalman(zs, F, H, Q, R):
    B, T, _ = zs.shape
    x = torch.zeros(B, 4, dtype=zs.dtype)
    x[:, :2] = zs[:, 0]
    P = torch.eye(4, dtype=zs.dtype).expand(B, 4, 4) * 1.0
    I = torch.eye(4, dtype=zs.dtype)
    xs, Ps, xps, Pps, ll = [], [], [], [], 0.0
    for t in range(T):
        xp = x @ F.T
        Pp = F @ P @ F.T + Q
        S = H @ Pp @ H.T + R
        innov = zs[:, t] - xp @ H.T
        ll = (
            ll
            + MultivariateNormal(torch.zeros_like(innov), covariance_matrix=S).log_prob(innov).sum()
        )
        L = torch.linalg.cholesky(S)
        K = torch.cholesky_solve(H @ Pp.transpose(1, 2), L).transpose(1, 2)
        x = xp + (K @ innov.unsqueeze(-1)).squeeze(-1)
        A = I - K @ H
        P = A @ Pp @ A.transpose(1, 2) + K @ R @ K.transpose(1, 2)
        xs.append(x)
        Ps.append(P)
        xps.append(xp)
        Pps.append(Pp)
    return torch.stack(xs, 1), torch.stack(Ps, 1), torch.stack(xps, 1), torch.stack(Pps, 1), ll


def rts(xs, Ps, xps, Pps, F):
    T = xs.shape[1]
    xs_s, Ps_s = [xs[:, -1]], [Ps[:, -1]]
    for t in range(T - 2, -1, -1):
        C = Ps[:, t] @ F.T @ torch.linalg.inv(Pps[:, t + 1])
        x = xs[:, t] + (C @ (xs_s[0] - xps[:, t + 1]).unsqueeze(-1)).squeeze(-1)
        P = Ps[:, t] + C @ (Ps_s[0] - Pps[:, t + 1]) @ C.transpose(1, 2)
        xs_s.insert(0, x)
        Ps_s.insert(0, P)
    return torch.stack(xs_s, 1), torch.stack(Ps_s, 1)


def main():
    T, B = 30, 3
    t = torch.arange(T, dtype=torch.float64) * 0.1
    truth = torch.stack(
        [
            torch.stack([torch.cos(t * (1 + b) * 0.5) * 2, torch.sin(t * 0.7) + 0.3 * b * t], 1)
            for b in range(B)
        ]
    )
    noise = 0.3 * torch.stack([torch.sin(t * 13.1 + b) for b in range(2 * B)]).view(
        B, 2, T
    ).transpose(1, 2)
    zs = truth + noise
    F, H, Q, R = make_model()
    xs, Ps, xps, Pps, ll = kalman(zs, F, H, Q, R)
    print(
        f"filter_rmse {((xs[..., :2] - truth) ** 2).mean().sqrt().item():.5f} raw_rmse {((zs - truth) ** 2).mean().sqrt().item():.5f}"
    )
    print(
        f"loglik {ll.item():.4f} final_var {[round(v, 5) for v in Ps[0, -1].diagonal().tolist()]}"
    )
    xs_s, Ps_s = rts(xs, Ps, xps, Pps, F)
    print(
        f"smoother_rmse {((xs_s[..., :2] - truth) ** 2).mean().sqrt().item():.5f} var_shrinks {bool((Ps_s[:, 0].diagonal(dim1=-2, dim2=-1) <= Ps[:, 0].diagonal(dim1=-2, dim2=-1) + 1e-12).all())}"
    )

    log_q = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([log_q], lr=0.3)
    trace = []
    for _ in range(6):
        opt.zero_grad()
        F, H, Q, R = make_model(q=log_q.exp())
        nll = -kalman(zs, F, H, Q, R)[4]
        nll.backward()
        opt.step()
        trace.append(round(nll.item(), 4))
    print(f"nll_trace {trace} q {log_q.exp().item():.5f}")

    data = xs_s.reshape(-1, 4).to(torch.float32)
    U, S, V = torch.pca_lowrank(data, q=4, center=True, niter=4)
    centered = data - data.mean(0)
    S_ref = torch.linalg.svdvals(centered)
    print(
        f"pca_singular {[round(v, 4) for v in S.tolist()]} matches_svd {torch.allclose(S, S_ref, rtol=1e-3, atol=1e-4)}"
    )
    evr = S**2 / (S**2).sum()
    print(f"explained_ratio {[round(v, 5) for v in evr.tolist()]}")
    proj = centered @ V[:, :2]
    white = proj / S[:2] * (data.shape[0] - 1) ** 0.5
    cov = white.T @ white / (data.shape[0] - 1)
    print(f"whitened_cov {[round(v, 4) for v in cov.flatten().tolist()]}")
    recon = proj @ V[:, :2].T
    print(
        f"recon_err {((recon - centered) ** 2).sum().item() / (centered**2).sum().item():.6f} tail_ratio {evr[2:].sum().item():.6f}"
    )


if __name__ == "__main__":
    main()
