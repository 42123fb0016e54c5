"""Quantize the Fashion-MNIST CNN of examples/fashion_mnist.py to int8, two ways, and compare
test accuracies: static post-training quantization (eager mode, or FX with --fx) and one epoch
of quantization-aware training. The same program runs under PyTorch with --backend torch.

    python examples/fashion_mnist.py                       # trains and writes the checkpoint
    python examples/quantize_fashion_mnist.py              # float / PTQ / QAT accuracies
    python examples/quantize_fashion_mnist.py --fx         # PTQ through prepare_fx/convert_fx
    python examples/quantize_fashion_mnist.py --backend torch

Without a checkpoint the float model is trained here first (--epochs).
"""

import argparse
import copy
import importlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_mnist as fm  # noqa: E402  (the model, data and training loop)

# Sequential indices of build_model's layers: (conv, bn, relu) twice, then (linear, relu).
FUSE = [["body.0", "body.1", "body.2"], ["body.4", "body.5", "body.6"], ["body.9", "body.10"]]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("ember", "torch"), default="ember")
    p.add_argument(
        "--checkpoint", default=None, help="default: runs/fashion_mnist/checkpoint_<backend>.pt"
    )
    p.add_argument(
        "--epochs", type=int, default=5, help="float training when there is no checkpoint"
    )
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--qat-lr", type=float, default=1e-4)
    p.add_argument("--calibration-batches", type=int, default=32)
    p.add_argument("--fx", action="store_true", help="post-training quantization in FX mode")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--train-limit", type=int, default=None)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def quantizable(torch, body):
    """body between a QuantStub and a DeQuantStub (eager mode marks where int8 starts/ends)."""
    aq = torch.ao.quantization

    class Quantizable(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = aq.QuantStub()
            self.body = body
            self.dequant = aq.DeQuantStub()

        def forward(self, x):
            return self.dequant(self.body(self.quant(x)))

    return Quantizable()


def loader(torch, x, y, batch_size, seed):
    data = importlib.import_module(torch.__name__ + ".utils.data")
    dataset = data.TensorDataset(x, y)
    order = torch.Generator()
    order.manual_seed(seed)
    batches = data.BatchSampler(data.RandomSampler(dataset, generator=order), batch_size, False)
    return data.DataLoader(dataset, sampler=batches, batch_size=None)


def load_state(torch, path):
    """The checkpoint's model state; an ember checkpoint also loads into torch (via numpy)."""
    try:
        return torch.load(path)["model"]
    except Exception:
        import ember

        state = ember.load(path)["model"]
        return {k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()}


def float_model(torch, args, train_x, train_y):
    model = fm.build_model(torch.nn)
    path = args.checkpoint or os.path.join("runs", "fashion_mnist", f"checkpoint_{args.backend}.pt")
    if os.path.exists(path):
        model.load_state_dict(load_state(torch, path))
        print(f"float model from {path}")
        return model
    print(f"no checkpoint at {path}: training {args.epochs} epochs")
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    batches = loader(torch, train_x, train_y, args.batch_size, args.seed)
    steps = len(batches) if args.max_steps is None else min(len(batches), args.max_steps)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs * steps)
    for epoch in range(1, args.epochs + 1):
        fm.train_epoch(torch, model, opt, sched, batches, epoch, args.max_steps)
    return model


def calibrate(torch, model, x, batches, batch_size):
    with torch.no_grad():
        for i in range(batches):
            model(x[i * batch_size : (i + 1) * batch_size])


def post_training(torch, model, args, train_x, example):
    aq = torch.ao.quantization
    m = quantizable(torch, copy.deepcopy(model)).eval()
    if args.fx:
        fx = importlib.import_module(torch.__name__ + ".ao.quantization.quantize_fx")
        prepared = fx.prepare_fx(m, aq.get_default_qconfig_mapping("x86"), (example,))
        calibrate(torch, prepared, train_x, args.calibration_batches, args.batch_size)
        return fx.convert_fx(prepared)
    m.qconfig = aq.get_default_qconfig("x86")
    prepared = aq.prepare(aq.fuse_modules(m, FUSE))
    calibrate(torch, prepared, train_x, args.calibration_batches, args.batch_size)
    return aq.convert(prepared)


def quantization_aware(torch, model, args, train_x, train_y):
    aq = torch.ao.quantization
    nniqat = importlib.import_module(torch.__name__ + ".ao.nn.intrinsic.qat")
    m = quantizable(torch, copy.deepcopy(model)).train()
    m.qconfig = aq.get_default_qat_qconfig("x86")
    qat = aq.prepare_qat(aq.fuse_modules_qat(m, FUSE))
    opt = torch.optim.Adam(qat.parameters(), lr=args.qat_lr)
    batches = loader(torch, train_x, train_y, args.batch_size, args.seed + 1)
    total = len(batches) if args.max_steps is None else min(len(batches), args.max_steps)
    # The rate decays to zero over the epoch (a cosine, as the float run's), so training ends
    # on settled weights and qparams.
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, total)
    F = torch.nn.functional
    qat.train()
    for step, (xb, yb) in enumerate(batches, 1):
        if step > total:
            break
        if step == int(0.6 * total):  # as torch's recipe: freeze BN statistics, then observers
            qat.apply(nniqat.freeze_bn_stats)
        if step == int(0.8 * total):
            qat.apply(aq.disable_observer)
        opt.zero_grad()
        F.cross_entropy(qat(xb), yb).backward()
        opt.step()
        sched.step()
    qat.eval()
    return aq.convert(qat)


def main(argv=None):
    args = parse_args(argv)
    torch = importlib.import_module(args.backend)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.backend == "torch":
        torch.backends.quantized.engine = "x86"
    train_x, train_y, test_x, test_y = fm.load_data(torch, args)
    model = float_model(torch, args, train_x, train_y)
    results = {}
    start = time.perf_counter()
    results["float"] = fm.evaluate(torch, model, test_x, test_y)
    mode = "FX" if args.fx else "eager"
    ptq = post_training(torch, model, args, train_x, train_x[:1])
    results[f"PTQ ({mode})"] = fm.evaluate(torch, ptq, test_x, test_y)
    qat = quantization_aware(torch, model, args, train_x, train_y)
    results["QAT (1 epoch)"] = fm.evaluate(torch, qat, test_x, test_y)
    for name, acc in results.items():
        delta = "" if name == "float" else f"  ({100 * (acc - results['float']):+.2f} points)"
        print(f"{args.backend} {name:>14}: test accuracy {acc:.4f}{delta}")
    print(f"total {time.perf_counter() - start:.1f} s")
    return results


if __name__ == "__main__":
    main()
