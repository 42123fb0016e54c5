"""What every benchmark script shares: the frameworks to compare and interleaved timing."""

import gc
import importlib
import statistics
import time


def framework(name, threads=None):
    """Imports "ember" or "torch" and sets its intra-op thread count to `threads` (if given)."""
    lib = importlib.import_module(name)
    if threads:
        lib.set_num_threads(threads)
    return lib


def frameworks(threads=None):
    """{"ember": ember, "torch": torch} (torch only when importable), each set to `threads`."""
    libs = {"ember": framework("ember", threads)}
    try:
        libs["torch"] = framework("torch", threads)
    except ImportError:
        print("torch is not installed: printing ember only")
    return libs


def best_times(fns, repeat, warmup=1):
    """Best wall time of each function; calls alternate so load changes hit every side alike."""
    for _ in range(warmup):
        for fn in fns:
            fn()  # allocations, thread pools
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def median_time(fn, budget, min_sample=2e-3):
    """Median seconds per call of `fn` over samples taken for about `budget` seconds.

    One warm-up call first (allocator, thread pool, lazy init); a sample runs `fn` often enough to
    last `min_sample`, so microsecond calls are not lost in timer resolution. The garbage collector
    is paused while timing, as timeit does, so a collection does not land on one side only.
    """
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    if once < 0.05:  # a slow call needs no calibration: each sample is one call anyway
        t0 = time.perf_counter()
        fn()
        once = time.perf_counter() - t0
    number = max(1, int(min_sample / max(once, 1e-9)))
    samples = []
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        while not samples or time.perf_counter() - start < budget:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            samples.append((time.perf_counter() - t0) / number)
    finally:
        gc.enable()
    return statistics.median(samples)
