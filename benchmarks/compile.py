"""ember.compile's code generator (ember._inductor) beside torch.compile, in one run.

Usage: .venv/bin/python benchmarks/compile.py [--threads T] [--rounds N] [--quick]

Prints, for each workload, the best time per call (the four variants called in turn, round
after round, so load from other jobs hits all alike) of ember eager, ember compiled, torch eager
and torch.compile, and the ratios ember-compiled / torch-compiled and ember-compiled / ember eager
(lower is better):
- an 8-op pointwise chain over a few million floats, with its achieved bandwidth (bytes the
  fused loop must move: two inputs read, one output written) beside the STREAM triad bandwidth
  of the same threads measured in this run (`_limits.py`, benchmarks/_triad.c);
- an MLP block Linear -> GELU -> LayerNorm -> Linear, inference (no grad);
- a training step of examples/fashion_mnist.py's CNN (batch 128: forward, cross-entropy,
  backward, Adam step), the model through ember.compile / torch.compile with their default
  backends (ember: AOT autograd, forward and backward graphs each compiled by compile_fx);
- first-call compile time (compile + first call, empty caches) of both graphs on each side, and
  the time a second process with a warm cache takes to compile and run them (ember: from a
  graph to its first result; the process's import time is printed apart).
ember's graphs for the chain and the MLP block come from ember.fx.symbolic_trace and go straight
to the backend (ember._inductor.compile_fx), so those rows measure the code generator, not the
capture; the training row goes through ember.compile (capture, guards, AOT autograd).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import _limits
from _compare import best_times, framework

N_CHAIN = 1 << 22  # 4 Mi floats per operand (16 MiB each)
MLP = (256, 512, 2048)  # batch, model width, hidden width


def chain(lib):
    def f(x, y):
        t = x * 1.5 + y
        t = lib.sigmoid(t) * x - 0.5
        return lib.relu(t) * y + 1.0

    return f


def mlp_block(lib, seed=0):
    nn, F = lib.nn, lib.nn.functional
    b, d, h = MLP

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            g = lib.Generator().manual_seed(seed)
            self.w1 = nn.Parameter(lib.randn(h, d, generator=g) * d**-0.5)
            self.b1 = nn.Parameter(lib.zeros(h))
            self.g = nn.Parameter(lib.ones(h))
            self.beta = nn.Parameter(lib.zeros(h))
            self.w2 = nn.Parameter(lib.randn(d, h, generator=g) * h**-0.5)
            self.b2 = nn.Parameter(lib.zeros(d))

        def forward(self, x):
            y = F.gelu(F.linear(x, self.w1, self.b1))
            y = F.layer_norm(y, (h,), self.g, self.beta)
            return F.linear(y, self.w2, self.b2)

    return Block().eval()


CNN_BATCH = 128


def cnn_step(lib, compiled, seed=0):
    """A training step of the Fashion-MNIST CNN (examples/fashion_mnist.py), as a closure."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    import fashion_mnist

    lib.manual_seed(seed)
    model = fashion_mnist.build_model(lib.nn)
    run = lib.compile(model) if compiled else model
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    g = lib.Generator().manual_seed(seed + 1)
    x = lib.randn(CNN_BATCH, 1, 28, 28, generator=g)
    y = lib.randint(0, 10, (CNN_BATCH,), generator=g)
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(run(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def inputs(lib, n=N_CHAIN):
    g = lib.Generator().manual_seed(1)
    return (
        lib.randn(n, generator=g),
        lib.randn(n, generator=g),
        lib.randn(MLP[0], MLP[1], generator=g),
    )


def ember_compiled(fn_or_module, example):
    import ember
    from ember._inductor import compile_fx

    gm = ember.fx.symbolic_trace(fn_or_module)
    return compile_fx(gm, list(example))


def first_call(make, run):
    t0 = time.perf_counter()
    f = make()
    run(f)
    return time.perf_counter() - t0


WARM_CHILD = r"""
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {here!r})
import compile as bench
import ember
from ember._inductor import metrics
t1 = time.perf_counter()
x, y, xm = bench.inputs(ember)
with ember.no_grad():
    t2 = time.perf_counter()
    bench.ember_compiled(bench.chain(ember), (x, y))(x, y)
    m = bench.mlp_block(ember)
    bench.ember_compiled(m, (xm,))(xm)
    t3 = time.perf_counter()
print(t1 - t0, t3 - t2, metrics.cpp_compiles)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=30, help="calls of each variant")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="ember-compile-bench-")
    os.environ["EMBER_CACHE_DIR"] = cache
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(cache, "torch"))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    em = framework("ember", args.threads)
    try:
        th = framework("torch", args.threads)
    except ImportError:
        th = None
        print("torch is not installed: printing ember only")
    limits = _limits.measure(args.threads, args.quick)
    rounds = 5 if args.quick else args.rounds

    ex, ey, exm = inputs(em)
    ctimes = {}
    with em.no_grad():
        ctimes["ember chain"] = first_call(
            lambda: ember_compiled(chain(em), (ex, ey)), lambda f: f(ex, ey)
        )
        fchain = ember_compiled(chain(em), (ex, ey))
        mod = mlp_block(em)
        ctimes["ember mlp"] = first_call(lambda: ember_compiled(mod, (exm,)), lambda f: f(exm))
        fmlp = ember_compiled(mod, (exm,))
        err = (fchain(ex, ey) - chain(em)(ex, ey)).abs().max().item()
        err_mlp = (fmlp(exm) - mod(exm)).abs().max().item()
    t_chain = t_mlp = [float("nan")] * 2
    if th is not None:
        tx, ty, txm = inputs(th)
        tmod = mlp_block(th)
        with th.no_grad():
            ctimes["torch chain"] = first_call(lambda: th.compile(chain(th)), lambda f: f(tx, ty))
            ctimes["torch mlp"] = first_call(lambda: th.compile(tmod), lambda f: f(txm))
            tc_chain, tc_mlp = th.compile(chain(th)), th.compile(tmod)
            tc_chain(tx, ty), tc_mlp(txm)
    with em.no_grad():
        fns = [lambda: chain(em)(ex, ey), lambda: fchain(ex, ey)]
        mfns = [lambda: mod(exm), lambda: fmlp(exm)]
        if th is not None:
            fns += [lambda: chain(th)(tx, ty), lambda: tc_chain(tx, ty)]
            mfns += [lambda: tmod(txm), lambda: tc_mlp(txm)]
        with th.no_grad() if th is not None else em.no_grad():
            times = best_times(fns, rounds)
            mtimes = best_times(mfns, rounds)
    e_chain, e_mlp = times[:2], mtimes[:2]
    if th is not None:
        t_chain, t_mlp = times[2:], mtimes[2:]
    # training step: each variant owns its model and optimizer; the first calls capture/compile
    sfns = [cnn_step(em, False), cnn_step(em, True)]
    if th is not None:
        sfns += [cnn_step(th, False), cnn_step(th, True)]
    t0 = time.perf_counter()
    sfns[1]()
    sfns[1]()  # (the first call is the capture run, the second compiles)
    ctimes["ember cnn step"] = time.perf_counter() - t0
    if th is not None:
        t0 = time.perf_counter()
        sfns[3]()
        ctimes["torch cnn step"] = time.perf_counter() - t0
    stimes = best_times(sfns, max(rounds // 3, 3))
    t_step = stimes[2:] if th is not None else [float("nan")] * 2
    rows = [
        ("pointwise chain, 8 ops, 4 Mi floats", e_chain, t_chain),
        (f"MLP block {MLP}", e_mlp, t_mlp),
        (f"CNN training step, batch {CNN_BATCH}", stimes[:2], t_step),
    ]

    here = os.path.dirname(os.path.abspath(__file__))
    child = subprocess.run(
        [sys.executable, "-c", WARM_CHILD.format(here=here)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    warm = child.stdout.split() if child.returncode == 0 else None

    print(f"threads: {args.threads}; STREAM triad {limits['triad_gbs']:.1f} GB/s")
    print(
        "| workload | ember eager ms | ember compiled ms | torch eager ms | torch.compile ms | "
        "ember compiled / torch.compile | ember compiled / ember eager |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, (ee, ec), (te, tc) in rows:
        print(
            f"| {name} | {ee * 1e3:.3f} | {ec * 1e3:.3f} | {te * 1e3:.3f} | {tc * 1e3:.3f} | "
            f"{ec / tc:.2f} | {ec / ee:.2f} |"
        )
    gbs = 3 * 4 * N_CHAIN / e_chain[1] * 1e-9
    tgbs = 3 * 4 * N_CHAIN / t_chain[1] * 1e-9 if th is not None else float("nan")
    print(
        f"chain bandwidth: ember compiled {gbs:.1f} GB/s = {gbs / limits['triad_gbs']:.0%} of "
        "triad; "
        f"torch.compile {tgbs:.1f} GB/s = {tgbs / limits['triad_gbs']:.0%} of triad"
    )
    print(f"max |compiled - eager|: chain {err:.2e}, mlp {err_mlp:.2e}")
    print("first call (compile + run, empty caches), seconds:")
    for side in ("chain", "mlp", "cnn step"):
        e, t = ctimes[f"ember {side}"], ctimes.get(f"torch {side}", float("nan"))
        print(f"  {side}: ember {e:.2f}  torch {t:.2f}  ratio {e / t:.2f}")
    if warm:
        print(
            f"second process, warm cache: import ember {float(warm[0]):.2f} s; compile + first "
            f"call of both graphs {float(warm[1]):.3f} s; C++ compiles: {warm[2]}"
        )
    else:
        print("second process failed:", child.stderr[-2000:])


if __name__ == "__main__":
    main()
