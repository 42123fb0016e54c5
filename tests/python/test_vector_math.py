"""The vector-math library (csrc/ember/cpu/vmath.h, Note [Vector math]): one exp, log, log1p,
tanh, sigmoid and erf behind the unary ops, the fused activations and the softmax rows.

Checks the float32 functions against a float64 reference within a stated ULP bound over a dense
range, the extremes (|x| up to 1e4, +-inf, nan, subnormals, the overflow and underflow edges),
and that the ops built on them agree with each other (silu(x) == x * sigmoid(x) at every x).
float64 keeps libm and is checked the same way.
"""

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F

F32_ULP_BOUND = {  # measured maximum + margin; torch's own float32 functions are within 1-2 ulp
    "exp": 2,
    "log": 2,
    "log1p": 3,
    "tanh": 2,
    "sigmoid": 3,
    "erf": 2,
}
F64_ULP_BOUND = 2  # libm

EXTREMES = [
    0.0,
    -0.0,
    1e-45,
    -1e-45,
    1e-40,
    -1e-40,
    1.17e-38,
    1e-30,
    -1e-30,
    1e-7,
    -1e-7,
    0.5,
    -0.5,
    0.625,
    -0.625,
    0.875,
    -0.875,
    3.9,
    -3.9,
    4.0,
    -4.0,
    20.0,
    -20.0,
    87.3,
    -87.3,
    88.7,
    88.8,
    -88.8,
    89.0,
    -89.0,
    90.0,
    -90.0,
    100.0,
    -100.0,
    103.9,
    -103.9,
    104.0,
    -104.0,
    110.0,
    -110.0,
    1e4,
    -1e4,
    3.4e38,
    -3.4e38,
    float("inf"),
    float("-inf"),
    float("nan"),
]


def dense(dtype):
    lin = np.linspace(-30, 30, 400_001)
    logs = np.logspace(-40, 38.5, 20_001)
    x = np.concatenate([lin, logs, -logs, np.array(EXTREMES)])
    return x.astype(dtype)


@np.errstate(invalid="ignore", divide="ignore")
def domain(name, x):
    if name == "log":
        return np.abs(x)
    if name == "log1p":
        return np.where(x < -1, -1 - (x + 1) / (np.abs(x) + 2), x)  # folds into [-1, inf)
    return x


def reference(name, x):
    t = torch.from_numpy(np.asarray(x, dtype=np.float64))
    if name == "sigmoid":  # e^x / (1 + e^x) below 0: torch's float64 sigmoid flushes at -710
        e = torch.exp(-t.abs())
        return torch.where(t >= 0, 1 / (1 + e), e / (1 + e)).numpy()
    fn = {
        "exp": torch.exp,
        "log": torch.log,
        "log1p": torch.log1p,
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "erf": torch.special.erf,
    }[name]
    return fn(t).numpy()


def ulp_error(got, ref, dtype):
    """|got - ref| in units of the last place of ref in `dtype` (subnormal spacing included);
    where ref rounds to +-inf in `dtype`, 0 for that inf and inf otherwise."""
    got = got.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = ref.astype(dtype).astype(np.float64)
        spacing = np.spacing(np.abs(rounded).astype(dtype)).astype(np.float64)
        err = np.abs(got - ref) / spacing
    err = np.where(np.isinf(rounded), np.where(got == rounded, 0.0, np.inf), err)
    return np.where(np.isnan(got) & np.isnan(ref), 0.0, err)


def ember_fn(name, x):
    return getattr(ember, name)(ember.tensor(x)).numpy()


@pytest.mark.parametrize("name", sorted(F32_ULP_BOUND))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ulp_bound_dense_and_extremes(name, dtype):
    x = domain(name, dense(dtype))
    got = ember_fn(name, x)
    err = ulp_error(got, reference(name, x), dtype)
    bound = F32_ULP_BOUND[name] if dtype == np.float32 else F64_ULP_BOUND
    worst = int(np.nanargmax(err))
    assert err[worst] <= bound, f"{name}({x[worst]!r}) = {got[worst]!r}: {err[worst]:.2f} ulp"
    assert not np.isnan(err).any()


@pytest.mark.parametrize("name", sorted(F32_ULP_BOUND))
def test_extremes_match_torch_float32(name):
    x = domain(name, np.array(EXTREMES, dtype=np.float32))
    got = ember_fn(name, x)
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    # nan where torch gives nan, the same inf, zeros and ones exactly; else within the ulp bound
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    assert (ulp_error(got, reference(name, x), np.float32) <= F32_ULP_BOUND[name]).all()


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_fused_activations_use_the_same_functions(dtype):
    x = ember.tensor(dense(np.float64)).to(dtype)
    s = ember.sigmoid(x)
    np.testing.assert_allclose(
        F.silu(x).numpy(), (x * s).numpy(), rtol=4e-7 if dtype == ember.float32 else 1e-15, atol=0
    )
    # the sigmoid inside silu at the extremes, where the copies used to clamp differently
    for v in [-87.0, -88.0, -90.0, -95.0, -100.0, -103.0, -1e4, 1e4]:
        t = ember.tensor([v], dtype=dtype)
        np.testing.assert_allclose(
            F.silu(t).numpy(), (t * ember.sigmoid(t)).numpy(), rtol=4e-7, atol=0
        )
        np.testing.assert_allclose(
            F.silu(t).numpy(),
            torch.nn.functional.silu(torch.tensor([v], dtype=torch.float64)).numpy(),
            rtol=1e-6,
            atol=abs(v) * 1.5e-45,
        )  # sigmoid's subnormal spacing, times x
    np.testing.assert_allclose(
        F.logsigmoid(x).numpy(),
        torch.nn.functional.logsigmoid(torch.from_numpy(x.numpy())).numpy(),
        rtol=1e-6,
        atol=1e-30,
    )


def test_softmax_exp_matches_exp():
    # Softmax rows use the same exp at every vector width (4, 8 and 16 lanes and the tails);
    # results below float's normal range are 0 there (fast_exp<false>), as they always were.
    for n in [4, 17, 40]:
        row = np.zeros(n, dtype=np.float32)
        row[1] = -50.0
        row[2] = -1e9  # a masked logit
        row[3] = -100.0
        y = ember.softmax(ember.tensor(row), 0).numpy()
        e = ember.exp(ember.tensor(row)).numpy()
        np.testing.assert_allclose(y, e / e.sum(), rtol=2e-7, atol=1.2e-38)
        want = torch.softmax(torch.from_numpy(row), 0).numpy()
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1.2e-38)
        assert y[2] == 0.0 and y[1] > 0.0


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_accuracy(approximate):
    # x * Phi(x) loses the tail to 1 + erf(x / sqrt(2)) cancelling, in torch too: an absolute
    # error of about ulp(1) * |x| on top of the relative one.
    x = dense(np.float32)
    x = x[np.isfinite(x) & (np.abs(x) < 1e30)]
    got = F.gelu(ember.tensor(x), approximate=approximate).numpy().astype(np.float64)
    want = torch.nn.functional.gelu(torch.from_numpy(x).double(), approximate=approximate).numpy()
    assert (np.abs(got - want) <= 1e-6 * np.abs(want) + 1.2e-7 * np.abs(x) + 1e-44).all()
