"""The benchmark suite's workloads, each written once over the framework module `lib`.

A workload is `make(lib, quick) -> (run, work)`: `run` is the zero-argument call that is timed,
`work` what one call does: ("flop", n) for arithmetic (float32 multiply-adds count 2), ("byte", n)
for the bytes an ideal kernel would read and write once, ("sample", n) for data loading, or None.
Inputs come from numpy with a fixed seed, so both frameworks see the same numbers. The quick
profile shrinks the memory-bound tensors and the DataLoader's dataset, nothing else.
"""

import importlib
import importlib.util
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

GROUPS = ("overhead", "memory", "compute", "training")
SIDE = {False: 4096, True: 1024}  # memory-bound tensors are SIDE x SIDE float32, by quick
LOADER_ROWS = {False: 60000, True: 6000}
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


@dataclass(frozen=True)
class Workload:
    group: str
    name: str
    make: Callable


WORKLOADS = []


def workload(group, name):
    """Registers `make` under `name`; the table lists workloads in registration order."""

    def register(make):
        WORKLOADS.append(Workload(group, name, make))
        return make

    return register


def by_name(name):
    return next(w for w in WORKLOADS if w.name == name)


def randn(lib, *shape, requires_grad=False, seed=0):
    x = lib.from_numpy(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))
    return x.requires_grad_() if requires_grad else x


def _data(lib):
    return importlib.import_module(lib.__name__ + ".utils.data")


def _clear_grads(*tensors):
    for t in tensors:
        t.grad = None


# --- overhead: tiny tensors, so the time is the framework's per-call cost -----------------------


@workload("overhead", "add (4 floats)")
def _tiny_add(lib, quick):
    a, b = randn(lib, 4), randn(lib, 4, seed=1)
    return lambda: a + b, None


@workload("overhead", "fwd+bwd mul,sum (4 floats)")
def _tiny_backward(lib, quick):
    a, w = randn(lib, 4), randn(lib, 4, requires_grad=True, seed=1)

    def run():
        (w * a).sum().backward()
        w.grad = None

    return run, None


@workload("overhead", "10-op chain (16 floats)")
def _chain(lib, quick):
    x, y = randn(lib, 16), randn(lib, 16, seed=1).abs() + 1

    def run():
        return (((x + y) * y - x).relu().exp().neg().sigmoid().tanh().abs()) / y

    return run, None


@workload("overhead", "tensor from 8-float list")
def _from_list(lib, quick):
    values = [0.5 * i for i in range(8)]
    return lambda: lib.tensor(values), None


@workload("overhead", "small slice x[1:3, ::2]")
def _slice(lib, quick):
    x = randn(lib, 8, 8)
    return lambda: x[1:3, ::2], None


@workload("overhead", "nn.Linear(16,16) in no_grad")
def _tiny_linear(lib, quick):
    lib.manual_seed(0)
    linear, x = lib.nn.Linear(16, 16), randn(lib, 8, 16)

    def run():
        with lib.no_grad():
            return linear(x)

    return run, None


@workload("overhead", "Module.__call__ (empty forward)")
def _module_call(lib, quick):
    class Identity(lib.nn.Module):
        def forward(self, x):
            return x

    module, x = Identity(), randn(lib, 4)
    return lambda: module(x), None


# --- memory-bound: 16M floats (1M in the quick profile), bytes = one read/write per element ----


def _elementwise(name, inputs, fn):
    @workload("memory", name)
    def make(lib, quick):
        n = SIDE[quick]
        xs = [randn(lib, n, n, seed=i) for i in range(inputs)]
        return (lambda: fn(lib, *xs)), ("byte", 4 * n * n * (inputs + 1))


_elementwise("add", 2, lambda lib, x, y: x + y)
_elementwise("mul", 2, lambda lib, x, y: x * y)
_elementwise("gelu", 1, lambda lib, x: lib.nn.functional.gelu(x))
_elementwise("exp", 1, lambda lib, x: lib.exp(x))
_elementwise("softmax(dim=-1)", 1, lambda lib, x: lib.nn.functional.softmax(x, dim=-1))
_elementwise("transpose+contiguous", 1, lambda lib, x: x.t().contiguous())


