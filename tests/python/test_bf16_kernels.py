"""bfloat16 and float16 tensors are first-class: every elementwise, reduction, matmul and
convolution kernel of a sweep takes them, and its result is float32's on the same (rounded)
inputs within 16-bit tolerances. Reductions and products accumulate in float32."""

import numpy as np
import pytest

import ember

F = ember.nn.functional
RNG = np.random.RandomState(0)


def arr(*shape, positive=False):
    a = RNG.randn(*shape).astype(np.float32)
    return np.abs(a) + 0.5 if positive else a


A = arr(6, 7)
B = arr(6, 7)
P = arr(6, 7, positive=True)
M1, M2, M3 = arr(5, 16), arr(16, 9), arr(5, 9)
BA, BB, BC = arr(3, 5, 16), arr(3, 16, 9), arr(3, 5, 9)
X2, W2, B2 = arr(2, 3, 9, 9), arr(4, 3, 3, 3), arr(4)
X1, W1 = arr(2, 3, 11), arr(4, 3, 3)
X3, W3 = arr(1, 2, 5, 5, 5), arr(3, 2, 2, 2, 2)
WT2 = arr(3, 4, 3, 3)
LW, LB = arr(7), arr(7)

# name -> fn(ts) over a dict of tensors of one dtype
OPS = {
    # elementwise
    "neg": lambda t: -t["a"],
    "abs": lambda t: t["a"].abs(),
    "exp": lambda t: t["a"].exp(),
    "log": lambda t: t["p"].log(),
    "sqrt": lambda t: t["p"].sqrt(),
    "rsqrt": lambda t: t["p"].rsqrt(),
    "sin": lambda t: t["a"].sin(),
    "cos": lambda t: t["a"].cos(),
    "tanh": lambda t: t["a"].tanh(),
    "sigmoid": lambda t: t["a"].sigmoid(),
    "relu": lambda t: F.relu(t["a"]),
    "gelu": lambda t: F.gelu(t["a"]),
    "silu": lambda t: F.silu(t["a"]),
    "softplus": lambda t: F.softplus(t["a"]),
    "leaky_relu": lambda t: F.leaky_relu(t["a"], 0.1),
    "erf": lambda t: t["a"].erf(),
    "reciprocal": lambda t: t["p"].reciprocal(),
    "clamp": lambda t: t["a"].clamp(-0.5, 0.5),
    "add": lambda t: t["a"] + t["b"],
    "sub": lambda t: t["a"] - t["b"],
    "mul": lambda t: t["a"] * t["b"],
    "div": lambda t: t["a"] / t["p"],
    "pow": lambda t: t["p"] ** t["b"].clamp(-2, 2),
    "maximum": lambda t: ember.maximum(t["a"], t["b"]),
    "minimum": lambda t: ember.minimum(t["a"], t["b"]),
    "where": lambda t: ember.where(t["a"] > 0, t["a"], t["b"]),
    "add_scalar": lambda t: t["a"] + 1.5,
    "lerp": lambda t: ember.lerp(t["a"], t["b"], 0.3),
    # reductions
    "sum": lambda t: t["a"].sum(),
    "sum_dim": lambda t: t["a"].sum(1),
    "mean": lambda t: t["a"].mean(0),
    "prod": lambda t: t["p"].prod(1),
    "amax": lambda t: t["a"].amax(1),
    "amin": lambda t: t["a"].amin(0),
    "var": lambda t: t["a"].var(1),
    "std": lambda t: t["a"].std(),
    "norm": lambda t: t["a"].norm(),
    "logsumexp": lambda t: t["a"].logsumexp(1),
    "cumsum": lambda t: t["a"].cumsum(1),
    "softmax": lambda t: t["a"].softmax(1),
    "log_softmax": lambda t: t["a"].log_softmax(1),
    "max_dim": lambda t: t["a"].max(1)[0],
    # products
    "mm": lambda t: t["m1"] @ t["m2"],
    "mm_t": lambda t: t["m2"].t() @ t["m1"].t(),
    "bmm": lambda t: ember.bmm(t["ba"], t["bb"]),
    "addmm": lambda t: ember.addmm(t["m3"], t["m1"], t["m2"], beta=0.5, alpha=2.0),
    "baddbmm": lambda t: ember.baddbmm(t["bc"], t["ba"], t["bb"], beta=0.5, alpha=2.0),
    "matmul_bcast": lambda t: ember.matmul(t["ba"], t["m2"]),
    "mv": lambda t: t["m1"] @ t["m2"][:, 0],
    "linear": lambda t: F.linear(t["m1"], t["m2"].t(), t["m3"][0]),
    "einsum": lambda t: ember.einsum("bij,bjk->bik", t["ba"], t["bb"]),
    # convolutions and friends
    "conv1d": lambda t: F.conv1d(t["x1"], t["w1"], padding=1),
    "conv2d": lambda t: F.conv2d(t["x2"], t["w2"], t["b2"], padding=1),
    "conv2d_stride_groups": lambda t: F.conv2d(t["x2"][:, :2], t["w2"][:, :1], stride=2, groups=2),
    "conv2d_dilation": lambda t: F.conv2d(t["x2"], t["w2"], dilation=2),
    "conv3d": lambda t: F.conv3d(t["x3"], t["w3"]),
    "conv_transpose2d": lambda t: F.conv_transpose2d(t["x2"], t["wt2"], stride=2),
    "max_pool2d": lambda t: F.max_pool2d(t["x2"], 2),
    "avg_pool2d": lambda t: F.avg_pool2d(t["x2"], 3),
    "adaptive_avg_pool2d": lambda t: F.adaptive_avg_pool2d(t["x2"], 1),
    "layer_norm": lambda t: F.layer_norm(t["a"], (7,), t["lw"], t["lb"]),
    "batch_norm": lambda t: F.batch_norm(t["x2"], None, None, training=True),
    "group_norm": lambda t: F.group_norm(t["x2"], 3),
}


