"""The vectorized elementwise and reduction kernel paths (cpu/loops.h, cpu/math.h, reduce_engine.h).

Lengths straddle the vector widths and the parallel grain, so every path runs: the vector body,
the scalar tail, the in-place loop, a broadcast scalar operand, strided operands and zero-size
tensors. References are numpy in float64, rounded to float32.
"""

import numpy as np
import pytest

import ember

LENGTHS = (0, 1, 7, 8, 9, 17, 33, 100_003)
RNG = np.random.default_rng(1234)


def data(n, scale=3.0):
    x = (RNG.standard_normal(n) * scale).astype(np.float32)
    if n >= 8:  # the special values land in the vector body, not just the tail
        x[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -1e-40]
    return x


def np_exp(x):
    return np.exp(x.astype(np.float64)).astype(np.float32)


def np_sigmoid(x):
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)


UNARY = {
    "relu": (ember.relu, lambda x: np.where(x <= 0, np.float32(0), x)),
    "abs": (ember.abs, np.abs),
    "neg": (ember.neg, np.negative),
    "exp": (ember.exp, np_exp),
    "sigmoid": (ember.sigmoid, np_sigmoid),
    "tanh": (ember.tanh, lambda x: np.tanh(x.astype(np.float64)).astype(np.float32)),
    "log": (ember.log, lambda x: np.log(x.astype(np.float64)).astype(np.float32)),
    "log1p": (ember.log1p, lambda x: np.log1p(x.astype(np.float64)).astype(np.float32)),
}


def check(got, want, rtol=4e-7):
    got = got.numpy() if hasattr(got, "numpy") else got
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-44, equal_nan=True)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_contiguous_and_inplace(name, n):
    fn, ref = UNARY[name]
    x = data(n)
    with np.errstate(all="ignore"):
        want = ref(x)
    check(fn(ember.tensor(x)), want)
    t = ember.tensor(x)
    getattr(t, name + "_")()
    check(t, want)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_strided(name):
    fn, ref = UNARY[name]
    x = data(40 * 33).reshape(40, 33)
    with np.errstate(all="ignore"):
        check(fn(ember.tensor(x).t()), ref(x.T))
        check(fn(ember.tensor(x)[:, ::2]), ref(x[:, ::2]))


def test_relu_keeps_nan_and_zero_sign():
    x = np.array([np.nan, -0.0, 0.0, -2.0, 3.0, np.inf, -np.inf, 1e-45] * 3, np.float32)
    got = ember.relu(ember.tensor(x)).numpy()
    assert np.isnan(got[0]) and np.isnan(got[8])
    np.testing.assert_array_equal(got[1:8], np.array([0, 0, 0, 3, np.inf, 0, 1e-45], np.float32))
    assert not np.signbit(got[1])


def test_abs_of_negative_zero_is_positive():
    got = ember.abs(ember.tensor(np.full(19, -0.0, np.float32))).numpy()
    assert not np.signbit(got).any()


def test_exp_accuracy_over_the_float_range():
    # Dense grid from below float's subnormal range to past overflow: at most 2 ulp off.
    x = np.linspace(-110, 90, 400_001, dtype=np.float32)
    got = ember.exp(ember.tensor(x)).numpy()
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64))
    normal = want >= np.finfo(np.float32).tiny
    finite = want <= np.finfo(np.float32).max
    ok = normal & finite
    ulp = np.abs(got[ok] - want[ok]) / np.spacing(want[ok].astype(np.float32))
    assert ulp.max() <= 2
    assert np.all(np.isinf(got[~finite]))
    sub = ~normal
    np.testing.assert_allclose(got[sub], want[sub].astype(np.float32), rtol=0, atol=2e-45)


def test_tanh_accuracy_and_odd_symmetry():
    x = np.linspace(-12, 12, 200_001, dtype=np.float32)
    got = ember.tanh(ember.tensor(x)).numpy()
    want = np.tanh(x.astype(np.float64))
    nz = want != 0
    ulp = np.abs(got[nz] - want[nz]) / np.spacing(np.abs(want[nz]).astype(np.float32))
    assert ulp.max() <= 2
    np.testing.assert_array_equal(got, -ember.tanh(ember.tensor(-x)).numpy())
    special = np.array([-0.0, 1e-42, np.inf, -np.inf, np.nan, 100.0] * 3, np.float32)
    got = ember.tanh(ember.tensor(special)).numpy()
    assert np.signbit(got[0]) and got[1] == np.float32(1e-42)
    np.testing.assert_array_equal(got[2:4], [1, -1])
    assert np.isnan(got[4]) and got[5] == 1


