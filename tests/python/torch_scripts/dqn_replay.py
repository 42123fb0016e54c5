"""The DQN tutorial's shape on a tiny deterministic grid world: a replay memory (deque of
namedtuples, sampled deterministically here), policy and target networks with a soft update
through state_dict, epsilon-greedy with a decay schedule, gather of Q(s, a), max(1).values of
the next states under no_grad with a non-final mask, SmoothL1Loss, AdamW(amsgrad) and
clip_grad_value_."""

import math
from collections import deque, namedtuple

import torch
import torch.nn as nn
import torch.optim as optim

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))
N_STATES, N_ACTIONS, GOAL = 8, 2, 7
BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 16, 0.9, 0.9, 0.05, 50, 0.05, 1e-3


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)
        self.cursor = 0

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        # deterministic stand-in for random.sample
        n = len(self.memory)
        idx = [(self.cursor + 7 * i) % n for i in range(batch_size)]
        self.cursor += 3
        return [self.memory[i] for i in idx]

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super().__init__()
        self.layer1 = nn.Linear(n_observations, 32)
        self.layer2 = nn.Linear(32, 32)
        self.layer3 = nn.Linear(32, n_actions)

    def forward(self, x):
        x = torch.relu(self.layer1(x))
        x = torch.relu(self.layer2(x))
        return self.layer3(x)


def one_hot_state(s):
    return nn.functional.one_hot(torch.tensor([s]), N_STATES).float()


def env_step(s, a):
    s2 = max(0, min(N_STATES - 1, s + (1 if a == 1 else -1)))
    done = s2 == GOAL
    return s2, (1.0 if done else -0.05), done


def det_init(model, k0=0):
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_(
                (
                    torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + k + k0) * 0.3
                ).view_as(p)
            )


def main():
    policy_net = DQN(N_STATES, N_ACTIONS)
    target_net = DQN(N_STATES, N_ACTIONS)
    det_init(policy_net)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(200)
    steps_done = 0
    counter = 0

    def select_action(state):
        nonlocal steps_done, counter
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1.0 * steps_done / EPS_DECAY)
        steps_done += 1
        counter = (counter * 37 + 11) % 101
        if counter / 101 > eps_threshold:
            with torch.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        return torch.tensor([[counter % N_ACTIONS]], dtype=torch.long)

    losses = []

    def optimize_model():
        if len(memory) < BATCH_SIZE:
            return
        transitions = memory.sample(BATCH_SIZE)
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(
            tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool
        )
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(BATCH_SIZE)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        losses.append(loss.item())

    durations = []
    for episode in range(12):
        s = episode % 4
        state = one_hot_state(s)
        for t in range(30):
            action = select_action(state)
            s, reward, done = env_step(s, action.item())
            reward = torch.tensor([reward])
            next_state = None if done else one_hot_state(s)
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = policy_net_state_dict[
                    key
                ] * TAU + target_net_state_dict[key] * (1 - TAU)
            target_net.load_state_dict(target_net_state_dict)
            if done:
                break
        durations.append(t + 1)
    print(f"durations {durations}")
    print(f"memory {len(memory)} steps {steps_done} updates {len(losses)}")
    print(f"loss_first {losses[0]:.6f} loss_last {losses[-1]:.6f}")
    with torch.no_grad():
        q = policy_net(torch.eye(N_STATES))
        qt = target_net(torch.eye(N_STATES))
    print(f"greedy {q.argmax(1).tolist()}")
    print(f"q_policy {[round(v, 4) for v in q[:, 1].tolist()]}")
    print(f"q_target {[round(v, 4) for v in qt[:, 0].tolist()]}")
    print(f"amsgrad_state {sorted(optimizer.state[policy_net.layer1.weight].keys())}")


if __name__ == "__main__":
    main()
