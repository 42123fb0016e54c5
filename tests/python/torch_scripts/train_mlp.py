"""An ordinary PyTorch training script (run unmodified by tests/python/test_dropin_run.py)."""

import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from _helper import make_data
from torch.utils.data import DataLoader


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    net = Net()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
    dataset, helper_torch = make_data()
    loader = DataLoader(dataset, batch_size=16, shuffle=False)
    opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(args.epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = F.binary_cross_entropy_with_logits(net(x), y)
            loss.backward()
            opt.step()
    print(f"loss {loss.item():.5f}")
    print(f"argv {sys.argv[1:]}")
    print(f"tensor-module {type(torch.zeros(1)).__module__}")
    print(f"names {torch.__name__} {nn.__name__} {F.__name__} {helper_torch}")
    print(f"accelerator {torch.accelerator.is_available()}")


if __name__ == "__main__":
    main()
