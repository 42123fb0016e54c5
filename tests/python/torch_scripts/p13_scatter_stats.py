"""Group statistics with scatter_reduce / index_reduce / index_add, weighted covariance, and KL
divergences between fitted distributions."""

import torch
from torch.distributions import (
    Categorical,
    LowRankMultivariateNormal,
    MultivariateNormal,
    Normal,
    kl_divergence,
)


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


vals = torch.tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
group = torch.tensor([0, 2, 0, 1, 2, 2, 0, 1])
for reduce in ("sum", "prod", "mean", "amax", "amin"):
    for include_self in (True, False):
        out = torch.full((4,), 10.0).scatter_reduce(
            0, group, vals, reduce=reduce, include_self=include_self
        )
        print("scatter", reduce, include_self, r(out))
counts = torch.zeros(3).index_add_(0, group, torch.ones_like(vals))
print("counts", r(counts), r(torch.bincount(group)))

feats = torch.linspace(-1, 1, 16).reshape(8, 2)
for reduce in ("prod", "mean", "amax", "amin"):
    out = torch.ones(3, 2).index_reduce_(0, group, feats, reduce, include_self=False)
    print("index_reduce", reduce, r(out))

# gradient flows through scatter_reduce mean/amax
src = feats.clone().requires_grad_()
idx = group.unsqueeze(1).expand(-1, 2)
pooled = torch.zeros(3, 2).scatter_reduce(0, idx, src, reduce="amax", include_self=False)
(pooled * torch.tensor([1.0, 2.0])).sum().backward()
print("amax_grad", r(src.grad))
src.grad = None
torch.zeros(3, 2).scatter_reduce(0, idx, src, reduce="mean", include_self=False).sum().backward()
print("mean_grad", r(src.grad))

# weighted statistics
data = torch.stack(
    [torch.linspace(0, 1, 8), torch.linspace(1, 0, 8) ** 2, torch.cos(torch.arange(8.0))]
)
fw = torch.tensor([1, 2, 1, 3, 1, 1, 2, 1])
aw = torch.linspace(0.5, 1.5, 8)
print("cov", r(torch.cov(data)))
print("cov_weighted", r(torch.cov(data, correction=0, fweights=fw, aweights=aw)))
print("corrcoef", r(torch.corrcoef(data)))
print("logsumexp", r(torch.special.logsumexp(data, dim=1)))

# KL between fitted Gaussians
mu = data.mean(1)
cov = torch.cov(data) + 0.1 * torch.eye(3)
p = MultivariateNormal(mu, covariance_matrix=cov)
q = MultivariateNormal(torch.zeros(3), scale_tril=torch.eye(3) * 0.8)
print("kl_mvn", round(kl_divergence(p, q).item(), 5), round(kl_divergence(q, p).item(), 5))
lr = LowRankMultivariateNormal(
    mu,
    cov_factor=torch.linspace(-0.5, 0.5, 6).reshape(3, 2),
    cov_diag=torch.tensor([0.5, 0.4, 0.3]),
)
print("lowrank_logprob", r(lr.log_prob(data.T[:3])))
print("lowrank_entropy", round(lr.entropy().item(), 5))
print("lowrank_cov", r(lr.covariance_matrix))
print("kl_lowrank_mvn", round(kl_divergence(lr, q).item(), 5))
print(
    "kl_normal",
    r(kl_divergence(Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])), Normal(0.5, 1.5))),
)
pc = Categorical(logits=torch.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]))
qc = Categorical(probs=torch.tensor([0.2, 0.3, 0.5]))
print("kl_cat", r(kl_divergence(pc, qc)))
