"""ember.fft against torch.fft in one run: float32 signals of lengths 2^10..2^20 and 1000/1001
(fft of a real signal, rfft, and fft of a complex64 signal), plus a batched case; prints the
median time per call of each side and the ratio ember/torch (below 1: ember is faster).

    .venv/bin/python benchmarks/fft.py [--threads N] [--budget SECONDS]
"""

import argparse

import numpy as np
from _compare import frameworks, median_time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--budget", type=float, default=0.3)
    args = ap.parse_args()
    libs = frameworks(args.threads)
    cases = [(n, 1) for n in [2**k for k in range(10, 21)] + [1000, 1001]] + [(1024, 256)]
    print(f"{'case':28s} {'ember':>11s} {'torch':>11s} {'ratio':>7s}")
    for n, batch in cases:
        rng = np.random.default_rng(n)
        shape = (batch, n) if batch > 1 else (n,)
        real = rng.standard_normal(shape).astype(np.float32)
        cplx = (real + 1j * rng.standard_normal(shape)).astype(np.complex64)
        for op, data in (("fft", real), ("rfft", real), ("fft", cplx)):
            kind = "c64" if data.dtype == np.complex64 else "f32"
            times = {}
            for name, lib in libs.items():
                x = lib.from_numpy(data.copy())
                fn = getattr(lib.fft, op)
                times[name] = median_time(lambda fn=fn, x=x: fn(x), args.budget)
            label = f"{op}({kind}) n={n}" + (f" x{batch}" if batch > 1 else "")
            t_e, t_t = times["ember"], times.get("torch")
            ratio = f"{t_e / t_t:7.2f}" if t_t else "      -"
            t_t_s = f"{t_t * 1e6:9.1f}us" if t_t else "          -"
            print(f"{label:28s} {t_e * 1e6:9.1f}us {t_t_s} {ratio}")


if __name__ == "__main__":
    main()