@workload("memory", "sum")
def _sum(lib, quick):
    x = randn(lib, SIDE[quick], SIDE[quick])
    return x.sum, ("byte", 4 * x.numel())


@workload("memory", "mean(dim=0)")
def _mean(lib, quick):
    x = randn(lib, SIDE[quick], SIDE[quick])
    return (lambda: x.mean(dim=0)), ("byte", 4 * x.numel())


@workload("memory", "layer_norm(last dim)")
def _layer_norm(lib, quick):
    n = SIDE[quick]
    x, w, b = randn(lib, n, n), randn(lib, n, seed=1), randn(lib, n, seed=2)
    return (lambda: lib.nn.functional.layer_norm(x, (n,), w, b)), ("byte", 8 * n * n)


# --- compute-bound ------------------------------------------------------------------------------


def _matmul(n):
    @workload("compute", f"matmul {n}")
    def make(lib, quick):
        a, b = randn(lib, n, n), randn(lib, n, n, seed=1)
        return (lambda: a @ b), ("flop", 2 * n**3)


for _n in (64, 256, 1024, 2048):
    _matmul(_n)


@workload("compute", "bmm 32x256x256")
def _bmm(lib, quick):
    a, b = randn(lib, 32, 256, 256), randn(lib, 32, 256, 256, seed=1)
    return (lambda: lib.bmm(a, b)), ("flop", 2 * 32 * 256**3)


@workload("compute", "linear 256x1024->1024 fwd+bwd")
def _linear(lib, quick):
    lib.manual_seed(0)
    linear = lib.nn.Linear(1024, 1024)
    x, g = randn(lib, 256, 1024, requires_grad=True), randn(lib, 256, 1024, seed=1)

    def run():
        linear(x).backward(g)
        _clear_grads(x, *linear.parameters())

    return run, ("flop", 3 * 2 * 256 * 1024 * 1024)  # forward, input grad, weight grad


def _conv(k, cin, cout, hw, batch=8):
    """conv2d fwd (no_grad) and fwd+bwd (input and weight grads) at a ResNet stage's shape."""
    flop = 2 * batch * cout * hw * hw * cin * k * k
    shape = f"{k}x{k} {cin}->{cout} {hw}x{hw} N={batch}"

    def tensors(lib, grad):
        x = randn(lib, batch, cin, hw, hw, requires_grad=grad)
        w = randn(lib, cout, cin, k, k, requires_grad=grad, seed=1)
        return x, w

    @workload("compute", f"conv2d {shape} fwd")
    def fwd(lib, quick):
        x, w = tensors(lib, False)

        def run():
            with lib.no_grad():
                return lib.nn.functional.conv2d(x, w, padding=k // 2)

        return run, ("flop", flop)

    @workload("compute", f"conv2d {shape} fwd+bwd")
    def fwd_bwd(lib, quick):
        x, w = tensors(lib, True)
        g = randn(lib, batch, cout, hw, hw, seed=2)

        def run():
            lib.nn.functional.conv2d(x, w, padding=k // 2).backward(g)
            _clear_grads(x, w)

        return run, ("flop", 3 * flop)


_conv(3, 64, 64, 56)
_conv(3, 128, 128, 28)
_conv(3, 256, 256, 14)
_conv(1, 256, 64, 56)
_conv(1, 256, 256, 14)


def _pool_input(lib, grad):
    return randn(lib, 8, 64, 112, 112, requires_grad=grad)  # ResNet's stem pool


POOL_BYTES = 4 * 8 * 64 * (112 * 112 + 56 * 56)


@workload("compute", "max_pool2d 3x3/2 8x64x112x112 fwd")
def _pool(lib, quick):
    x = _pool_input(lib, False)

    def run():
        with lib.no_grad():
            return lib.nn.functional.max_pool2d(x, 3, 2, 1)

    return run, ("byte", POOL_BYTES)


@workload("compute", "max_pool2d 3x3/2 8x64x112x112 fwd+bwd")
def _pool_bwd(lib, quick):
    x, g = _pool_input(lib, True), randn(lib, 8, 64, 56, 56, seed=1)

    def run():
        lib.nn.functional.max_pool2d(x, 3, 2, 1).backward(g)
        x.grad = None

    return run, ("byte", 2 * POOL_BYTES)


# --- training steps: zero_grad, forward, loss, backward, optimizer step -------------------------
# FLOPs count the forward's matmuls and convolutions three times (forward, input and weight grads).


def _step(model, optimizer, loss_fn):
    def run():
        optimizer.zero_grad()
        loss = loss_fn()
        loss.backward()
        optimizer.step()
        return loss.item()

    model.train()
    return run


def _labels(lib, n, classes=10):
    return lib.from_numpy(np.random.default_rng(3).integers(0, classes, n))


@workload("training", "MLP 784-256-128-10 step SGD (batch 128)")
def _mlp(lib, quick):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)
    )
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = randn(lib, 128, 784), _labels(lib, 128)
    run = _step(model, opt, lambda: nn.functional.cross_entropy(model(x), y))
    return run, ("flop", 3 * 2 * 128 * (784 * 256 + 256 * 128 + 128 * 10))


