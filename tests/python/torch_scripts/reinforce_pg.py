"""Policy-gradient RL as the PyTorch reinforce example writes it, on a tiny deterministic
corridor environment: a Categorical policy from logits with masking of illegal actions, a
Gaussian policy with a state-independent log_std squashed by TanhTransform for a continuous
task, discounted returns computed backwards, baseline normalisation with std, an entropy bonus,
log_prob / entropy through Independent, and a value baseline trained with smooth_l1_loss.
Actions are taken greedily (mode / mean) so the figures are deterministic; sampling is shown
under rng_ keys."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Independent, Normal, TransformedDistribution
from torch.distributions.transforms import AffineTransform, TanhTransform


class Corridor:
    """Walk left/right/stay on positions 0..4; reward 1 at the right end, episode of 6 steps."""

    def __init__(self):
        self.pos = 0

    def reset(self):
        self.pos = 0
        return self.obs()

    def obs(self):
        return F.one_hot(torch.tensor(self.pos), 5).float()

    def legal(self):
        return torch.tensor([self.pos > 0, True, self.pos < 4])

    def step(self, a):
        self.pos = max(0, min(4, self.pos + (a - 1)))
        return self.obs(), float(self.pos == 4) - 0.01


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 16), nn.Tanh())
        self.pi = nn.Linear(16, 3)
        self.v = nn.Linear(16, 1)

    def forward(self, s):
        h = self.body(s)
        return self.pi(h), self.v(h).squeeze(-1)


def discounted(rewards, gamma=0.9):
    R, out = 0.0, []
    for r in reversed(rewards):
        R = r + gamma * R
        out.insert(0, R)
    return torch.tensor(out)


def det_fill(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                (torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.91 + i) * 0.4).view_as(
                    p
                )
            )


def main():
    env, policy = Corridor(), Policy()
    det_fill(policy)
    opt = torch.optim.Adam(policy.parameters(), lr=0.03)
    eps = torch.finfo(torch.float32).eps
    log = []
    for episode in range(5):
        s = env.reset()
        log_probs, values, rewards, entropies, actions = [], [], [], [], []
        for t in range(6):
            logits, value = policy(s)
            logits = logits.masked_fill(~env.legal(), float("-inf"))
            dist = Categorical(logits=logits)
            a = dist.mode if episode % 2 == 0 else torch.argmax(dist.probs)
            log_probs.append(dist.log_prob(a))
            entropies.append(dist.entropy())
            values.append(value)
            s, r = env.step(int(a))
            rewards.append(r)
            actions.append(int(a))
        returns = discounted(rewards)
        values = torch.stack(values)
        adv = returns - values.detach()
        adv = (adv - adv.mean()) / (adv.std() + eps)
        policy_loss = -(torch.stack(log_probs) * adv).sum()
        value_loss = F.smooth_l1_loss(values, returns)
        loss = policy_loss + 0.5 * value_loss - 0.01 * torch.stack(entropies).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append((actions, round(returns[0].item(), 4), round(loss.item(), 4)))
    for i, entry in enumerate(log):
        print("episode", i, entry)

    # masked distribution facts
    d = Categorical(logits=torch.tensor([float("-inf"), 0.0, 1.0]))
    print("masked_probs", [round(p, 4) for p in d.probs.tolist()], round(d.entropy().item(), 5))
    print(
        "masked_logprob",
        d.log_prob(torch.tensor(0)).item(),
        round(d.log_prob(torch.tensor(2)).item(), 5),
    )
    print("rng_sample", d.sample((4,)).tolist())

    # continuous actions: tanh-squashed Gaussian scaled to [-2, 2] (SAC-style log-prob correction)
    mu = nn.Linear(3, 2)
    log_std = nn.Parameter(torch.full((2,), -0.5))
    with torch.no_grad():
        mu.weight.copy_(torch.tensor([[0.2, -0.1, 0.3], [0.0, 0.4, -0.2]]))
        mu.bias.zero_()
    obs = torch.tensor([[1.0, 0.5, -0.5], [0.2, -1.0, 0.3]])
    base = Independent(Normal(mu(obs), log_std.exp()), 1)
    squashed = TransformedDistribution(
        base, [TanhTransform(cache_size=1), AffineTransform(0.0, 2.0)]
    )
    act = torch.tensor([[0.5, -1.0], [1.5, 0.2]])
    lp = squashed.log_prob(act)
    pre_tanh = torch.atanh(act / 2)
    manual = base.log_prob(pre_tanh) - (
        torch.log(2 * (1 - torch.tanh(pre_tanh).pow(2)) + 1e-12)
    ).sum(-1)
    print("squashed_lp", [round(v, 4) for v in lp.tolist()], torch.allclose(lp, manual, atol=1e-4))
    print(
        "shapes",
        tuple(squashed.batch_shape),
        tuple(squashed.event_shape),
        tuple(base.entropy().shape),
    )
    (-lp.mean()).backward()
    print(
        "grads",
        [round(v, 4) for v in log_std.grad.tolist()],
        round(mu.weight.grad.abs().sum().item(), 4),
    )
    a = squashed.rsample()
    print("rsample_bounds", tuple(a.shape), bool((a.abs() <= 2).all()), a.requires_grad)


if __name__ == "__main__":
    main()
