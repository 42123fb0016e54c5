"""The boilerplate around a training loop: argparse, seeds, backend flags, matmul precision,
device selection, torch.compile, no_grad/inference_mode, generators, and plain-print logging."""

import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


def get_device(name):
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    return torch.device(name)


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.SiLU(), nn.Dropout(0.1), nn.Linear(16, 2))

    def forward(self, x):
        return self.net(x)


def main():
    parser = argparse.ArgumentParser(description="flags")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--compile", action="store_true", default=True)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    set_seed(args.seed)

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    print(f"matmul_precision {torch.get_float32_matmul_precision()}")
    torch.use_deterministic_algorithms(True, warn_only=True)
    print(f"deterministic {torch.are_deterministic_algorithms_enabled()}")
    print(f"mkldnn_flag {isinstance(torch.backends.mkldnn.is_available(), bool)}")
    print(f"cudnn_enabled_type {type(torch.backends.cudnn.enabled).__name__}")
    print(f"cuda {torch.cuda.is_available()} count {torch.cuda.device_count()}")
    torch.set_num_threads(2)
    print(f"threads {torch.get_num_threads()}")
    device = get_device(args.device)
    print(f"device {device} type {device.type}")
    print(f"default_dtype {torch.get_default_dtype()}")
    print(f"version_ok {isinstance(torch.__version__, str) and torch.__version__[0].isdigit()}")
    print(f"grad_enabled {torch.is_grad_enabled()}")

    x = torch.linspace(-1, 1, 64 * 4).reshape(64, 4).to(device)
    y = (x[:, 0] * x[:, 1] + x[:, 2] > 0).long().to(device)
    model = TinyNet().to(device)
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).view_as(p) * 0.5)
    compiled = torch.compile(model) if args.compile else model
    opt = torch.optim.SGD(compiled.parameters(), lr=args.lr, momentum=0.9)
    start = time.perf_counter()
    model.eval()  # no dropout: deterministic training
    for step in range(200):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(f"step {step:4d} | loss {loss.item():8.5f} | {time.perf_counter() - start >= 0}")
    print(f"final_loss {loss.item():.5f}")
    with torch.no_grad():
        out = compiled(x)
        print(f"no_grad_requires_grad {out.requires_grad}")
    with torch.inference_mode():
        inf = model(x)
        print(f"inference {inf.is_inference()} {torch.is_inference_mode_enabled()}")
    acc = (inf.argmax(1) == y).float().mean().item()
    print(f"acc {acc:.4f}")
    try:
        inf.add_(1)
        print("inplace_outside_inference ok")
    except RuntimeError as e:
        print(f"inplace_outside_inference {type(e).__name__}")
    try:
        (inf * 2).sum()
        F.linear(inf, model.net[0].weight).sum().backward()
    except RuntimeError as e:
        print(f"inference_backward {type(e).__name__}")

    @torch.compile(mode="reduce-overhead", fullgraph=False)
    def fused(a, b):
        return torch.relu(a @ b + 1.0).sum(dim=-1)

    a = torch.arange(12.0).reshape(3, 4) / 10
    b = torch.arange(8.0).reshape(4, 2) / 10
    print(f"compiled_fn {[round(v, 5) for v in fused(a, b).tolist()]}")
    print(f"compiler_is_compiling {torch.compiler.is_compiling()}")
    g = torch.Generator().manual_seed(123)
    print(f"generator_state {g.initial_seed()} {type(g.get_state()).__name__}")
    r1 = torch.rand(3, generator=g)
    g.manual_seed(123)
    print(f"generator_repeat {torch.equal(r1, torch.rand(3, generator=g))}")
    state = torch.get_rng_state()
    n1 = torch.randn(4)
    torch.set_rng_state(state)
    print(f"rng_state_repeat {torch.equal(n1, torch.randn(4))}")
    with torch.random.fork_rng():
        torch.randn(10)
    print(f"fork_rng_restored {torch.equal(torch.randn(4), torch.randn(4)) is False}")
    print(f"set_grad_enabled {torch.set_grad_enabled(False).__class__.__name__}")
    torch.set_grad_enabled(True)
    with torch.enable_grad():
        print(f"enable_grad {torch.is_grad_enabled()}")
    print(f"amp_autocast_cpu {torch.autocast('cpu', dtype=torch.bfloat16).fast_dtype}")
    print(
        f"np_interop {torch.from_numpy(np.arange(3)).dtype} {torch.tensor(np.float32(2.5)).item()}"
    )
    torch.set_printoptions(precision=3)
    print(f"print {torch.tensor([1.23456, 2.0])}")
    torch.set_printoptions(precision=2, sci_mode=False)
    print(f"print_fixed {torch.tensor([1e-5, 123.456])}")
    torch.set_printoptions(profile="default")
    print(f"finfo {torch.finfo(torch.float32).eps} {torch.iinfo(torch.int8).max}")


if __name__ == "__main__":
    main()
