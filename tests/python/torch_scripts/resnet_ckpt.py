# ruff: noqa: E501
"""Small ResNet on a synthetic 4-class image task: a Dataset subclass fed by a
multi-worker DataLoader, three LR schedulers, and checkpoint save / resume."""

import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Shapes(Dataset):
    """Images whose class is the quadrant holding a bright blob."""

    def __init__(self, n, offset=0):
        self.n = n
        self.offset = offset

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        k = idx + self.offset
        label = k % 4
        img = 0.1 * torch.sin(
            torch.arange(144, dtype=torch.float32).view(1, 12, 12) * (0.3 + 0.01 * k)
        )
        r, c = divmod(label, 2)
        rr, cc = 1 + r * 6 + k % 3, 1 + c * 6 + (k // 3) % 3
        img[0, rr : rr + 2, cc : cc + 2] += 1.0
        return img, label


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(1, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True)
        )
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def det_init(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            if "bn" in name or name.startswith("stem.1") or "shortcut.1" in name:
                continue
            n = p.numel()
            p.copy_(
                (
                    torch.sin(torch.arange(n, dtype=torch.float32) * 0.613 + i)
                    * (2.0 / max(1, p[0].numel())) ** 0.5
                ).view_as(p)
            )


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    with torch.inference_mode():
        for x, y in loader:
            out = model(x)
            loss_sum += F.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            total += y.numel()
    model.train()
    return loss_sum / total, correct / total


def train_epoch(model, loader, opt, sched=None):
    last = None
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        last = loss.item()
    return last


def main():
    parser = argparse.ArgumentParser(description="resnet")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds, test_ds = Shapes(96), Shapes(32, offset=1000)
    train_loader = DataLoader(
        train_ds,
        batch_size=16,
        shuffle=False,
        num_workers=args.workers,
        persistent_workers=args.workers > 0,
    )
    test_loader = DataLoader(test_ds, batch_size=32)
    xb, yb = next(iter(train_loader))
    print(f"batch {tuple(xb.shape)} {xb.dtype} {yb.dtype} {yb[:6].tolist()}")
    print(f"len_loader {len(train_loader)} {len(test_loader)}")

    model = ResNet().to(device)
    det_init(model)
    opt = torch.optim.SGD(
        model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4
    )
    onecycle = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=0.1, epochs=args.epochs, steps_per_epoch=len(train_loader)
    )
    lrs = []
    for epoch in range(args.epochs):
        loss = train_epoch(model, train_loader, opt, onecycle)
        lrs.append(onecycle.get_last_lr()[0])
        print(f"epoch{epoch} loss {loss:.5f}")
    print(f"onecycle_lrs {[round(v, 6) for v in lrs]}")
    test_loss, acc = evaluate(model, test_loader)
    print(f"test_loss {test_loss:.5f} acc {acc:.4f}")

    # Checkpoint: model, optimizer, scheduler, epoch and a plain Python payload.
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=1e-4)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ckpt.pt")
        torch.save(
            {
                "epoch": args.epochs,
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "scheduler": cosine.state_dict(),
                "history": {"lrs": lrs, "acc": acc},
                "rng_state": torch.get_rng_state(),
            },
            path,
        )
        draw = torch.rand(3)
        cosine.step()
        ref_loss = train_epoch(model, train_loader, opt)
        ref_w = model.fc.weight.detach().clone()

        ckpt = torch.load(path, map_location="cpu", weights_only=False)
        model2 = ResNet()
        missing = model2.load_state_dict(ckpt["model"], strict=True)
        print(f"load_result {missing}")
        opt2 = torch.optim.SGD(
            model2.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4
        )
        opt2.load_state_dict(ckpt["optimizer"])
        cos2 = torch.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=6, eta_min=1e-4)
        cos2.load_state_dict(ckpt["scheduler"])
        cos2.step()
        print(f"resume_epoch {ckpt['epoch']} keys {sorted(ckpt)}")
        torch.set_rng_state(ckpt["rng_state"])
        print(f"rng_restored {torch.equal(torch.rand(3), draw)} {ckpt['rng_state'].dtype}")
        print(
            f"opt_state_keys {sorted(ckpt['optimizer'])} groups {len(ckpt['optimizer']['param_groups'])}"
        )
        print(f"cosine_lr {cos2.get_last_lr()[0]:.6f} {cosine.get_last_lr()[0]:.6f}")
        res_loss = train_epoch(model2, train_loader, opt2)
        print(
            f"resume_matches {abs(res_loss - ref_loss) < 1e-5} {torch.allclose(model2.fc.weight, ref_w, atol=1e-6)}"
        )
        sd_only = os.path.join(d, "weights.pt")
        torch.save(model2.state_dict(), sd_only)
        sd = torch.load(sd_only, weights_only=True)
        print(
            f"sd_keys {len(sd)} first {list(sd)[:3]} bn_tracked {sd['stem.1.num_batches_tracked'].item()}"
        )
        bad = dict(sd)
        bad.pop("fc.bias")
        bad["extra.weight"] = torch.zeros(1)
        res = model2.load_state_dict(bad, strict=False)
        print(f"nonstrict missing {res.missing_keys} unexpected {res.unexpected_keys}")
        try:
            model2.load_state_dict(bad)
        except RuntimeError as e:
            print(f"strict_error {str(e).splitlines()[0]}")

    plateau_opt = torch.optim.Adam([nn.Parameter(torch.zeros(2))], lr=1.0)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
        plateau_opt, mode="min", factor=0.5, patience=1
    )
    seen = []
    for metric in [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8]:
        plateau.step(metric)
        seen.append(plateau_opt.param_groups[0]["lr"])
    print(f"plateau_lrs {seen}")
    step_opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
    chained = torch.optim.lr_scheduler.SequentialLR(
        step_opt,
        [
            torch.optim.lr_scheduler.LinearLR(step_opt, start_factor=0.1, total_iters=3),
            torch.optim.lr_scheduler.StepLR(step_opt, step_size=2, gamma=0.5),
        ],
        milestones=[3],
    )
    seq = []
    for _ in range(8):
        step_opt.step()
        chained.step()
        seq.append(round(step_opt.param_groups[0]["lr"], 6))
    print(f"sequential_lrs {seq}")


if __name__ == "__main__":
    main()
