"""Optimizer step time, ember beside torch: ~1M float32 parameters split in 10 tensors.

Usage: .venv/bin/python benchmarks/optim_step.py [--threads N] [--repeat N] [--number N]
Prints the median time per optimizer.step() in milliseconds for each library and the ratio
ember/torch (lower is better). torch runs its defaults on CPU (the single-tensor path unless
--foreach is given); gradients are set once and the same step is repeated.
"""

import argparse
import statistics
import timeit

from _compare import frameworks

SHAPES = [
    (256, 512),
    (512,),
    (512, 512),
    (512,),
    (512, 640),
    (640,),
    (640, 320),
    (320,),
    (320, 100),
    (100,),
]  # 10 tensors, 1,000,836 parameters


def make_step(lib, name, foreach):
    params = [lib.randn(*s, requires_grad=True) for s in SHAPES]
    for p in params:
        p.grad = lib.randn(*p.shape) * 1e-3
    extra = {"foreach": foreach} if foreach is not None else {}
    if name == "SGD momentum":
        opt = lib.optim.SGD(params, lr=1e-3, momentum=0.9, **extra)
    elif name == "Adam":
        opt = lib.optim.Adam(params, lr=1e-3, **extra)
    else:
        opt = lib.optim.AdamW(params, lr=1e-3, amsgrad=True, **extra)
    opt.step()  # creates the state outside the timing
    return opt.step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--foreach", action="store_true", help="torch with foreach=True")
    args = parser.parse_args()

    libs = frameworks(args.threads)
    n = sum(1 for _ in SHAPES)
    print(f"{n} tensors, threads={libs['ember'].get_num_threads()}; ms per step (median)")
    print(f"{'optimizer':<22}" + "".join(f"{k:>10}" for k in libs) + "  ember/torch")
    for name in ["SGD momentum", "Adam", "AdamW amsgrad"]:
        row = {}
        for key, lib in libs.items():
            foreach = (args.foreach or None) if key == "torch" else None
            step = make_step(lib, name, foreach)
            times = timeit.repeat(step, repeat=args.repeat, number=args.number)
            row[key] = statistics.median(times) / args.number * 1e3
        ratio = f"{row['ember'] / row['torch']:.2f}" if "torch" in row else "-"
        print(f"{name:<22}" + "".join(f"{v:>10.3f}" for v in row.values()) + f"  {ratio:>11}")


if __name__ == "__main__":
    main()