def tensors(dtype):
    named = dict(a=A, b=B, p=P, m1=M1, m2=M2, m3=M3, ba=BA, bb=BB, bc=BC, x2=X2, w2=W2, b2=B2)
    named.update(x1=X1, w1=W1, x3=X3, w3=W3, wt2=WT2, lw=LW, lb=LB)
    return {k: ember.tensor(v).to(dtype) for k, v in named.items()}


def check(name, dtype):
    low = OPS[name](tensors(dtype))
    # float32 on the inputs rounded to the low dtype: only the kernel's own rounding differs
    ref = OPS[name]({k: v.float() for k, v in tensors(dtype).items()})
    assert low.dtype == dtype
    got = low.float().numpy()
    want = ref.numpy()
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * scale)


@pytest.mark.parametrize("name", sorted(OPS))
def test_bfloat16_matches_float32(name):
    check(name, ember.bfloat16)


@pytest.mark.parametrize("name", sorted(OPS))
def test_float16_matches_float32(name):
    check(name, ember.float16)


@pytest.mark.parametrize("name", ["mm", "bmm", "conv2d", "linear", "sum", "softmax", "layer_norm"])
def test_bfloat16_matches_torch(name):
    torch = pytest.importorskip("torch")
    got = OPS[name](tensors(ember.bfloat16)).float().numpy()
    named = dict(a=A, b=B, p=P, m1=M1, m2=M2, m3=M3, ba=BA, bb=BB, bc=BC, x2=X2, w2=W2, b2=B2)
    named.update(x1=X1, w1=W1, x3=X3, w3=W3, wt2=WT2, lw=LW, lb=LB)
    t = {k: torch.tensor(v).bfloat16() for k, v in named.items()}
    fn = OPS[name]
    # the same lambda under torch: F and ember resolve through the module globals
    g = dict(fn.__globals__, F=torch.nn.functional, ember=torch)
    want = type(fn)(fn.__code__, g)(t).float().numpy()
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * scale)


def test_sum_accumulates_in_float32():
    n = 100_000
    s = ember.ones(n, dtype=ember.bfloat16).sum()
    # a bfloat16 accumulator would stall at 256
    assert s.dtype == ember.bfloat16
    assert float(s) == float(ember.tensor(float(n)).bfloat16())
    assert float(ember.ones(n, dtype=ember.float16).mean()) == 1.0


@pytest.mark.parametrize("k", [1024, 4096])
def test_mm_accumulates_in_float32(k):
    a = ember.ones(4, k, dtype=ember.bfloat16)
    b = ember.ones(k, 64, dtype=ember.bfloat16)
    out = a @ b
    assert out.dtype == ember.bfloat16
    assert (out.float() == float(k)).all()


def test_large_products_match_float32():
    # sizes large enough for the library path (oneDNN where built with it)
    a, b = arr(64, 512), arr(512, 256)
    ta, tb = ember.tensor(a).bfloat16(), ember.tensor(b).bfloat16()
    ref = (ta.float() @ tb.float()).numpy()
    np.testing.assert_allclose((ta @ tb).float().numpy(), ref, rtol=2e-2, atol=0.1)
    # transposed and sliced operands, and a batch broadcast against one matrix
    np.testing.assert_allclose(
        (tb.t()[:100] @ ta.t()).float().numpy(), ref.T[:100], rtol=2e-2, atol=0.1
    )
    bt = ember.tensor(arr(3, 64, 512)).bfloat16()
    np.testing.assert_allclose(
        (bt @ tb).float().numpy(), (bt.float() @ tb.float()).numpy(), rtol=2e-2, atol=0.1
    )
    x, w = ember.tensor(arr(4, 32, 16, 16)).bfloat16(), ember.tensor(arr(64, 32, 3, 3)).bfloat16()
    got = F.conv2d(x, w, padding=1).float().numpy()
    want = F.conv2d(x.float(), w.float(), padding=1).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=0.15)


