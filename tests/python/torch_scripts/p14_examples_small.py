"""Three pytorch/examples programs scaled down, on synthetic data: the forward-forward
algorithm (labels overlaid on the input with range indexing, a layer-local loss per Linear
subclass with its own Adam), a differentiable mass-spring simulation (in-place force
accumulation into a tensor built each step, a fixed particle re-pinned by assignment), and the
actor-critic policy gradient (Categorical policy, discounted returns normalised with
numpy's float32 eps, smooth_l1 value loss)."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical
from torch.optim import Adam

# ---- forward-forward -----------------------------------------------------------------


def overlay_y_on_x(x, y, classes=4):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        with torch.no_grad():
            self.weight.copy_(
                torch.linspace(-0.3, 0.3, self.weight.numel()).reshape(self.weight.shape).sin()
            )
            self.bias.fill_(0.01)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=0.03)
        self.threshold = 2.0
        self.num_epochs = 12

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(
                torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))
            ).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if i % 4 == 0:
                print("Loss: ", round(loss.item(), 5))
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1])]

    def predict(self, x):
        goodness_per_label = []
        for label in range(4):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        return torch.cat(goodness_per_label, 1).argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)


x = torch.linspace(0, 1, 32 * 12).reshape(32, 12).pow(2)
y = torch.arange(32) % 4
x = x + F.one_hot(y, 12).float() * 0.5
x_pos = overlay_y_on_x(x, y)
y_neg = (y + 1 + torch.arange(32) % 3) % 4
x_neg = overlay_y_on_x(x, y_neg)
net = Net([12, 10, 10])
net.train(x_pos, x_neg)
print("ff_train_error:", round(1.0 - net.predict(x).eq(y).float().mean().item(), 4))

# ---- mass-spring ------------------------------------------------------------------------


class MassSpringSystem(nn.Module):
    def __init__(self, num_particles, springs, mass=1.0, dt=0.01, gravity=9.81):
        super().__init__()
        self.mass, self.springs, self.dt, self.gravity = mass, springs, dt, gravity
        self.initial_position_0 = torch.tensor([0.0, 0.0])
        self.initial_positions_rest = nn.Parameter(
            torch.linspace(0.2, 1.0, (num_particles - 1) * 2).reshape(num_particles - 1, 2)
        )
        self.velocities = torch.zeros(num_particles, 2)

    def forward(self, steps):
        positions = torch.cat(
            [self.initial_position_0.unsqueeze(0), self.initial_positions_rest], dim=0
        )
        velocities = self.velocities
        for _ in range(steps):
            forces = torch.zeros_like(positions)
            for i, j, rest_length, stiffness in self.springs:
                xi, xj = positions[i], positions[j]
                dir_vec = xj - xi
                dist = dir_vec.norm()
                force = stiffness * (dist - rest_length) * dir_vec / (dist + 1e-6)
                forces[i] += force
                forces[j] -= force
            forces[:, 1] -= self.gravity * self.mass
            acceleration = forces / self.mass
            velocities = velocities + acceleration * self.dt
            positions = positions + velocities * self.dt
            positions[0] = self.initial_position_0
            velocities[0] = torch.tensor([0.0, 0.0])
        return positions


system = MassSpringSystem(3, springs=[(0, 1, 1.0, 10.0), (1, 2, 0.5, 5.0)])
optimizer = torch.optim.Adam(system.parameters(), lr=0.01)
target_positions = torch.tensor([[0.0, 0.0], [1.0, 0.0], [1.5, 0.0]])
for epoch in range(30):
    optimizer.zero_grad()
    final_positions = system(12)
    loss = (final_positions - target_positions).pow(2).mean()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 10 == 0:
        print(f"Epoch {epoch + 1}/30, Loss: {loss.item():.6f}")
print("Final positions:", np.round(final_positions.detach().cpu().numpy(), 4).tolist())
print("spring_grad_fn", type(final_positions.grad_fn).__name__)

# ---- actor-critic -----------------------------------------------------------------------


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 16)
        self.action_head = nn.Linear(16, 2)
        self.value_head = nn.Linear(16, 1)
        self.saved_actions = []
        self.rewards = []
        with torch.no_grad():
            for i, p in enumerate(self.parameters()):
                p.copy_(
                    torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape).cos() * (0.3 + 0.1 * i)
                )

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


model = Policy()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()
gamma = 0.99
torch.manual_seed(0)
for episode in range(3):
    state = np.array([0.01, -0.02, 0.03, 0.0], dtype=np.float32)
    for t in range(12):
        s = torch.from_numpy(state).float()
        probs, state_value = model(s)
        m = Categorical(probs)
        action = m.sample()
        model.saved_actions.append((m.log_prob(action), state_value))
        push = 1.0 if action.item() == 1 else -1.0
        state = (
            state + np.array([state[1], push * 0.1, state[3], -push * 0.05], dtype=np.float32)
        ).astype(np.float32)
        model.rewards.append(1.0 - abs(float(state[2])))
    R, policy_losses, value_losses, returns = 0, [], [], []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(model.saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    print("rng_episode", episode, round(loss.item(), 4))
    del model.rewards[:]
    del model.saved_actions[:]
probs, value = model(torch.zeros(4))
print(
    "policy_at_zero",
    probs.shape,
    value.shape,
    type(probs.grad_fn).__name__,
    type(value.grad_fn).__name__,
)
print("eps", eps)