def test_sigmoid_tails():
    x = np.array([-200, -100, -88, -30, -1e-3, 1e-3, 30, 100, 200] * 2, np.float32)
    check(ember.sigmoid(ember.tensor(x)), np_sigmoid(x), rtol=1e-6)


def test_float64_unaries_use_double_precision():
    x = np.linspace(-5, 5, 101)
    np.testing.assert_allclose(ember.exp(ember.tensor(x)).numpy(), np.exp(x), rtol=1e-15)
    np.testing.assert_allclose(
        ember.sigmoid(ember.tensor(x)).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-15
    )


@pytest.mark.parametrize("n", LENGTHS)
def test_binary_paths(n):
    a, b = data(n), data(n)
    ta, tb = ember.tensor(a), ember.tensor(b)
    check(ta + tb, a + b)
    check(ta * 0.5, a * np.float32(0.5))
    check(2.0 - ta, np.float32(2.0) - a)
    with np.errstate(invalid="ignore"):
        want = np.where(np.isnan(a) | (a > 0), a, np.float32(0))
    check(ember.clamp(ta, min=0), want)
    t = ember.tensor(a)
    t.mul_(tb)
    check(t, a * b)
    t = ember.tensor(a)
    t.add_(1.5)
    check(t, a + np.float32(1.5))
    np.testing.assert_array_equal((ta > 0).numpy(), a > 0)


def test_binary_broadcast_and_strided():
    a = data(64 * 48).reshape(64, 48)
    row = data(48)
    check(ember.tensor(a).t() * ember.tensor(row)[:, None], a.T * row[:, None])
    check(ember.tensor(a)[::3] + ember.tensor(row), a[::3] + row)


def test_where_with_a_scalar_branch():
    x = data(1000)
    m = ember.tensor(x > 0)
    t = ember.tensor(x)
    zero = ember.tensor(0.0)
    check(ember.where(m, t, zero), np.where(x > 0, x, np.float32(0)))
    check(ember.where(m, zero, t), np.where(x > 0, np.float32(0), x))


def test_relu_backward():
    x = data(100_003)
    g = data(100_003)
    t = ember.tensor(x).requires_grad_()
    ember.relu(t).backward(ember.tensor(g))
    with np.errstate(invalid="ignore"):
        want = np.where(x <= 0, np.float32(0), g)  # NaN input passes its gradient, as torch
    check(t.grad, want)


def test_relu_backward_strided_expanded_and_empty():
    x = data(30 * 20).reshape(30, 20)
    t = ember.tensor(x).requires_grad_()
    ember.relu(t.t()).sum().backward()  # transposed input, stride-0 gradient
    with np.errstate(invalid="ignore"):
        check(t.grad, np.where(x <= 0, np.float32(0), np.float32(1)))
    e = ember.zeros(0, 3, requires_grad=True)
    ember.relu(e).sum().backward()
    assert e.grad.shape == (0, 3)


def test_relu_backward_matches_torch():
    torch = pytest.importorskip("torch")
    x = data(4096)
    g = data(4096)
    t = ember.tensor(x).requires_grad_()
    ember.relu(t).backward(ember.tensor(g))
    tt = torch.tensor(x).requires_grad_()
    torch.relu(tt).backward(torch.tensor(g))
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())


def test_relu_double_backward():
    x = ember.tensor(np.array([-1.0, 0.5, 2.0, -3.0])).requires_grad_()
    y = ember.relu(x)
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [0, 1, 1, 0])
    assert ember.autograd.gradcheck(ember.relu, (x,))


@pytest.mark.parametrize("n", (0, 1, 15, 16, 17, 33 * 1024 + 5, 3 * 16384 * 7 + 11))
def test_sum_is_accurate_and_thread_independent(n):
    x = data(n)
    x[np.isnan(x) | np.isinf(x)] = 1.0
    old = ember.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            results.append(ember.tensor(x).sum().item())
    finally:
        ember.set_num_threads(old)
    assert results[0] == results[1] == results[2]
    np.testing.assert_allclose(results[0], x.astype(np.float64).sum(), rtol=1e-6, atol=1e-5)


