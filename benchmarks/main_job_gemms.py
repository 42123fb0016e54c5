"""The Fashion-MNIST CNN's GEMMs at batch 128: ember's sgemm against the system OpenBLAS.

On CPUs without AVX-512 ember's convolutions are im2col + GEMM; their GEMMs were OpenBLAS's
(cblas_sgemm) before ember's sgemm gained AVX2 tiles. This times both on the main job's shapes
(per chunk of 8 images, as cpu/conv.cpp cuts the batch, and the first Linear layer), one thread,
CPU time, alternately, best of --rounds, and prints the ratio and the sum per training step.

Usage: python benchmarks/main_job_gemms.py [--rounds R] [--blas PATH]
"""

import argparse
import ctypes
import time

import numpy as np

import ember

# (what, m, n, k, calls per training step)
SHAPES = [
    ("conv2 forward", 64, 1568, 288, 16),
    ("conv2 input grad", 288, 1568, 64, 16),
    ("conv2 weight grad", 288, 64, 1568, 16),
    ("conv1 forward", 32, 6272, 9, 16),
    ("conv1 weight grad", 9, 32, 6272, 16),
    ("fc1 forward", 128, 128, 3136, 1),
    ("fc1 input grad", 128, 3136, 128, 1),
    ("fc1 weight grad", 128, 3136, 128, 1),
]


def cpu_time(fn, reps):
    t0 = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - t0) / reps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--blas", default="/lib/x86_64-linux-gnu/libopenblas.so.0")
    args = parser.parse_args()
    ember.set_num_threads(1)
    blas = ctypes.CDLL(args.blas)
    blas.openblas_set_num_threads(1)
    tier = ember.backends.cpu.get_cpu_capability()
    print(f"CPU {tier}, 1 thread, ms per call, best of {args.rounds}")
    print(f"{'GEMM (m x n x k)':36s} {'ember':>8s} {'OpenBLAS':>9s} {'ratio':>6s}")
    rng = np.random.default_rng(0)
    total = [0.0, 0.0]
    for what, m, n, k, calls in SHAPES:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.empty((m, n), np.float32)
        ea, eb = ember.tensor(a), ember.tensor(b)

        def openblas(a=a, b=b, c=c, m=m, n=n, k=k):
            ptr = ctypes.c_void_p
            one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
            blas.cblas_sgemm(
                101,
                111,
                111,
                m,
                n,
                k,
                one,
                ptr(a.ctypes.data),
                k,
                ptr(b.ctypes.data),
                n,
                zero,
                ptr(c.ctypes.data),
                n,
            )

        openblas()
        np.testing.assert_allclose(c, (ea @ eb).numpy(), rtol=1e-3, atol=1e-3)
        best = [float("inf")] * 2
        for _ in range(args.rounds):
            best[0] = min(best[0], cpu_time(lambda ea=ea, eb=eb: ea @ eb, args.reps))
            best[1] = min(best[1], cpu_time(openblas, args.reps))
        total = [t + s * calls for t, s in zip(total, best)]
        name = f"{what} ({m} x {n} x {k})"
        print(f"{name:36s} {best[0] * 1e3:8.3f} {best[1] * 1e3:9.3f} {best[0] / best[1]:6.2f}")
    print(
        f"{'per training step':36s} {total[0] * 1e3:8.1f} {total[1] * 1e3:9.1f} "
        f"{total[0] / total[1]:6.2f}"
    )


if __name__ == "__main__":
    main()
