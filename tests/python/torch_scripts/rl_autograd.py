# ruff: noqa: E501
"""REINFORCE and actor-critic on a tiny pure-Python environment, plus the autograd tools such
programs reach for: custom autograd.Function with gradcheck, double backward for a gradient
penalty, autograd.functional, anomaly detection and retain_graph."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.distributions import Categorical


class Corridor:
    """Walk left/right on a line; reward 1 at the right end, episode ends at either end."""

    def __init__(self, n=5):
        self.n = n

    def reset(self):
        self.pos = self.n // 2
        return self._obs()

    def _obs(self):
        o = np.zeros(self.n, dtype=np.float32)
        o[self.pos] = 1.0
        return o

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        done = self.pos in (0, self.n - 1)
        reward = 1.0 if self.pos == self.n - 1 else (-1.0 if self.pos == 0 else -0.01)
        return self._obs(), reward, done


class Policy(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.affine1 = nn.Linear(n, 16)
        self.action_head = nn.Linear(16, 2)
        self.value_head = nn.Linear(16, 1)
        self.saved = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


def select_action(policy, state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs, value = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved.append((m.log_prob(action), value))
    return action.item()


def finish_episode(policy, optimizer, gamma=0.9):
    eps = np.finfo(np.float32).eps.item()
    R, returns = 0.0, []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    if len(returns) > 1:
        returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_losses, value_losses = [], []
    for (log_prob, value), R in zip(policy.saved, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([[R]])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved[:]


class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class ClampSTE(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.mark_non_differentiable
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, g):
        return g, None, None


class ScaledMul(Function):
    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        return a * b * scale

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g * b * ctx.scale if ctx.needs_input_grad[0] else None
        gb = g * a * ctx.scale if ctx.needs_input_grad[1] else None
        return ga, gb, None


def main():
    torch.manual_seed(543)
    np.random.seed(543)
    env = Corridor()
    policy = Policy(env.n)
    optimizer = optim.Adam(policy.parameters(), lr=3e-2)
    lengths, finals = [], []
    for episode in range(100):
        state, ep_len = env.reset(), 0
        for t in range(1, 30):
            action = select_action(policy, state)
            state, reward, done = env.step(action)
            policy.rewards.append(reward)
            ep_len = t
            if done:
                break
        finals.append(reward)
        finish_episode(policy, optimizer)
        lengths.append(ep_len)
    with torch.no_grad():
        probs, _ = policy(torch.from_numpy(env.reset()).unsqueeze(0))
    print(f"rng_episode_lengths {lengths[-5:]}")
    print(f"rng_right_prob {probs[0, 1].item():.4f}")
    print(f"learned_right {sum(r > 0 for r in finals[-20:]) >= 15}")

    x = torch.tensor([0.1, -0.3, 0.7], dtype=torch.double, requires_grad=True)
    print(f"gradcheck_exp {gradcheck(MyExp.apply, (x,), eps=1e-6, atol=1e-4)}")
    print(f"gradgradcheck_exp {gradgradcheck(lambda t: t.exp().pow(2), (x,))}")
    a = torch.randn(3, dtype=torch.double, requires_grad=True)
    b = torch.randn(3, dtype=torch.double, requires_grad=False)
    out = ScaledMul.apply(a, b, 2.0)
    out.sum().backward()
    print(f"needs_input_grad {torch.allclose(a.grad, 2 * b)} b_grad_none {b.grad is None}")
    ste = ClampSTE.apply(torch.tensor([-2.0, 0.5, 3.0], requires_grad=True), -1.0, 1.0)
    print(f"ste_grad_fn {type(ste.grad_fn).__name__.startswith('ClampSTE')}")

    # Gradient penalty (WGAN-GP): gradient of the critic w.r.t. its input, differentiated again.
    critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    with torch.no_grad():
        for i, p in enumerate(critic.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) + i).view_as(p) * 0.5)
    real = torch.linspace(-1, 1, 12).reshape(3, 4)
    fake = torch.cos(torch.arange(12.0)).reshape(3, 4)
    alpha = torch.tensor([[0.2], [0.5], [0.8]])
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d = critic(interp)
    grads = torch.autograd.grad(
        outputs=d,
        inputs=interp,
        grad_outputs=torch.ones_like(d),
        create_graph=True,
        retain_graph=True,
    )[0]
    gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    gp.backward()
    print(f"gp {gp.item():.6f} w_grad {critic[0].weight.grad.abs().sum().item():.6f}")

    f = lambda v: (v**3).sum()  # noqa: E731
    v = torch.tensor([1.0, 2.0])
    print(f"af_jacobian {torch.autograd.functional.jacobian(lambda v: v**2, v).tolist()}")
    print(f"af_hessian {torch.autograd.functional.hessian(f, v).tolist()}")
    print(f"af_vjp {torch.autograd.functional.vjp(lambda v: v**2, v, torch.ones(2))[1].tolist()}")
    print(
        f"af_jacobian_vectorized {torch.autograd.functional.jacobian(lambda v: v.sin() * v, v, vectorize=True).tolist()}"
    )
    vv = v.clone().requires_grad_(True)
    rows = torch.autograd.grad(vv**2, vv, grad_outputs=torch.eye(2), is_grads_batched=True)[0]
    print(f"grads_batched {rows.tolist()}")
    print(f"af_hvp {torch.autograd.functional.hvp(f, v, torch.ones(2))[1].tolist()}")

    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    y.backward()
    print(f"retain_graph_accumulate {w.grad.tolist()}")
    try:
        y2 = (w * 3).sum()
        y2.backward()
        y2.backward()
    except RuntimeError as e:
        print(f"second_backward {type(e).__name__} {'second time' in str(e)}")
    with torch.autograd.set_detect_anomaly(True):
        z = torch.tensor([4.0], requires_grad=True)
        z.sqrt().backward()
    print(f"anomaly_ok {z.grad.item():.4f} detect {torch.is_anomaly_enabled()}")
    print(
        f"requires_grad_flow {(w * 2).detach().requires_grad} {(w.data * 2).requires_grad} {w.clone().requires_grad}"
    )
    leaf = torch.zeros(2, requires_grad=True)
    try:
        leaf.add_(1)
    except RuntimeError as e:
        print(f"leaf_inplace {type(e).__name__}")
    nl = leaf * 1
    nl.retain_grad()
    nl.sum().backward()
    print(f"retain_grad {nl.grad.tolist()} is_leaf {leaf.is_leaf} {nl.is_leaf}")
    print(f"grad_mode_fn {torch.no_grad()(lambda: (w * 2).requires_grad)()}")
    print(f"math {math.isclose(torch.tensor(2.0).exp().item(), math.exp(2.0), rel_tol=1e-6)}")


if __name__ == "__main__":
    main()