@pytest.mark.parametrize("dtype", [ember.bfloat16, ember.float16])
def test_backward_in_low_precision(dtype):
    x = ember.tensor(X2).to(dtype).requires_grad_()
    w = ember.tensor(W2).to(dtype).requires_grad_()
    m = ember.tensor(arr(81, 5)).to(dtype).requires_grad_()
    out = (F.conv2d(x, w, padding=1).flatten(2) @ m).sum()
    out.backward()
    assert x.grad.dtype == dtype and w.grad.dtype == dtype and m.grad.dtype == dtype
    xf, wf, mf = (t.detach().float().requires_grad_() for t in (x, w, m))
    (F.conv2d(xf, wf, padding=1).flatten(2) @ mf).sum().backward()
    for g, r in ((x.grad, xf.grad), (w.grad, wf.grad), (m.grad, mf.grad)):
        scale = max(1.0, float(r.abs().max()))
        np.testing.assert_allclose(g.float().numpy(), r.numpy(), rtol=3e-2, atol=3e-2 * scale)


@pytest.mark.parametrize("norm", ["batch_norm", "layer_norm", "group_norm"])
def test_norms_with_float32_parameters_keep_the_input_dtype(norm):
    # autocast's usual case: bf16 activations, float32 affine parameters and statistics
    x = ember.tensor(X2).bfloat16()
    w, b = ember.tensor(arr(3)), ember.tensor(arr(3))
    calls = {
        "batch_norm": lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        "layer_norm": lambda x, w, b: F.layer_norm(
            x, (9,), ember.ones(9, dtype=w.dtype), ember.zeros(9, dtype=w.dtype)
        ),
        "group_norm": lambda x, w, b: F.group_norm(x, 3, w, b),
    }
    out = calls[norm](x, w, b)
    assert out.dtype == ember.bfloat16
    ref = calls[norm](x.float(), w, b)
    np.testing.assert_allclose(out.float().numpy(), ref.numpy(), rtol=2e-2, atol=3e-2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_mul_and_div_read_a_second_scalar_in_float(dtype):
    """torch's mul/div of a 16-bit tensor by a number or another dtype's 0-d tensor read it as
    float and round once; a scalar first, add and sub round it to the tensor's dtype first."""
    t = ember.tensor(RNG.randn(4000).astype(np.float32) * 100).to(getattr(ember, dtype))
    wide = t.float()
    for s in (0.1, 0.3, 1.7, 3.3):
        once = {
            "mul": (wide * s).to(t.dtype),
            "div": (wide / s).to(t.dtype),
        }
        rounded = ember.tensor(s, dtype=t.dtype).item()
        for name, got in (
            ("mul", t * s),
            ("mul", s * t),
            ("mul", t.mul(ember.tensor(s))),
            ("mul", t.clone().mul_(s)),
            ("div", t / s),
            ("div", t.clone().div_(ember.tensor(s, dtype=ember.float64))),
        ):
            assert ember.equal(got, once[name]), (name, s)
        assert ember.equal(ember.tensor(s) * t, (wide * rounded).to(t.dtype))
        assert ember.equal(t + s, (wide + rounded).to(t.dtype))


def test_scalar_products_match_torch(torch):
    x = RNG.randn(500).astype(np.float32) * 100
    for dtype in ("bfloat16", "float16"):
        e, t = ember.tensor(x).to(getattr(ember, dtype)), torch.tensor(x).to(getattr(torch, dtype))
        for f in (lambda a: a * 0.1, lambda a: 0.3 * a, lambda a: a / 3.3, lambda a: a - 0.7):
            np.testing.assert_array_equal(f(e).float().numpy(), f(t).float().numpy())


def test_scalar_products_into_out_match_torch(torch):
    """out= reads the number as the functional form does (in float, rounded once), into an
    out of the tensor's dtype and into a wider one."""
    x = RNG.randn(500).astype(np.float32) * 100
    for dtype in ("bfloat16", "float16"):
        for out_dtype in (dtype, "float32"):
            got, want = [
                [
                    f(lib, lib.tensor(x).to(getattr(lib, dtype)), getattr(lib, out_dtype))
                    for f in (
                        lambda m, a, o: m.mul(a, 0.1, out=m.empty(0, dtype=o)),
                        lambda m, a, o: m.true_divide(a, 3.3, out=m.empty(0, dtype=o)),
                        lambda m, a, o: m.div(a, 0.3, out=m.empty(0, dtype=o)),
                        lambda m, a, o: m.mul(
                            a, m.tensor(0.1, dtype=m.float64), out=m.empty(0, dtype=o)
                        ),
                        lambda m, a, o: m.sub(a, 0.7, out=m.empty(0, dtype=o)),
                    )
                ]
                for lib in (ember, torch)
            ]
            for g, w in zip(got, want):
                assert g.dtype == getattr(ember, out_dtype)
                np.testing.assert_array_equal(g.float().numpy(), w.float().numpy())