def test_sum_rows_columns_and_prod():
    x = data(37 * 50).reshape(37, 50)
    x[np.isnan(x) | np.isinf(x)] = 1.0
    t = ember.tensor(x)
    np.testing.assert_allclose(t.sum(1).numpy(), x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t.sum(0).numpy(), x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)
    ints = ember.arange(1, 41).reshape(2, 20)  # wraps mod 2^64, as numpy: order-free
    assert ints.prod(1).tolist() == [
        int(np.prod(np.arange(1, 21, dtype=np.int64))),
        int(np.prod(np.arange(21, 41, dtype=np.int64))),
    ]
    assert ember.tensor(np.zeros((0, 5), np.float32)).sum().item() == 0


# Note [Output layout]: results keep the inputs' memory order, as torch's do.
LAYOUT_CASES = {
    "transposed": lambda t: t.randn(5, 7).t(),
    "channels_last": lambda t: t.randn(2, 3, 4, 5).permute(0, 2, 3, 1),
    "sliced": lambda t: t.randn(6, 8)[:, ::2],
    "expanded_row": lambda t: t.randn(1, 6).expand(4, 6),
}
LAYOUT_OPS = {
    "add": lambda t, x: x + x,
    "mul_scalar": lambda t, x: x * 2,
    "exp": lambda t, x: t.exp(x),
    "relu": lambda t, x: t.relu(x),
    "gt": lambda t, x: x > 0,
    "neg": lambda t, x: -x,
    "where": lambda t, x: t.where(x > 0, x, 0.0),
    "gelu": lambda t, x: t.nn.functional.gelu(x),
}


@pytest.mark.parametrize("case", LAYOUT_CASES)
@pytest.mark.parametrize("op", LAYOUT_OPS)
def test_output_keeps_input_layout(case, op, torch):
    x = LAYOUT_CASES[case](ember)
    out = LAYOUT_OPS[op](ember, x)
    ref_in = LAYOUT_CASES[case](torch)
    ref = LAYOUT_OPS[op](torch, ref_in)
    assert out.stride() == ref.stride()
    assert out.is_contiguous() == ref.is_contiguous()
    # torch's own gelu differs by up to ~2e-7 between its strided and contiguous loops
    np.testing.assert_allclose(
        out.numpy(), LAYOUT_OPS[op](ember, x.contiguous()).numpy(), rtol=1e-6, atol=1e-6
    )


def test_mixed_layouts_follow_the_first_input(torch):
    a, b = ember.randn(4, 6).t(), ember.randn(6, 4)
    out = a + b
    assert out.stride() == (torch.randn(4, 6).t() + torch.randn(6, 4)).stride()
    np.testing.assert_array_equal(out.numpy(), a.numpy() + b.numpy())


