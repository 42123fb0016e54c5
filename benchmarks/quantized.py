"""int8 inference: ember's quantized kernels vs torch's (x86 engine) and vs ember float32.

1. Dynamic quantized Linear (in x out, default 1024 x 1024) at batch 1, 4, 16, 64: ember's
   ao.nn.quantized.dynamic.Linear, torch's, and ember's float nn.Linear.
2. Static int8 CNN inference (the Fashion-MNIST CNN's convolutions, batch 64 at 28 x 28): a
   quint8 input through ConvReLU2d(1->32) -> max_pool -> ConvReLU2d(32->64) -> max_pool ->
   Linear(3136->128, ReLU) -> Linear(128->10), ember's vs torch's quantized modules with the
   same int8 weights, and ember's float32 model.

3. The primitives around them, at the CNN's sizes: quantize_per_tensor of the input
   (64 x 1 x 28 x 28), quantize_per_channel of the second convolution's weight (64 x 32 x 3 x 3),
   dequantize of a 64 x 64 x 7 x 7 activation, and the flatten (a contiguous NCHW copy) of that
   activation in channels-last layout, where the quantized convolutions leave it; at 1M floats,
   the float32 -> int8 conversion (``.to(int8)``) and quantized_decomposed.quantize_per_tensor
   (the q/dq graphs' quantize: round, add, clamp, that conversion); at 1M elements, the ops on
   quantized tensors (quantized::add, add_relu, mul, relu, clamp, cat) and the int8 / float
   elementwise kernels under them (int8 add and clamp, float32 clamp with number bounds).
4. Quantized Conv3d (3x3x3, padding 1) at two sizes, ember's vs torch's with the same int8
   weights (ember has no int8 3-d kernel: Note in `_ops.conv3d`).

The libraries run alternately in one process (best of R), same thread count.

Usage: python benchmarks/quantized.py [--threads N] [--repeat R] [--features F] [--batch B]
                                      [--only primitives|conv3d]
"""

import argparse
import warnings

import numpy as np
from _compare import best_times

import ember


def _to_torch(torch, q):
    r = torch.tensor(q.int_repr().numpy())
    if q.qscheme().name.startswith("per_tensor"):
        return torch._make_per_tensor_quantized_tensor(r, q.q_scale(), q.q_zero_point())
    return torch._make_per_channel_quantized_tensor(
        r,
        torch.tensor(q.q_per_channel_scales().numpy()),
        torch.tensor(q.q_per_channel_zero_points().numpy()),
        q.q_per_channel_axis(),
    )


def _qweight(w):
    """Per-channel symmetric qint8 of a float weight (what the x86 qconfig gives)."""
    flat = np.abs(w.reshape(w.shape[0], -1)).max(1)
    scales = np.maximum(flat / 127.5, 1e-8)
    return ember.quantize_per_channel(
        ember.tensor(w),
        ember.tensor(scales),
        ember.zeros(w.shape[0], dtype=ember.int64),
        0,
        ember.qint8,
    )


def dynamic_linear(torch, features, batches, repeat):
    import ember.ao.nn.quantized.dynamic as nnqd

    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.05, (features, features)).astype(np.float32)
    b = rng.normal(0, 0.1, features).astype(np.float32)
    qw = _qweight(w)
    ours = nnqd.Linear(features, features)
    ours.set_weight_bias(qw, ember.tensor(b))
    flt = ember.nn.Linear(features, features)
    with ember.no_grad():
        flt.weight.copy_(ember.tensor(w))
        flt.bias.copy_(ember.tensor(b))
    theirs = None
    if torch is not None:
        import torch.ao.nn.quantized.dynamic as tnnqd

        theirs = tnnqd.Linear(features, features)
        theirs.set_weight_bias(_to_torch(torch, qw), torch.tensor(b))
    print(f"dynamic quantized Linear {features}x{features} (ms per call)")
    print(
        f"{'batch':>6} {'ember int8':>11} {'torch int8':>11} {'ember f32':>10} "
        f"{'torch/ember':>12} {'f32/int8':>9}"
    )
    for batch in batches:
        x = rng.normal(0, 1, (batch, features)).astype(np.float32)
        xe = ember.tensor(x)
        fns = [lambda: ours(xe)]

        def run_float():
            with ember.no_grad():
                flt(xe)

        fns.append(run_float)
        if theirs is not None:
            xt = torch.tensor(x)
            fns.append(lambda: theirs(xt))
        times = best_times(fns, repeat, warmup=3)
        e, f = times[0] * 1e3, times[1] * 1e3
        t = times[2] * 1e3 if theirs is not None else float("nan")
        print(f"{batch:>6} {e:>11.4f} {t:>11.4f} {f:>10.4f} {t / e:>12.2f} {f / e:>9.2f}")


