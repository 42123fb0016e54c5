"""What every benchmark script shares: the frameworks to compare and interleaved timing."""

import time


def frameworks(threads=None):
    """{"ember": ember, "torch": torch} (torch only when importable), each set to `threads`."""
    import ember

    libs = {"ember": ember}
    try:
        import torch

        libs["torch"] = torch
    except ImportError:
        print("torch is not installed: printing ember only")
    if threads:
        for lib in libs.values():
            lib.set_num_threads(threads)
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
