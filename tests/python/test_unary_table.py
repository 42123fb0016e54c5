"""The unary table (Note [Unary table] in csrc/ember/schema/unary.h): the merged families keep
their schemas, forms and dtype rules, and special.spherical_bessel_j0, added by the recipe,
agrees with torch and passes gradcheck."""

import math

import numpy as np
import pytest

import ember

OPS = {op["name"]: op for op in ember._C._op_schemas()}


@pytest.mark.parametrize(
    "name, schema, autograd",
    [
        ("exp", "exp(Tensor self) -> Tensor", True),
        ("exp_", "exp_(Tensor(a!) self) -> Tensor(a!)", True),
        ("relu", "relu(Tensor self) -> Tensor", True),
        ("bitwise_not", "bitwise_not(Tensor self) -> Tensor", False),
        ("bitwise_not_", "bitwise_not_(Tensor(a!) self) -> Tensor(a!)", False),
        ("isnan", "isnan(Tensor self) -> Tensor", False),
        ("logical_not", "logical_not(Tensor self) -> Tensor", False),
        ("lgamma", "lgamma(Tensor self) -> Tensor", True),
        ("special_i1e", "special_i1e(Tensor self) -> Tensor", True),
        ("gelu.ember", "gelu.ember(Tensor self, float p0, float p1, float p2) -> Tensor", True),
        (
            "gelu_backward.ember",
            "gelu_backward.ember(Tensor grad_output, Tensor self, float p0, float p1, float p2)"
            " -> Tensor",
            False,
        ),
        (
            "special_spherical_bessel_j0",
            "special_spherical_bessel_j0(Tensor self) -> Tensor",
            True,
        ),
    ],
)
def test_each_kind_declares_its_forms(name, schema, autograd):
    assert OPS[name]["schema"] == schema
    assert OPS[name]["has_autograd"] is autograd
    assert "CPU" in OPS[name]["kernels"]


def test_kinds_without_an_inplace_form_have_none():
    for name in ["isnan", "signbit", "lgamma", "special_i0e", "special_spherical_bessel_j0"]:
        assert name + "_" not in OPS


def test_dtype_rules_by_kind():
    i = ember.tensor([-2, 0, 3])
    assert ember.exp(i).dtype == ember.float32  # FLOAT: integers promote
    assert ember.abs(i).dtype == ember.int64  # SAME: the input's dtype
    assert ember.bitwise_not(i).tolist() == [1, -1, -4]  # INT
    assert ember.isnan(i).dtype == ember.bool  # BOOL
    assert ember.lgamma(i).dtype == ember.float32  # SPECIAL
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        ember.neg(ember.tensor([True]))


def test_docstrings_come_from_the_table():
    assert "exp(input) -> Tensor\n\nRaises e to the power of each element." in ember.exp.__doc__
    assert "True where an element is NaN." in ember.isnan.__doc__
    assert "_special_i0e(input) -> Tensor\n\nexp(-|x|)" in ember._C._special_i0e.__doc__
    assert "sin(x) / x" in ember.special.spherical_bessel_j0.__doc__


X = [-40.0, -7.5, -3.0, -1.0, -0.25, -1e-9, 0.0, 1e-9, 0.3, 1.0, math.pi, 5.0, 19.0, 1e3]


def _reference(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1.0, x))
    return np.where(np.isinf(x), 0.0, out)


def test_spherical_bessel_j0_values():
    x = X + [math.inf, -math.inf, math.nan]
    got = ember.special.spherical_bessel_j0(ember.tensor(x, dtype=ember.float64)).tolist()
    np.testing.assert_allclose(got, _reference(x), rtol=1e-15, atol=0, equal_nan=True)
    f = ember.special.spherical_bessel_j0(ember.tensor(X, dtype=ember.float32))
    assert f.dtype == ember.float32
    np.testing.assert_allclose(f.tolist(), _reference(np.float32(X)), rtol=1e-6, atol=1e-7)
    # integer inputs compute in the default dtype, as torch's
    i = ember.special.spherical_bessel_j0(ember.tensor([0, 1, 2]))
    assert i.dtype == ember.float32
    np.testing.assert_allclose(i.tolist(), _reference([0, 1, 2]), rtol=1e-6)


def test_spherical_bessel_j0_layouts():
    base = ember.tensor(np.linspace(-6, 6, 24).reshape(4, 6), dtype=ember.float64)
    for t in [base.t(), base[:, ::2], base[1], base.sum(), base[:0]]:
        got = ember.special.spherical_bessel_j0(t)
        assert got.shape == t.shape
        np.testing.assert_allclose(
            np.asarray(got.tolist()), _reference(np.asarray(t.tolist())), rtol=1e-15
        )


def test_spherical_bessel_j0_against_torch():
    torch = pytest.importorskip("torch")
    x = X + [math.inf, -math.inf, math.nan]
    for dt in ["float32", "float64"]:
        ours = ember.special.spherical_bessel_j0(ember.tensor(x, dtype=getattr(ember, dt)))
        theirs = torch.special.spherical_bessel_j0(torch.tensor(x, dtype=getattr(torch, dt)))
        assert str(ours.dtype) == str(theirs.dtype)
        rtol = 1e-6 if dt == "float32" else 1e-14
        np.testing.assert_allclose(ours.tolist(), theirs.tolist(), rtol=rtol, equal_nan=True)
    ours = ember.special.spherical_bessel_j0(ember.tensor([0, 3]))
    theirs = torch.special.spherical_bessel_j0(torch.tensor([0, 3]))
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.tolist(), theirs.tolist(), rtol=1e-6)


def test_spherical_bessel_j0_gradients():
    x = ember.tensor([-7.5, -2.0, -0.4, 0.3, 1.0, 4.2], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.special.spherical_bessel_j0, (x,))
    assert ember.autograd.gradgradcheck(ember.special.spherical_bessel_j0, (x,))
    y = ember.special.spherical_bessel_j0(x)
    assert type(y.grad_fn).__name__ == "SpecialSphericalBesselJ0Backward0"
    # the derivative (cos x - j0(x)) / x, and 0 at 0
    z = ember.tensor([0.0, 2.0], dtype=ember.float64, requires_grad=True)
    ember.special.spherical_bessel_j0(z).sum().backward()
    assert z.grad.tolist() == pytest.approx([0.0, (math.cos(2) - math.sin(2) / 2) / 2], rel=1e-14)