def _cnn_weights(rng):
    return {
        "c1": rng.normal(0, 0.3, (32, 1, 3, 3)).astype(np.float32),
        "b1": rng.normal(0, 0.1, 32).astype(np.float32),
        "c2": rng.normal(0, 0.06, (64, 32, 3, 3)).astype(np.float32),
        "b2": rng.normal(0, 0.1, 64).astype(np.float32),
        "l1": rng.normal(0, 0.02, (128, 3136)).astype(np.float32),
        "lb1": rng.normal(0, 0.1, 128).astype(np.float32),
        "l2": rng.normal(0, 0.1, (10, 128)).astype(np.float32),
        "lb2": rng.normal(0, 0.1, 10).astype(np.float32),
    }


def _quantized_cnn(lib, W, qws, to_lib):
    """The quantized model in `lib` (ember or torch): modules built directly."""
    nniq = lib.ao.nn.intrinsic.quantized
    nnq = lib.ao.nn.quantized
    c1 = nniq.ConvReLU2d(1, 32, 3, padding=1)
    c1.set_weight_bias(to_lib(qws["c1"]), lib.tensor(W["b1"]))
    c1.scale, c1.zero_point = 0.02, 0
    c2 = nniq.ConvReLU2d(32, 64, 3, padding=1)
    c2.set_weight_bias(to_lib(qws["c2"]), lib.tensor(W["b2"]))
    c2.scale, c2.zero_point = 0.02, 0
    l1 = nniq.LinearReLU(3136, 128)
    l1.set_weight_bias(to_lib(qws["l1"]), lib.tensor(W["lb1"]))
    l1.scale, l1.zero_point = 0.02, 0
    l2 = nnq.Linear(128, 10)
    l2.set_weight_bias(to_lib(qws["l2"]), lib.tensor(W["lb2"]))
    l2.scale, l2.zero_point = 0.05, 128
    F = lib.nn.functional

    def run(x):
        q = lib.quantize_per_tensor(x, 0.01, 0, lib.quint8)
        q = F.max_pool2d(c1(q), 2)
        q = F.max_pool2d(c2(q), 2)
        q = l2(l1(q.reshape(q.shape[0], -1)))
        return q.dequantize()

    return run


def _float_cnn(W):
    nn = ember.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(3136, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    ).eval()
    with ember.no_grad():
        for (i, k), (j, kb) in zip(
            ((0, "c1"), (3, "c2"), (7, "l1"), (9, "l2")),
            ((0, "b1"), (3, "b2"), (7, "lb1"), (9, "lb2")),
        ):
            model[i].weight.copy_(ember.tensor(W[k]))
            model[j].bias.copy_(ember.tensor(W[kb]))
    return model


def static_cnn(torch, batch, repeat):
    import ember.ao.nn.intrinsic.quantized  # noqa: F401
    import ember.ao.nn.quantized  # noqa: F401

    rng = np.random.default_rng(1)
    W = _cnn_weights(rng)
    qws = {k: _qweight(W[k]) for k in ("c1", "c2", "l1", "l2")}
    x = rng.random((batch, 1, 28, 28)).astype(np.float32)
    xe = ember.tensor(x)
    ours = _quantized_cnn(ember, W, qws, lambda q: q)
    flt = _float_cnn(W)

    def run_float():
        with ember.no_grad():
            flt(xe)

    fns = [lambda: ours(xe), run_float]
    if torch is not None:
        import torch.ao.nn.intrinsic.quantized  # noqa: F401
        import torch.ao.nn.quantized  # noqa: F401

        theirs = _quantized_cnn(torch, W, qws, lambda q: _to_torch(torch, q))
        xt = torch.tensor(x)
        fns.append(lambda: theirs(xt))
        agree = np.abs(ours(xe).numpy() - theirs(xt).numpy()).max()
        print(f"static int8 CNN: max |ember - torch| of the logits {agree:.4f}")
    times = best_times(fns, repeat, warmup=2)
    e, f = times[0] * 1e3, times[1] * 1e3
    t = times[2] * 1e3 if torch is not None else float("nan")
    print(f"static int8 CNN, batch {batch} (ms per batch)")
    print(
        f"{'ember int8':>11} {'torch int8':>11} {'ember f32':>10} {'torch/ember':>12} "
        f"{'f32/int8':>9}"
    )
    print(f"{e:>11.3f} {t:>11.3f} {f:>10.3f} {t / e:>12.2f} {f / e:>9.2f}")