def _fashion_mnist_model(nn):
    """examples/fashion_mnist.py's own model, imported so the benchmark follows its changes."""
    spec = importlib.util.spec_from_file_location(
        "fashion_mnist_example", os.path.join(EXAMPLES, "fashion_mnist.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_model(nn)


@workload("training", "Fashion-MNIST CNN step Adam (batch 128)")
def _cnn(lib, quick):
    lib.manual_seed(0)
    model = _fashion_mnist_model(lib.nn)
    opt = lib.optim.Adam(model.parameters(), lr=2e-3)
    x, y = randn(lib, 128, 1, 28, 28), _labels(lib, 128)
    run = _step(model, opt, lambda: lib.nn.functional.cross_entropy(model(x), y))
    forward = 2 * 128 * (32 * 28 * 28 * 9 + 64 * 14 * 14 * 32 * 9 + 3136 * 128 + 128 * 10)
    return run, ("flop", 3 * forward)


@workload("training", "TransformerEncoderLayer step AdamW (16x64x256)")
def _transformer(lib, quick):
    batch, seq, d, ff = 16, 64, 256, 1024
    lib.manual_seed(0)
    layer = lib.nn.TransformerEncoderLayer(d, nhead=8, dim_feedforward=ff, batch_first=True)
    opt = lib.optim.AdamW(layer.parameters(), lr=1e-4)
    x, target = randn(lib, batch, seq, d), randn(lib, batch, seq, d, seed=1)
    run = _step(layer, opt, lambda: lib.nn.functional.mse_loss(layer(x), target))
    tokens = batch * seq
    forward = 2 * tokens * (4 * d * d + 2 * d * ff) + 2 * 2 * batch * seq * seq * d
    return run, ("flop", 3 * forward)


@workload("training", "LSTM 64->128 step Adam (32x32 seq)")
def _lstm(lib, quick):
    batch, seq, inp, hidden = 32, 32, 64, 128
    lib.manual_seed(0)
    lstm, head = lib.nn.LSTM(inp, hidden, batch_first=True), lib.nn.Linear(hidden, 10)
    params = [*lstm.parameters(), *head.parameters()]
    opt = lib.optim.Adam(params, lr=1e-3)
    x, y = randn(lib, batch, seq, inp), _labels(lib, batch)

    def loss():
        out, _ = lstm(x)
        return lib.nn.functional.cross_entropy(head(out[:, -1]), y)

    run = _step(lstm, opt, loss)
    forward = 2 * batch * seq * 4 * hidden * (inp + hidden) + 2 * batch * hidden * 10
    return run, ("flop", 3 * forward)


@workload("training", "DataLoader epoch 60k x 784 (batch 128, shuffle)")
def _loader(lib, quick):
    n = LOADER_ROWS[quick]
    data = _data(lib)
    dataset = data.TensorDataset(randn(lib, n, 784), _labels(lib, n))
    loader = data.DataLoader(dataset, batch_size=128, shuffle=True)

    def run():
        for _ in loader:
            pass

    return run, ("sample", n)
