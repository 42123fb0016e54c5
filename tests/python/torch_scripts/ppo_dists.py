# ruff: noqa: E501
"""Policy-gradient code built on torch.distributions: a Gaussian policy (Normal + Independent,
rsample vs sample, tanh-squashed TransformedDistribution), a Categorical policy with entropy
bonus, a PPO clipped objective with GAE advantages, kl_divergence between policies, and a
tour of the distributions people reach for (Bernoulli, Beta, Gamma, Dirichlet,
MultivariateNormal, OneHotCategorical, Uniform, Laplace, Poisson, mixtures)."""

import torch
import torch.nn as nn
from torch.distributions import (
    Bernoulli,
    Beta,
    Categorical,
    Dirichlet,
    Gamma,
    Independent,
    Laplace,
    MixtureSameFamily,
    MultivariateNormal,
    Normal,
    OneHotCategorical,
    Poisson,
    TransformedDistribution,
    Uniform,
    constraints,
    kl_divergence,
)
from torch.distributions.transforms import AffineTransform, TanhTransform


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.77 + i) * scale).view_as(p))


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh())
        self.pi = nn.Linear(16, n_actions)
        self.v = nn.Linear(16, 1)

    def forward(self, obs):
        h = self.body(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


def gae(rewards, values, dones, gamma=0.99, lam=0.95):
    adv = torch.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        next_v = values[t + 1] if t + 1 < len(values) else 0.0
        delta = rewards[t] + gamma * next_v * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        adv[t] = last
    return adv, adv + values


def main():
    torch.manual_seed(0)
    T = 16
    obs = torch.stack([torch.sin(torch.arange(4, dtype=torch.float32) + 0.4 * t) for t in range(T)])
    actions = torch.tensor([t % 3 for t in range(T)])
    rewards = torch.tensor([1.0 if a == 1 else -0.2 for a in actions.tolist()])
    dones = torch.zeros(T)
    dones[7] = 1.0
    net = ActorCritic()
    det_init(net)
    with torch.no_grad():
        dist, values = net(obs)
        old_logp = dist.log_prob(actions)
    adv, returns = gae(rewards, values, dones)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    print(f"gae {[round(v, 4) for v in returns[:4].tolist()]} adv_std {adv.std().item():.4f}")
    opt = torch.optim.Adam(net.parameters(), lr=3e-3, eps=1e-5)
    for epoch in range(10):
        for mb in (torch.arange(0, 8), torch.arange(8, 16)):
            dist, v = net(obs[mb])
            logp = dist.log_prob(actions[mb])
            ratio = torch.exp(logp - old_logp[mb])
            surr1 = ratio * adv[mb]
            surr2 = torch.clamp(ratio, 0.8, 1.2) * adv[mb]
            pg_loss = -torch.min(surr1, surr2).mean()
            v_loss = 0.5 * (returns[mb] - v).pow(2).mean()
            ent = dist.entropy().mean()
            loss = pg_loss + 0.5 * v_loss - 0.01 * ent
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()
        if epoch in (0, 9):
            clipfrac = ((ratio - 1.0).abs() > 0.2).float().mean().item()
            print(
                f"ppo_epoch{epoch} loss {loss.item():.5f} ent {ent.item():.5f} clipfrac {clipfrac:.3f}"
            )
    with torch.no_grad():
        new_dist, _ = net(obs)
        kl = kl_divergence(
            Categorical(logits=old_logp.new_zeros(T, 3) + net.pi(net.body(obs)) * 0), new_dist
        ).mean()
        print(
            f"kl_uniform_to_new {kl.item():.5f} probs_row0 {[round(v, 4) for v in new_dist.probs[0].tolist()]}"
        )
        approx_kl = (old_logp - new_dist.log_prob(actions)).mean()
        print(f"approx_kl {approx_kl.item():.5f}")

    # A continuous Gaussian policy with a state-independent log-std and tanh squashing.
    mu_net = nn.Linear(4, 2)
    det_init(mu_net)
    log_std = nn.Parameter(torch.full((2,), -0.5))
    pi = Independent(Normal(mu_net(obs), log_std.exp()), 1)
    print(
        f"independent batch {tuple(pi.batch_shape)} event {tuple(pi.event_shape)} logp0 {pi.log_prob(torch.zeros(T, 2))[0].item():.5f}"
    )
    a = pi.rsample()
    print(f"rsample_grad {a.requires_grad} sample_grad {pi.sample().requires_grad}")
    print(f"rng_a0 {a[0].tolist()}")
    squashed = TransformedDistribution(
        Normal(torch.zeros(2), torch.ones(2)),
        [TanhTransform(cache_size=1), AffineTransform(loc=0.0, scale=2.0)],
    )
    x = torch.tensor([0.5, -1.0])
    print(
        f"squashed_logp {[round(v, 5) for v in squashed.log_prob(x).tolist()]} support_check {squashed.support.check(torch.tensor([1.9, -2.5])).tolist()}"
    )
    n1, n2 = (
        Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])),
        Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0])),
    )
    print(
        f"kl_normal {[round(v, 5) for v in kl_divergence(n1, n2).tolist()]} entropy {[round(v, 5) for v in n1.entropy().tolist()]} cdf {[round(v, 5) for v in n1.cdf(torch.tensor([0.5, 0.5])).tolist()]} icdf {round(n1.icdf(torch.tensor([0.975, 0.5]))[0].item(), 4)}"
    )

    # The rest of the zoo.
    b = Bernoulli(logits=torch.tensor([0.0, 2.0]))
    print(
        f"bernoulli {[round(v, 5) for v in b.log_prob(torch.tensor([1.0, 0.0])).tolist()]} mean {[round(v, 4) for v in b.mean.tolist()]} ent {round(b.entropy().sum().item(), 5)}"
    )
    be = Beta(torch.tensor([2.0]), torch.tensor([3.0]))
    print(
        f"beta logp {be.log_prob(torch.tensor([0.4])).item():.5f} mean {be.mean.item():.4f} var {be.variance.item():.5f}"
    )
    g = Gamma(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 0.5]))
    print(
        f"gamma logp {[round(v, 5) for v in g.log_prob(torch.tensor([1.5, 4.0])).tolist()]} mean {g.mean.tolist()}"
    )
    d = Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
    print(
        f"dirichlet logp {d.log_prob(torch.tensor([0.2, 0.3, 0.5])).item():.5f} mean {[round(v, 4) for v in d.mean.tolist()]}"
    )
    cov = torch.tensor([[2.0, 0.3], [0.3, 1.0]])
    mvn = MultivariateNormal(torch.zeros(2), covariance_matrix=cov)
    mvn2 = MultivariateNormal(torch.ones(2), scale_tril=torch.linalg.cholesky(cov * 0.5))
    print(
        f"mvn logp {mvn.log_prob(torch.tensor([0.5, -0.5])).item():.5f} ent {mvn.entropy().item():.5f} kl {kl_divergence(mvn, mvn2).item():.5f}"
    )
    oh = OneHotCategorical(probs=torch.tensor([0.2, 0.5, 0.3]))
    print(
        f"onehot logp {oh.log_prob(torch.tensor([0.0, 1.0, 0.0])).item():.5f} shape {tuple(oh.sample((4,)).shape)}"
    )
    print(f"rng_onehot {oh.sample().tolist()}")
    print(
        f"uniform logp {Uniform(-1.0, 3.0).log_prob(torch.tensor(0.0)).item():.5f} laplace {Laplace(0.0, 2.0).log_prob(torch.tensor(1.0)).item():.5f} poisson {Poisson(torch.tensor(3.0)).log_prob(torch.tensor(2.0)).item():.5f}"
    )
    mix = MixtureSameFamily(
        Categorical(torch.tensor([0.3, 0.7])),
        Normal(torch.tensor([-1.0, 2.0]), torch.tensor([0.5, 1.0])),
    )
    print(
        f"mixture logp {mix.log_prob(torch.tensor([0.0, 2.0])).tolist()} mean {mix.mean.item():.4f}"
    )
    c = Categorical(probs=torch.tensor([[0.1, 0.9], [0.5, 0.5]]))
    print(
        f"categorical enumerate {c.enumerate_support().tolist()} samples_shape {tuple(c.sample((3,)).shape)} constraint {constraints.simplex.check(c.probs).tolist()}"
    )
    # Reparameterized ELBO-style gradient.
    mu = torch.tensor([0.3], requires_grad=True)
    q = Normal(mu, 1.0)
    torch.manual_seed(1)
    z = q.rsample((1000,))
    (z**2).mean().backward()
    print(f"reparam_grad_close {abs(mu.grad.item() - 0.6) < 0.2}")


if __name__ == "__main__":
    main()