def primitives(torch, repeat):
    rng = np.random.default_rng(2)
    x = rng.random((64, 1, 28, 28)).astype(np.float32)
    w = rng.normal(0, 0.06, (64, 32, 3, 3)).astype(np.float32)
    act = rng.random((64, 64, 7, 7)).astype(np.float32)
    flat = rng.standard_normal(1 << 20).astype(np.float32) * 3
    scales = np.maximum(np.abs(w.reshape(64, -1)).max(1) / 127.5, 1e-8)

    def cases(lib):
        xt, wt, at = lib.tensor(x), lib.tensor(w), lib.tensor(act)
        sc, zp = lib.tensor(scales), lib.zeros(64, dtype=lib.int64)
        qa = lib.quantize_per_tensor(at, 0.01, 0, lib.quint8)
        qcl = qa.contiguous(memory_format=lib.channels_last)
        big = lib.tensor(flat)
        if lib is not ember:  # torch defines quantized_decomposed on importing quantize_fx
            __import__("torch.ao.quantization.quantize_fx")
        qd = lib.ops.quantized_decomposed
        qx = lib.quantize_per_tensor(big, 0.02, 128, lib.quint8)
        qy = lib.quantize_per_tensor(big.flip(0), 0.03, 120, lib.quint8)
        i8, j8 = (big * 30).to(lib.int8), (big.flip(0) * 30).to(lib.int8)
        qops = lib.ops.quantized
        return [
            (
                "quantize_per_tensor 64x1x28x28",
                lambda: lib.quantize_per_tensor(xt, 0.01, 0, lib.quint8),
            ),
            (
                "quantize_per_channel 64x32x3x3",
                lambda: lib.quantize_per_channel(wt, sc, zp, 0, lib.qint8),
            ),
            ("dequantize 64x64x7x7", lambda: qa.dequantize()),
            ("channels-last quint8 flatten", lambda: qcl.reshape(64, -1)),
            ("float32 -> int8 to() 1M", lambda: big.to(lib.int8)),
            (
                "decomposed quantize_per_tensor 1M",
                lambda: qd.quantize_per_tensor(big, 0.05, 3, -128, 127, lib.int8),
            ),
            ("quantized add quint8 1M", lambda: qops.add(qx, qy, 0.04, 100)),
            ("quantized add_relu quint8 1M", lambda: qops.add_relu(qx, qy, 0.04, 100)),
            ("quantized mul quint8 1M", lambda: qops.mul(qx, qy, 0.04, 100)),
            ("relu quint8 1M", lambda: lib.relu(qx)),
            ("clamp quint8 1M", lambda: lib.clamp(qx, -1.0, 1.0)),
            ("cat quint8 2x1M", lambda: lib.cat([qx, qy])),
            ("int8 add 1M", lambda: i8 + j8),
            ("int8 clamp 1M", lambda: i8.clamp(-5, 5)),
            ("float32 clamp 1M", lambda: big.clamp(-1.0, 1.0)),
        ]

    ours = cases(ember)
    theirs = cases(torch) if torch is not None else None
    print("quantization primitives (ms per call)")
    print(f"{'':<32} {'ember':>9} {'torch':>9} {'torch/ember':>12}")
    for i, (name, fn) in enumerate(ours):
        fns = [fn] + ([theirs[i][1]] if theirs else [])
        times = best_times(fns, repeat * 5, warmup=3)
        e = times[0] * 1e3
        t = times[1] * 1e3 if theirs else float("nan")
        print(f"{name:<32} {e:>9.4f} {t:>9.4f} {t / e:>12.2f}")


def conv3d(torch, repeat):
    rng = np.random.default_rng(3)
    print("quantized Conv3d 3x3x3, padding 1 (ms per call)")
    print(f"{'':<32} {'ember':>9} {'torch':>9} {'torch/ember':>12}")
    for shape, cout in (((4, 8, 8, 16, 16), 16), ((2, 32, 8, 28, 28), 32)):
        x = rng.random(shape).astype(np.float32)
        w = rng.normal(0, 0.1, (cout, shape[1], 3, 3, 3)).astype(np.float32)

        def module(lib, x=x, w=w, cin=shape[1], cout=cout):
            nnq = __import__(lib.__name__ + ".ao.nn.quantized", fromlist=["Conv3d"])
            m = nnq.Conv3d(cin, cout, 3, padding=1)
            m.set_weight_bias(lib.quantize_per_tensor(lib.tensor(w), 0.004, 0, lib.qint8), None)
            m.scale, m.zero_point = 0.05, 64
            qx = lib.quantize_per_tensor(lib.tensor(x), 0.01, 0, lib.quint8)
            return lambda: m(qx)

        fns = [module(ember)] + ([module(torch)] if torch is not None else [])
        times = best_times(fns, repeat, warmup=2)
        e = times[0] * 1e3
        t = times[1] * 1e3 if torch is not None else float("nan")
        name = "x".join(map(str, shape)) + f" -> {cout}"
        print(f"{name:<32} {e:>9.3f} {t:>9.3f} {t / e:>12.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--features", type=int, default=1024)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--only", choices=["primitives", "conv3d"], default=None)
    args = p.parse_args()
    if args.threads:
        ember.set_num_threads(args.threads)
    try:
        import torch

        warnings.filterwarnings("ignore")
        torch.backends.quantized.engine = "x86"
        if args.threads:
            torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
        print("torch is not installed: printing ember only")
    print(
        f"threads: ember {ember.get_num_threads()}"
        + (f", torch {torch.get_num_threads()}" if torch else "")
    )
    if args.only == "primitives":
        primitives(torch, args.repeat)
        return
    if args.only == "conv3d":
        conv3d(torch, args.repeat)
        return
    dynamic_linear(torch, args.features, (1, 4, 16, 64), args.repeat)
    print()
    static_cnn(torch, args.batch, max(3, args.repeat // 3))
    print()
    primitives(torch, args.repeat)
    print()
    conv3d(torch, max(3, args.repeat // 3))


if __name__ == "__main__":
    main()