@pytest.mark.parametrize("exponent", [2, 3, -1, -2, 2.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_by_a_small_integer_exponent_is_bitwise_torch(exponent, dtype, torch):
    # 2, 3, -1 and -2 run as multiplies (cpu/binary.cpp); the results must not move.
    x = (RNG.standard_normal(1000) * 3).astype(dtype)
    x[:4] = [0.0, -0.0, np.inf, -np.inf]
    want = (torch.from_numpy(x) ** exponent).numpy()
    np.testing.assert_array_equal((ember.tensor(x) ** exponent).numpy(), want)
    y = ember.tensor(x)
    y.pow_(exponent)
    np.testing.assert_array_equal(y.numpy(), want)


def test_bmm_batches_on_the_pool_match_numpy():
    # Batches of products above OpenBLAS's serial size run on ember's pool (Note [BLAS threads]).
    a = RNG.standard_normal((4, 90, 70)).astype(np.float32)
    b = RNG.standard_normal((4, 70, 80)).astype(np.float32)
    threads = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        got = ember.bmm(ember.tensor(a), ember.tensor(b)).numpy()
    finally:
        ember.set_num_threads(threads)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_every_tail_of_the_16_lane_loop_matches_the_strided_path(name):
    """Lengths 1..40 at two alignments run the AVX-512 body (16 lanes) and every tail length;
    the strided loop is the plain build, bitwise equal under fp-contract=off (cpu/loops.h)."""
    fn, ref = UNARY[name]
    x = data(43)
    pairs = ember.tensor(np.repeat(x, 2).reshape(43, 2))  # column 0 is x at stride 2
    for start in (0, 3):
        for n in range(1, 41):
            dense = fn(ember.tensor(x[start : start + n]))
            strided = fn(pairs[start : start + n, 0])
            np.testing.assert_array_equal(dense.numpy(), strided.numpy())
            with np.errstate(all="ignore"):
                check(dense, ref(x[start : start + n]))


# Activations whose float forms use the vector math of cpu/math.h and cpu/activation.cpp.
WIDE_ACTIVATIONS = [
    ("gelu", {}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("mish", {}),
    ("softplus", {}),
    ("logsigmoid", {}),
    ("elu", {}),
    ("sigmoid", {}),
    ("tanh", {}),
]


@pytest.mark.parametrize("name,kw", WIDE_ACTIVATIONS)
def test_activation_every_tail_of_the_16_lane_loop_matches_torch(torch, name, kw):
    x = (RNG.standard_normal(43) * 4).astype(np.float32)
    x[40:] = [90.0, -90.0, 1e-30]  # past exp's clamps, and a tiny input
    for start in (0, 3):
        for n in range(1, 41):
            got = getattr(ember.nn.functional, name)(ember.tensor(x[start : start + n]), **kw)
            want = getattr(torch.nn.functional, name)(torch.tensor(x[start : start + n]), **kw)
            np.testing.assert_allclose(
                got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6, equal_nan=True
            )
            g = ember.tensor(np.ones(n, np.float32))
            t = ember.tensor(x[start : start + n], requires_grad=True)
            getattr(ember.nn.functional, name)(t, **kw).backward(g)
            tt = torch.tensor(x[start : start + n], requires_grad=True)
            getattr(torch.nn.functional, name)(tt, **kw).backward(torch.ones(n))
            np.testing.assert_allclose(
                t.grad.numpy(), tt.grad.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True
            )


def test_log_and_log1p_accuracy_over_the_float_range():
    """fast_log (Cephes' logf) and fast_log1p (Goldberg's log(u) * x / (u - 1)) are vectorized
    polynomials: within 2 ulp of float64 log over the range, subnormals and the specials."""
    x = np.concatenate([np.geomspace(1e-45, 3e38, 20011), [1e-40, 1, 2, 0.5, np.inf]])
    x = x.astype(np.float32)
    check(ember.log(ember.tensor(x)), np.log(x.astype(np.float64)).astype(np.float32), 2.4e-7)
    small = np.concatenate([-np.geomspace(1e-30, 0.999, 5003), np.geomspace(1e-30, 1e30, 5003)])
    small = small.astype(np.float32)
    want = np.log1p(small.astype(np.float64)).astype(np.float32)
    check(ember.log1p(ember.tensor(small)), want, 2.4e-7)
    specials = np.array([0.0, -0.0, -1.0, -2.0, np.nan, np.inf, -np.inf], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ember.log(ember.tensor(specials)).numpy(), np.log(specials))
        np.testing.assert_array_equal(
            ember.log1p(ember.tensor(specials)).numpy(), np.log1p(specials)
        )


@pytest.mark.parametrize(
    "shape,perm",
    [
        ((70, 45), (1, 0)),
        ((3, 37, 70), (0, 2, 1)),
        ((33, 5, 40), (2, 1, 0)),
        ((2, 64, 96), (0, 2, 1)),
    ],
)
def test_transposing_copy_over_tile_remainders_and_outer_dims(shape, perm):
    """contiguous() of a transpose copies 32 x 32 tiles in the source's order (cpu/copy.cpp)."""
    a = RNG.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(
        ember.tensor(a).permute(*perm).contiguous().numpy(), a.transpose(perm)
    )
    ints = (a * 100).astype(np.int16)
    np.testing.assert_array_equal(
        ember.tensor(ints).permute(*perm).contiguous().numpy(), ints.transpose(perm)
    )
    runs = []
    for threads in (1, 2, 3):
        saved = ember.get_num_threads()
        ember.set_num_threads(threads)
        runs.append(ember.tensor(a).permute(*perm).contiguous().numpy())
        ember.set_num_threads(saved)
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])
