"""A training step of a small MLP plain, under a pass-through TorchDispatchMode and under
FlopCounterMode, ember beside torch in one run.

Usage: .venv/bin/python benchmarks/dispatch_mode.py [--repeat N]
Prints the best time per step (milliseconds) for each library and case, and ember/torch
(lower is better). ember reaches dispatch modes through Python routing of every public call
(Note [Dispatch modes] in ember/_dispatch_bridge.py), torch through its dispatcher: this
measures what a mode costs each.
"""

import argparse
import contextlib
import importlib

from _compare import best_times, frameworks


def cases(name, lib):
    dispatch = importlib.import_module(f"{name}.utils._python_dispatch")
    flops = importlib.import_module(f"{name}.utils.flop_counter")

    class PassThrough(dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 10))  # fmt: skip
    x, y = lib.randn(32, 64), lib.randint(0, 10, (32,))

    def step(mode):
        def run():
            with mode():
                model.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()

        return run

    def ten_inside(mode):
        run = step(contextlib.nullcontext)

        def ten():
            with mode():
                for _ in range(10):
                    run()

        return ten

    def enter_exit():
        with PassThrough():
            pass

    return {
        "enter and exit a mode": enter_exit,
        "plain step": step(contextlib.nullcontext),
        "10 steps in one mode (total)": ten_inside(PassThrough),
        "under a pass-through mode": step(PassThrough),
        "under FlopCounterMode": step(lambda: flops.FlopCounterMode(display=False)),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    libs = frameworks(threads=1)
    by_lib = {name: cases(name, lib) for name, lib in libs.items()}
    names = list(by_lib["ember"])
    print(f"{'case':28s}" + "".join(f" {n + ' ms':>10s}" for n in libs) + "  ember/torch")
    for case in names:
        fns = [by_lib[n][case] for n in libs]
        times = best_times(fns, args.repeat, warmup=3)
        row = f"{case:28s}" + "".join(f" {t * 1e3:10.3f}" for t in times)
        if len(times) == 2:
            row += f"  {times[0] / times[1]:10.2f}"
        print(row)


if __name__ == "__main__":
    main()
