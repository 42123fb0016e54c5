# ruff: noqa: E501
"""The shape of the classic MNIST example, on tiny synthetic digits: device-agnostic setup
through torch.accelerator, Dropout/Dropout2d, log_softmax + nll_loss, Adadelta with StepLR,
train/test functions with logging intervals, and a saved state_dict."""

import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def make_digits(n, offset):
    """Four 'digits': a bar in one of four orientations/places, with a little texture."""
    i = torch.arange(n) + offset
    labels = i % 4
    imgs = 0.05 * torch.cos(torch.arange(64, dtype=torch.float32) * 0.7).view(1, 1, 8, 8).repeat(
        n, 1, 1, 1
    )
    for k in range(n):
        c = int(labels[k])
        s = 1 + int(i[k]) % 3
        if c == 0:
            imgs[k, 0, s : s + 4, 1] = 1.0
        elif c == 1:
            imgs[k, 0, 1, s : s + 4] = 1.0
        elif c == 2:
            imgs[k, 0, s : s + 4, 6] = 1.0
        else:
            imgs[k, 0, 6, s : s + 4] = 1.0
    return TensorDataset((imgs - 0.1307) / 0.3081, labels)


def train(args, model, device, loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(
                "rng_train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch,
                    batch_idx * len(data),
                    len(loader.dataset),
                    100.0 * batch_idx / len(loader),
                    loss.item(),
                )
            )
            if args.dry_run:
                break


def test(model, device, loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(loader.dataset)
    return test_loss, correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description="digits example")
    parser.add_argument("--batch-size", type=int, default=16, metavar="N")
    parser.add_argument("--test-batch-size", type=int, default=64, metavar="N")
    parser.add_argument("--epochs", type=int, default=6, metavar="N")
    parser.add_argument("--lr", type=float, default=1.0, metavar="LR")
    parser.add_argument("--gamma", type=float, default=0.7, metavar="M")
    parser.add_argument("--no-accel", action="store_true")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--seed", type=int, default=1, metavar="S")
    parser.add_argument("--log-interval", type=int, default=4, metavar="N")
    parser.add_argument("--save-model", action="store_true", default=True)
    args = parser.parse_args()
    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    print(f"device {device} accel {use_accel}")
    train_kwargs = {"batch_size": args.batch_size, "shuffle": True}
    test_kwargs = {"batch_size": args.test_batch_size}
    if use_accel:
        accel_kwargs = {"num_workers": 1, "persistent_workers": True, "pin_memory": True}
        train_kwargs.update(accel_kwargs)
        test_kwargs.update(accel_kwargs)
    train_loader = DataLoader(make_digits(96, 0), **train_kwargs)
    test_loader = DataLoader(make_digits(40, 500), **test_kwargs)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    lrs = []
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test_loss, acc = test(model, device, test_loader)
        print(f"rng_test epoch {epoch} loss {test_loss:.4f} acc {acc:.4f}")
        scheduler.step()
        lrs.append(round(scheduler.get_last_lr()[0], 6))
    print(f"lrs {lrs}")
    print(f"learned {acc >= 0.9}")
    if args.save_model:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "digits_cnn.pt")
            torch.save(model.state_dict(), path)
            again = Net()
            again.load_state_dict(torch.load(path, weights_only=True))
            again.eval()
            x = next(iter(test_loader))[0]
            print(f"reloaded_same {torch.equal(again(x), model(x))}")
            print(f"param_count {sum(p.numel() for p in again.parameters())}")


if __name__ == "__main__":
    main()
