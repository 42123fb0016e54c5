"""The machine's own limits, measured in the benchmark's run: FMA peak and STREAM triad bandwidth.

Both come from small C programs (`_fma_peak.c`, `_triad.c`) compiled on the fly with
`gcc -O3 -march=native`, run on the same thread count as the workloads. Without a C compiler
the FMA peak is unknown (reported as such) and triad falls back to numpy, which moves more bytes
per element than the C loop (it cannot fuse the multiply and the add) and counts them all.
"""

import os
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def last_level_cache_bytes():
    """Size of the largest CPU cache (Linux sysfs), 32 MiB where it cannot be read."""
    sizes = []
    root = "/sys/devices/system/cpu/cpu0/cache"
    for entry in os.listdir(root) if os.path.isdir(root) else []:
        try:
            with open(os.path.join(root, entry, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KMG")) * scale)
    return max(sizes, default=32 << 20)


def triad_elements(quick):
    """Doubles per triad array: the three arrays together 4x the last-level cache (STREAM's
    rule), at most a quarter of the free memory; the quick profile takes 8 MiB arrays."""
    if quick:
        return 1 << 20
    want = 4 * last_level_cache_bytes() // (3 * 8)
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        want = min(want, free // (4 * 3 * 8))
    except (ValueError, OSError):
        pass
    return max(want, 1 << 22)


def _compile(source, tmp):
    exe = os.path.join(tmp, os.path.splitext(os.path.basename(source))[0])
    subprocess.run(
        ["gcc", "-O3", "-march=native", "-pthread", source, "-o", exe],
        check=True,
        capture_output=True,
        text=True,
    )
    return exe


def _run(exe, *args):
    out = subprocess.run([exe, *map(str, args)], check=True, capture_output=True, text=True)
    fields = out.stdout.split()
    return dict(zip(fields[::2], fields[1::2]))


def _numpy_triad(n, trials):
    """Triad with numpy (one thread): c*s into a, then a+b into a: five passes over n doubles."""
    import numpy as np

    a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
    best = float("inf")
    for _ in range(trials):
        t0 = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t0)
    return 5 * 8 * n / best * 1e-9


def measure(threads, quick):
    """{"fma_gflops", "fma_core_gflops", "isa", "triad_gbs", "triad_mib", "notes"}: peak float32
    FLOP/s of `threads` threads and of one, and triad bandwidth of `threads` threads; the FMA
    peaks are None where the C program cannot be built. One thread's peak shows what `threads`
    should reach: on a busy machine the threads share cores with other jobs and measure less."""
    n = triad_elements(quick)
    trials = 3 if quick else 10
    limits = {
        "fma_gflops": None,
        "fma_core_gflops": None,
        "isa": None,
        "triad_mib": 3 * 8 * n / 2**20,
        "notes": [],
    }
    seconds = 0.05 if quick else 0.2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            exe = _compile(os.path.join(HERE, "_fma_peak.c"), tmp)
            fma, core = _run(exe, threads, seconds), _run(exe, 1, seconds)
            limits.update(
                fma_gflops=float(fma["gflops"]),
                isa=fma["isa"],
                fma_core_gflops=float(core["gflops"]),
            )
        except (OSError, subprocess.CalledProcessError) as e:
            limits["notes"].append(f"FMA peak unknown ({_why(e)})")
        try:
            triad = _run(_compile(os.path.join(HERE, "_triad.c"), tmp), threads, n, trials)
            limits["triad_gbs"] = float(triad["gbs"])
        except (OSError, subprocess.CalledProcessError) as e:
            limits["notes"].append(f"triad measured with numpy on 1 thread ({_why(e)})")
            limits["triad_gbs"] = _numpy_triad(n, trials)
    return limits


def _why(error):
    if isinstance(error, subprocess.CalledProcessError) and error.stderr:
        return error.stderr.strip().splitlines()[0]
    return str(error)


if __name__ == "__main__":
    import sys

    print(measure(int(sys.argv[1]) if len(sys.argv) > 1 else os.cpu_count(), quick=False))
