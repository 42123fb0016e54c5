"""Calls from several Python threads at once: kernels release the GIL (Note [Kernels release the
GIL]), results match a single-threaded run, and backward passes may run in parallel."""

import sys
import threading
import time

import numpy as np

import ember
import ember.nn.functional as F

THREADS = 4


def _run_threads(fn, n=THREADS):
    """Runs fn(i) in n threads started together; returns their results, re-raising any error."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def body(i):
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 - reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


def _inputs(i):
    g = ember.Generator()
    g.manual_seed(100 + i)
    return (
        ember.randn(96, 80, generator=g),
        ember.randn(80, 64, generator=g),
        ember.randn(4, 3, 20, 20, generator=g),
        ember.randn(8, 3, 3, 3, generator=g),
    )


def _compute(i):
    a, b, img, w = _inputs(i)
    return [
        (a @ b).numpy().copy(),
        F.conv2d(img, w, padding=1).numpy().copy(),
        (a.exp() * 2 + a.sin()).numpy().copy(),
        a.sum(dim=1).numpy().copy(),
        a.amax(dim=0).numpy().copy(),
        F.softmax(a, dim=1).numpy().copy(),
        ember.sort(a.flatten()).values.numpy().copy(),
    ]


def test_ops_in_threads_match_a_single_threaded_run():
    serial = [_compute(i) for i in range(THREADS)]
    for _ in range(3):
        parallel = _run_threads(lambda i: [_compute(i) for _ in range(5)][-1])
        for s, p in zip(serial, parallel):
            for x, y in zip(s, p):
                np.testing.assert_array_equal(x, y)


def test_kernels_release_the_gil():
    # Large enough that the matmul outlasts the spinner's wake-up on a loaded machine (600 x 600
    # took 2.5 ms with sgemm, and the spinner often had not run yet).
    a = ember.randn(1500, 1500)
    a @ a  # warm up
    count, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    # A long switch interval: a thread holding the GIL keeps it for the whole call, so the spinning
    # thread can count during the matmul only if the kernel lets the GIL go.
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.5)
    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.01)  # the spinner holds the GIL now; we get it back after the interval
        before = count[0]
        a @ a
        during = count[0] - before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old_interval)
    assert during > 1000, during


def test_backward_in_threads_accumulates_every_gradient():
    w0 = ember.randn(16, 8, dtype=ember.float64)
    xs = [ember.randn(32, 16, dtype=ember.float64) for _ in range(THREADS)]
    owns0 = [ember.randn(8, dtype=ember.float64) for _ in range(THREADS)]

    def passes(w, own, x):
        for _ in range(10):
            ((x @ w).tanh() * own).sum().backward()

    # Reference: the same passes one after another.
    w_ref = w0.clone().requires_grad_(True)
    own_ref = [o.clone().requires_grad_(True) for o in owns0]
    for i in range(THREADS):
        passes(w_ref, own_ref[i], xs[i])

    # Every thread writes into its own leaf and into the shared `w` at once.
    w = w0.clone().requires_grad_(True)
    owns = [o.clone().requires_grad_(True) for o in owns0]
    _run_threads(lambda i: passes(w, owns[i], xs[i]))
    np.testing.assert_allclose(w.grad.numpy(), w_ref.grad.numpy(), rtol=1e-12)
    for o, r in zip(owns, own_ref):
        np.testing.assert_array_equal(o.grad.numpy(), r.grad.numpy())


class _Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


def test_python_functions_and_hooks_in_parallel_backward():
    def run(i):
        x = ember.full((50, 50), float(i + 1), requires_grad=True)
        seen = []
        y = _Cube.apply(x)
        y.register_hook(lambda g: seen.append(g.shape) or g * 2)
        (y @ ember.ones(50, 50)).sum().backward()
        return x.grad, seen

    for i, (grad, seen) in enumerate(_run_threads(run)):
        assert seen == [(50, 50)]
        np.testing.assert_allclose(grad.numpy(), np.full((50, 50), 2 * 3 * (i + 1) ** 2 * 50.0))


def test_grad_mode_is_per_thread():
    inside = threading.Event()
    release = threading.Event()

    def no_grad_thread(_):
        with ember.no_grad():
            inside.set()
            release.wait(timeout=30)
            return ember.is_grad_enabled()

    def grad_thread(_):
        inside.wait(timeout=30)
        x = ember.ones(3, requires_grad=True)
        out = (x * 2).requires_grad, ember.is_grad_enabled()
        release.set()
        return out

    results = _run_threads(lambda i: (no_grad_thread, grad_thread)[i](i), n=2)
    assert results == [False, (True, True)]
    assert ember.is_grad_enabled()


def test_set_num_threads_while_other_threads_compute():
    a = ember.randn(256, 256)
    expected = (a @ a).numpy().copy()
    original = ember.get_num_threads()

    def run(i):
        if i == 0:  # resizes the pool under the others' feet
            for k in range(40):
                ember.set_num_threads(1 + k % 2)
            return None
        return [(a @ a).numpy().copy() for _ in range(20)]

    try:
        results = _run_threads(run)
    finally:
        ember.set_num_threads(original)
    for r in results[1:]:
        for m in r:
            np.testing.assert_array_equal(m, expected)
