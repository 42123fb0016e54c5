# ruff: noqa: E501
"""Clustering written directly in torch, as notebooks and repos do it: k-means with k-means++
style farthest-point init, cdist/argmin assignments and index_add_/bincount centroid updates,
a mini-batch k-means step with scatter_reduce, then a Gaussian mixture fitted by EM
(MultivariateNormal log_prob, logsumexp responsibilities, weighted covariances with a ridge),
its log-likelihood per iteration, and the silhouette score of the final clustering."""

import torch
from torch.distributions import MultivariateNormal


def make_blobs():
    t = torch.arange(90, dtype=torch.float32)
    centers = torch.tensor([[0.0, 0.0], [3.0, 3.0], [-3.0, 2.5]])
    noise = torch.stack([torch.sin(t * 1.7) * 0.6, torch.cos(t * 2.3) * 0.5], 1)
    return centers.repeat_interleave(30, 0) + noise


def farthest_init(x, k):
    idx = [0]
    d = torch.cdist(x, x[idx]).min(1).values
    for _ in range(k - 1):
        idx.append(int(d.argmax()))
        d = torch.minimum(d, torch.cdist(x, x[idx[-1:]]).squeeze(1))
    return x[idx].clone()


def kmeans(x, k, iters=10):
    c = farthest_init(x, k)
    for it in range(iters):
        assign = torch.cdist(x, c).argmin(1)
        sums = torch.zeros_like(c).index_add_(0, assign, x)
        counts = torch.bincount(assign, minlength=k).clamp(min=1).unsqueeze(1)
        new_c = sums / counts
        shift = (new_c - c).norm(dim=1).max().item()
        c = new_c
        if shift < 1e-6:
            break
    inertia = ((x - c[assign]) ** 2).sum().item()
    return c, assign, inertia, it


def silhouette(x, labels):
    d = torch.cdist(x, x)
    k = int(labels.max()) + 1
    onehot = torch.nn.functional.one_hot(labels, k).float()
    sums = d @ onehot
    counts = onehot.sum(0)
    own = labels
    a = sums.gather(1, own[:, None]).squeeze(1) / (counts[own] - 1).clamp(min=1)
    other = sums / counts
    other = other.masked_fill(onehot.bool(), float("inf"))
    b = other.min(1).values
    return ((b - a) / torch.maximum(a, b)).mean().item()


def gmm_em(x, k, means, iters=8):
    n, d = x.shape
    weights = torch.full((k,), 1.0 / k)
    covs = torch.eye(d).repeat(k, 1, 1)
    lls = []
    for _ in range(iters):
        logp = torch.stack([MultivariateNormal(means[j], covs[j]).log_prob(x) for j in range(k)], 1)
        logp = logp + weights.log()
        ll = torch.logsumexp(logp, 1)
        lls.append(round(ll.mean().item(), 4))
        resp = (logp - ll[:, None]).exp()
        nk = resp.sum(0)
        weights = nk / n
        means = resp.T @ x / nk[:, None]
        diff = x[None] - means[:, None]
        covs = torch.einsum("kn,kni,knj->kij", resp.T, diff, diff) / nk[:, None, None]
        covs = covs + 1e-4 * torch.eye(d)
    return weights, means, covs, lls, resp


def main():
    x = make_blobs()
    c, assign, inertia, iters = kmeans(x, 3)
    order = c[:, 0].argsort()
    print(f"kmeans_centers {[[round(v, 3) for v in row] for row in c[order].tolist()]}")
    print(
        f"kmeans_inertia {inertia:.4f} iters {iters} sizes {sorted(torch.bincount(assign).tolist())}"
    )
    print(f"silhouette {silhouette(x, assign):.4f}")

    batch = x[::3]
    counts = torch.zeros(3)
    cb = c.clone() + 0.2
    a = torch.cdist(batch, cb).argmin(1)
    counts += torch.bincount(a, minlength=3)
    mean_b = torch.zeros_like(cb).scatter_reduce(
        0, a[:, None].expand(-1, 2), batch, reduce="mean", include_self=False
    )
    present = torch.bincount(a, minlength=3) > 0
    cb[present] = (
        cb[present]
        + (mean_b[present] - cb[present])
        * (torch.bincount(a, minlength=3)[present] / counts[present])[:, None]
    )
    print(f"minibatch_centers {[[round(v, 3) for v in row] for row in cb.tolist()]}")

    w, means, covs, lls, resp = gmm_em(x, 3, c.clone())
    order = means[:, 0].argsort()
    print(f"gmm_loglik {lls}")
    print(f"gmm_weights {[round(v, 4) for v in w[order].tolist()]}")
    print(f"gmm_means {[[round(v, 3) for v in row] for row in means[order].tolist()]}")
    print(f"gmm_cov0 {[round(v, 4) for v in covs[order[0]].flatten().tolist()]}")
    print(
        f"gmm_hard_agree {(resp.argmax(1) == assign).float().mean().item():.4f} max_resp_min {resp.max(1).values.min().item():.4f}"
    )
    bic = (
        -2 * lls[-1] * x.shape[0]
        + (3 * (1 + 2 + 3) - 1) * torch.log(torch.tensor(float(x.shape[0]))).item()
    )
    print(f"bic {bic:.3f}")


if __name__ == "__main__":
    main()
