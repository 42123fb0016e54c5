# ruff: noqa: E501
"""Fault-tolerant training as production scripts write it: a model with Dropout and a shuffled
DataLoader (a seeded generator), a checkpoint written atomically (temp file + os.replace) with
model / optimizer / scheduler / GradScaler state, epoch and global step, and every RNG state
(torch.get_rng_state, the loader generator's get_state, Python's random and numpy's), then a
fresh process-like rebuild that loads it with weights_only=False, restores the RNGs and resumes
bit-exactly; map_location, a state_dict saved as a whole training "bundle" with extra
metadata, and torch.load(weights_only=True) refusing a non-tensor object."""

import argparse
import os
import pickle
import random
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.29 + 0.019 * k * k + i) * scale).view_as(p))


X = torch.linspace(-1, 1, 120).view(30, 4)
Y = (X.sum(1) + torch.sin(3 * X[:, 0]) > 0).long()


def build(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))
    det_init(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=40)
    gen = torch.Generator().manual_seed(99)
    loader = DataLoader(TensorDataset(X, Y), batch_size=8, shuffle=True, generator=gen)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    return model, opt, sched, loader, gen, scaler


def run_epochs(model, opt, sched, loader, scaler, epochs, log):
    for _ in range(epochs):
        model.train()
        for xb, yb in loader:
            noise = 0.01 * random.random() + 0.01 * float(np.random.rand())
            opt.zero_grad()
            loss = F.cross_entropy(model(xb + noise), yb)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            log.append(loss.item())


def save_checkpoint(path, model, opt, sched, scaler, gen, epoch, step):
    state = {
        "epoch": epoch,
        "global_step": step,
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "scheduler": sched.state_dict(),
        "scaler": scaler.state_dict(),
        "rng": {
            "torch": torch.get_rng_state(),
            "loader": gen.get_state(),
            "python": random.getstate(),
            "numpy": np.random.get_state(),
        },
        "meta": {"arch": "mlp", "lr_history": [g["lr"] for g in opt.param_groups]},
        "args": argparse.Namespace(lr=0.01, epochs=10, arch="mlp"),
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def main():
    random.seed(5)
    np.random.seed(5)
    model, opt, sched, loader, gen, scaler = build()
    straight = []
    run_epochs(model, opt, sched, loader, scaler, 10, straight)
    final_straight = [p.detach().clone() for p in model.parameters()]
    print(f"straight steps {len(straight)} lr_end {sched.get_last_lr()[0]:.6f}")
    print(f"rng_straight_first {straight[0]:.5f}")

    random.seed(5)
    np.random.seed(5)
    model, opt, sched, loader, gen, scaler = build()
    first = []
    run_epochs(model, opt, sched, loader, scaler, 4, first)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "last.ckpt")
        save_checkpoint(path, model, opt, sched, scaler, gen, epoch=4, step=len(first))
        print(f"files {sorted(os.listdir(d))}")
        # Scramble every RNG, then rebuild from scratch and restore.
        random.seed(123)
        np.random.seed(123)
        torch.manual_seed(123)
        model, opt, sched, loader, gen, scaler = build(seed=77)
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        sched.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        torch.set_rng_state(ckpt["rng"]["torch"])
        gen.set_state(ckpt["rng"]["loader"])
        random.setstate(ckpt["rng"]["python"])
        np.random.set_state(ckpt["rng"]["numpy"])
        print(
            f"ckpt epoch {ckpt['epoch']} step {ckpt['global_step']} keys {sorted(ckpt)} rng_types {[type(ckpt['rng'][k]).__name__ for k in ('torch', 'loader', 'python', 'numpy')]} args {ckpt['args'].epochs}"
        )
        print(
            f"sched_state {sorted(k for k in ckpt['scheduler'] if not k.startswith('_'))[:6]} step_count {ckpt['scheduler']['_step_count']} opt_step {ckpt['optimizer']['state'][0]['step'].item()}"
        )
        rest = []
        run_epochs(model, opt, sched, loader, scaler, 6, rest)
        try:
            torch.load(path, weights_only=True)
            print("weights_only_refused False")
        except pickle.UnpicklingError as e:  # argparse.Namespace is not an allowed global
            print(f"weights_only_refused True message {'Weights only load failed' in str(e)}")
        torch.save({"model": model.state_dict(), "step": 40}, os.path.join(d, "w.pt"))
        w = torch.load(os.path.join(d, "w.pt"), weights_only=True, mmap=True)
        print(f"weights_only_ok {sorted(w)} tensors {len(w['model'])}")
    same_losses = [round(v, 6) for v in first + rest] == [round(v, 6) for v in straight]
    same_params = all(torch.equal(a, b) for a, b in zip(final_straight, model.parameters()))
    print(
        f"resumed_bit_exact losses {same_losses} params {same_params} lr_end {sched.get_last_lr()[0]:.6f}"
    )
    print(f"rng_last_loss {straight[-1]:.5f}")


if __name__ == "__main__":
    main()
