"""Per-example gradients: vmap(grad(loss)) against the Python loop it replaces, in ember and torch.

For an MLP and a small CNN at batch 64, times (best of interleaved runs) four ways: ember's
vmap(grad(loss), in_dims=(None, 0, 0)) with func.functional_call, ember's loop of grad over the
examples, and the same two with torch.func. Prints each time and the ratios loop / vmap (above 1:
vmap is faster) and ember vmap / torch vmap (below 1: ember is faster); then vmap's own cost per
op and per call.
Run: PYTHONPATH=python python benchmarks/vmap.py [--threads N] [--repeat N]
"""

import argparse

import numpy as np
from _compare import best_times, frameworks


def _models(lib):
    nn = lib.nn
    lib.manual_seed(0)
    mlp = nn.Sequential(
        nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
    )
    cnn = nn.Sequential(
        nn.Conv2d(1, 16, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 5 * 5, 10),
    )
    return {"MLP 128-256-256-10": (mlp, (128,)), "CNN 2 conv (1x28x28)": (cnn, (1, 28, 28))}


def _cases(lib, batch, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    func, F = lib.func, lib.nn.functional
    out = {}
    for name, (model, shape) in _models(lib).items():
        x = lib.tensor(rng.standard_normal((batch, *shape), dtype=np.float32))
        y = lib.tensor(rng.integers(0, 10, batch))
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xb, yb, model=model):
            return F.cross_entropy(
                func.functional_call(model, p, (xb.unsqueeze(0),)), yb.unsqueeze(0)
            )

        vmapped = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
        per_example = func.grad(loss)

        def run_vmap(vmapped=vmapped, params=params, x=x, y=y):
            return vmapped(params, x, y)

        def run_loop(per_example=per_example, params=params, x=x, y=y):
            return [per_example(params, x[i], y[i]) for i in range(x.shape[0])]

        out[name] = (run_vmap, run_loop)
    return out


def _check(cases):
    """The vmapped gradients equal the loop's (so the timings compare the same work)."""
    for name, (run_vmap, run_loop) in cases.items():
        g, ref = run_vmap(), run_loop()
        for k, v in g.items():
            r = np.stack([d[k].numpy() for d in ref])
            np.testing.assert_allclose(v.numpy(), r, rtol=1e-4, atol=1e-5, err_msg=f"{name} {k}")


def _overhead(lib):
    """Dispatch cost of vmap itself: 200 `t + 1.0` on a (64, 8) batch inside vmap against the
    same ops on the whole tensor, and an empty vmapped call."""
    x = lib.randn(64, 8)

    def chain(t):
        for _ in range(200):
            t = t + 1.0
        return t

    mapped, empty = lib.func.vmap(chain), lib.func.vmap(lambda t: t)
    tv, tp, te = best_times((lambda: mapped(x), lambda: chain(x), lambda: empty(x)), 20, warmup=2)
    return (tv - tp) / 200, te


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=None, help="threads for both libraries")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    libs = frameworks(args.threads)
    cases = {name: _cases(lib, args.batch) for name, lib in libs.items()}
    _check(cases["ember"])
    print(f"per-example gradients, batch {args.batch}, threads {libs['ember'].get_num_threads()}")
    head = f"{'model':24s} {'ember vmap':>11s} {'ember loop':>11s} {'loop/vmap':>10s}"
    if "torch" in libs:
        head += (
            f" {'torch vmap':>11s} {'torch loop':>11s} {'loop/vmap':>10s} {'ember/torch vmap':>17s}"
        )
    print(head + "   (ms)")
    for model in cases["ember"]:
        fns = [*cases["ember"][model]]
        if "torch" in libs:
            fns += [*cases["torch"][model]]
        times = best_times(fns, args.repeat, warmup=2)
        ev, el = times[0], times[1]
        line = f"{model:24s} {ev * 1e3:11.2f} {el * 1e3:11.2f} {el / ev:10.2f}"
        if "torch" in libs:
            tv, tl = times[2], times[3]
            line += f" {tv * 1e3:11.2f} {tl * 1e3:11.2f} {tl / tv:10.2f} {ev / tv:17.2f}"
        print(line)
    for name, lib in libs.items():
        per_op, call = _overhead(lib)
        print(f"{name}: vmap overhead {per_op * 1e6:.1f} us per op, {call * 1e6:.0f} us per call")


if __name__ == "__main__":
    main()
