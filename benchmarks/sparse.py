"""Sparse @ dense, ember against torch in one run: random sparse matrices (uniform pattern) times
dense ones, through torch.sparse.mm with a COO operand and with a CSR one, forward only and
forward + backward; prints the median time per call of each side and the ratio ember/torch
(below 1: ember is faster).

    .venv/bin/python benchmarks/sparse.py [--threads N] [--repeat N]
"""

import argparse
import warnings

import numpy as np
from _compare import best_times, frameworks

# (rows, cols, density, dense columns)
CASES = [
    (4096, 4096, 0.01, 64),
    (4096, 4096, 0.01, 256),
    (4096, 4096, 0.001, 64),
    (16384, 16384, 0.001, 32),
    (1024, 1024, 0.05, 128),
]


def pattern(m, k, density, seed):
    rng = np.random.default_rng(seed)
    nnz = int(m * k * density)
    lin = np.unique(rng.integers(0, m * k, size=nnz))
    rows, cols = lin // k, lin % k
    values = rng.standard_normal(len(lin)).astype(np.float32)
    return np.stack([rows, cols]).astype(np.int64), values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")  # torch's beta-state notes on sparse CSR
    libs = frameworks(args.threads)
    print(f"{'case':44s} {'ember':>11s} {'torch':>11s} {'ratio':>7s}")
    for m, k, density, n in CASES:
        idx, vals = pattern(m, k, density, m + n)
        dense = np.random.default_rng(n).standard_normal((k, n)).astype(np.float32)
        for kind in ("coo", "csr", "coo fwd+bwd"):
            fns = {}
            for name, lib in libs.items():
                s = lib.sparse_coo_tensor(
                    lib.from_numpy(idx.copy()), lib.from_numpy(vals.copy()), (m, k)
                ).coalesce()
                d = lib.from_numpy(dense.copy())
                if kind == "csr":
                    s = s.to_sparse_csr()
                if kind.endswith("bwd"):
                    s = s.detach().requires_grad_(True)
                    d = d.requires_grad_(True)

                    def fn(lib=lib, s=s, d=d):
                        lib.sparse.mm(s, d).sum().backward()
                        s.grad = d.grad = None

                else:

                    def fn(lib=lib, s=s, d=d):
                        return lib.sparse.mm(s, d)

                fns[name] = fn
            times = dict(zip(fns, best_times(list(fns.values()), args.repeat, warmup=2)))
            label = f"{kind} {m}x{k} d={density:g} @ {k}x{n}"
            t_e, t_t = times["ember"], times.get("torch")
            ratio = f"{t_e / t_t:7.2f}" if t_t else "      -"
            t_t_s = f"{t_t * 1e6:9.1f}us" if t_t else "          -"
            print(f"{label:44s} {t_e * 1e6:9.1f}us {t_t_s} {ratio}")


if __name__ == "__main__":
    main()
