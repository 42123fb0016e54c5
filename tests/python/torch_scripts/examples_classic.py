"""Three of pytorch/examples' classic scripts, condensed as they are written there: the
polynomial "regression" example (poly features via torch.cat of x.pow(i), a Linear fitted by
hand with ``param.data.add_(-0.1 * param.grad)``, the ``poly_desc`` printout), the
"time_sequence_prediction" LSTMCell network in float64 trained with LBFGS and a future-step
rollout, and the actor-critic REINFORCE loop (namedtuple SavedAction, Categorical, discounted
returns normalised with np.finfo(np.float32).eps, smooth_l1 value loss) on a deterministic toy
environment."""

from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

POLY_DEGREE = 3
W_target = torch.tensor([[0.5], [-1.2], [0.3]])
b_target = torch.tensor([0.7])


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    result = "y = "
    for i, w in enumerate(W):
        result += "{:+.2f} x^{} ".format(w, i + 1)
    result += "{:+.2f}".format(b[0])
    return result


fc = torch.nn.Linear(W_target.size(0), 1)
with torch.no_grad():
    fc.weight.zero_()
    fc.bias.zero_()
for batch_idx in range(1, 2001):
    xs = torch.linspace(-1, 1, 32) * (1 + 0.1 * (batch_idx % 3))
    batch_x = make_features(xs)
    batch_y = f(batch_x)
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    if loss < 1e-5:
        break
print("regression_loss", "{:.6f}".format(loss), batch_idx < 2000)
print("learned", poly_desc(fc.weight.view(-1), fc.bias))
print("actual", poly_desc(W_target.view(-1), b_target))


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 16)
        self.lstm2 = nn.LSTMCell(16, 16)
        self.linear = nn.Linear(16, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


T, L, N = 20, 60, 8
x = np.empty((N, L), "int64")
x[:] = np.array(range(L)) + np.arange(N).reshape(N, 1) * 3
data = np.sin(x / 1.0 / T).astype("float64")
inp = torch.from_numpy(data[2:, :-1])
target = torch.from_numpy(data[2:, 1:])
test_input = torch.from_numpy(data[:2, :-1])
test_target = torch.from_numpy(data[:2, 1:])
seq = Sequence().double()
with torch.no_grad():
    for k, p in enumerate(seq.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.double) * 0.7 + k).view_as(p) * 0.25)
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
losses = []
for i in range(4):

    def closure():
        optimizer.zero_grad()
        out = seq(inp)
        loss = criterion(out, target)
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        future = 10
        pred = seq(test_input, future=future)
        loss = criterion(pred[:, :-future], test_target)
        losses.append(loss.item())
y = pred.detach().numpy()
print("lstm_losses", [round(v, 6) for v in losses], losses[-1] < losses[0])
print("lstm_pred", y.shape, y.dtype, round(float(y[0, -1]), 4))

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


model = Policy()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + k).view_as(p) * 0.3)
opt = optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()
gamma = 0.99


def finish_episode():
    R = 0
    saved_actions = model.saved_actions
    policy_losses, value_losses, returns = [], [], []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    opt.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    opt.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


# a deterministic episode: the "sampled" action is the argmax, so the figures are torch's
state = np.array([0.1, -0.2, 0.05, 0.0], dtype=np.float32)
ep_losses = []
for episode in range(5):
    s = state.copy()
    for t in range(12):
        probs, value = model(torch.from_numpy(s).float())
        m = Categorical(probs)
        action = probs.argmax()
        model.saved_actions.append(SavedAction(m.log_prob(action), value))
        s = s + (0.1 if action.item() == 1 else -0.1) * np.array(
            [1, 0.5, -0.5, 0.2], dtype=np.float32
        )
        model.rewards.append(float(1.0 - abs(s[0])))
    ep_losses.append(finish_episode())
print("actor_critic", [round(v, 4) for v in ep_losses], len(model.rewards))
probs, _ = model(torch.from_numpy(state).float())
print("policy", [round(v, 4) for v in probs.tolist()])
sampled = Categorical(probs).sample()
print("rng_action", sampled.item())
print("sample_shape", tuple(Categorical(probs).sample((3,)).shape), eps)
