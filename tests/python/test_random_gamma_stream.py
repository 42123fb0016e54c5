"""The gamma family draws torch 2.13's CPU values bit for bit (Note [torch's gamma draws]):
_standard_gamma, _sample_dirichlet and the distributions built on them, in float32 and float64,
and their reparameterized gradients (Note [torch's gamma gradients]). Pinned values hold
without torch."""

import numpy as np
import pytest

import ember

DTYPES = ["float32", "float64"]
SEEDS = [0, 7, 12345]
# below 1 (boosted), 1, small, middling and large shapes; 0 and denormal-size draws
ALPHAS = [1e-3, 0.05, 0.3, 0.5, 0.999, 1.0, 1.5, 2.0, 3.7, 8.0, 9.5, 40.0, 1e3, 1e6]


def run(m, seed, fn):
    m.manual_seed(seed)
    out = fn(m)
    return [t.detach().numpy() for t in (out if isinstance(out, (list, tuple)) else [out])]


def same(torch, fn, seed=0):
    got, want = run(ember, seed, fn), run(torch, seed, fn)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def close(torch, fn, seed, rtol):
    """As same, within rtol: for values that pass through ember's own arithmetic after the
    sampler (its float sums and division gradient round differently from torch's)."""
    for g, w in zip(run(ember, seed, fn), run(torch, seed, fn)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0)


def test_pinned_values_without_torch():
    ember.manual_seed(0)
    assert ember._standard_gamma(ember.tensor([0.5, 1.0, 3.0, 40.0])).tolist() == [
        0.0007893581641837955,
        0.11898370087146759,
        2.9372358322143555,
        35.96842956542969,
    ]
    ember.manual_seed(0)
    a = ember.tensor([0.5, 1.0, 3.0, 40.0], dtype=ember.float64)
    assert ember._standard_gamma(a).tolist() == [
        0.0007893582063475732,
        0.11898370896786938,
        2.937235771971711,
        35.96843012105509,
    ]
    ember.manual_seed(0)
    d = ember._sample_dirichlet(ember.tensor([[0.5, 1.0, 3.0]], dtype=ember.float64))
    assert d.tolist() == [[0.0002582126018870477, 0.03892161103502444, 0.9608201763630886]]
    g = ember._standard_gamma_grad(
        ember.tensor([0.5, 3.0, 20.0], dtype=ember.float64),
        ember.tensor([0.3, 2.5, 21.0], dtype=ember.float64),
    )
    assert g.tolist() == [1.0098019827369256, 0.9633531096680973, 1.033152750373495]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_standard_gamma(torch, dtype, seed):
    def fn(m):
        a = m.tensor(ALPHAS, dtype=getattr(m, dtype)).repeat(50)
        return [m._standard_gamma(a), m._standard_gamma(a[::3]), m.rand(3, dtype=a.dtype)]

    same(torch, fn, seed)


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_zero_and_tiny_alpha(torch, dtype):
    same(
        torch,
        lambda m: m._standard_gamma(m.tensor([0.0, 1e-30, 1e-8, 0.0], dtype=getattr(m, dtype))),
    )


def test_standard_gamma_generator_and_shapes(torch):
    def fn(m):
        g = m.Generator().manual_seed(5)
        a = m.full((3, 4, 5), 2.5).transpose(0, 2)
        return [m._standard_gamma(a, generator=g), m._standard_gamma(m.tensor(0.7), generator=g)]

    same(torch, fn)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_sample_dirichlet(torch, dtype, seed):
    def fn(m):
        a = m.tensor([[0.1, 0.5, 2.0, 30.0], [1.0, 1.0, 1.0, 1.0], [1e-3, 5.0, 0.2, 7.0]])
        a = a.to(getattr(m, dtype)).repeat(20, 1)
        return [m._sample_dirichlet(a), m._sample_dirichlet(a[:, :2])]

    same(torch, fn, seed)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_distributions_built_on_gamma(torch, dtype, seed):
    def fn(m):
        D = m.distributions
        t = lambda v: m.tensor(v, dtype=getattr(m, dtype))  # noqa: E731
        c, r = t([0.3, 1.0, 4.0]), t([2.0, 0.5, 1.0])
        return [
            D.Gamma(c, r).sample((4,)),
            D.Gamma(c, r).rsample(),
            D.Chi2(t([0.5, 3.0, 10.0])).sample((2,)),
            D.Dirichlet(t([[0.5, 2.0, 3.0]])).sample((3,)),
            D.Beta(t([0.5, 2.0]), t([3.0, 0.7])).sample((3,)),
            D.StudentT(t([1.5, 4.0]), t([0.0, 1.0]), t([1.0, 2.0])).sample((3,)),
            D.NegativeBinomial(t([3.0, 10.0]), probs=t([0.3, 0.8])).sample((4,)),
            D.InverseGamma(c, r).sample((2,)),
        ]

    same(torch, fn, seed)


def test_beta_of_floats(torch):
    same(torch, lambda m: m.distributions.Beta(0.5, 0.5).sample((6,)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_grad(torch, dtype):
    def fn(m):
        alpha = m.tensor(ALPHAS, dtype=getattr(m, dtype)).repeat(20)
        x = m._standard_gamma(alpha)
        return [x, m._standard_gamma_grad(alpha, x)]

    same(torch, fn)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gamma_rsample_gradients(torch, dtype):
    # one draw per parameter: no broadcast reduction between the draws and the gradients
    values = [0.2, 1.0, 3.0, 12.0, 0.7, 30.0] * 6

    def fn(m):
        c = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        r = m.tensor(values[::-1], dtype=getattr(m, dtype), requires_grad=True)
        x = m.distributions.Gamma(c, r).rsample()
        x.sum().backward()
        return [x, c.grad, r.grad]

    def exact(m):
        return fn(m)[:2]  # the draws and torch's d x / d concentration

    same(torch, exact, seed=3)
    close(torch, fn, 3, rtol=1e-6 if dtype == "float32" else 1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dirichlet_grad(torch, dtype):
    def fn(m):
        a = m.tensor([[0.1, 0.5, 2.0, 30.0], [8.0, 9.0, 7.0, 0.3], [1.0, 1.0, 1.0, 1.0]])
        a = a.to(getattr(m, dtype)).repeat(30, 1)
        x = m._sample_dirichlet(a)
        return [x, m._dirichlet_grad(x, a, a.sum(-1, True).expand_as(a))]

    same(torch, fn)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dirichlet_and_beta_rsample_gradients(torch, dtype):
    rows = [[0.4, 2.0, 9.0], [7.0, 8.0, 0.6], [1.0, 1.0, 1.0], [12.0, 9.0, 20.0]] * 5

    def fn(m):
        c = m.tensor(rows, dtype=getattr(m, dtype), requires_grad=True)
        a = m.tensor([r[0] for r in rows], dtype=c.dtype, requires_grad=True)
        b = m.tensor([r[1] for r in rows], dtype=c.dtype, requires_grad=True)
        w = m.arange(1.0, 4.0, dtype=c.dtype)
        x = m.distributions.Dirichlet(c).rsample()
        (x * w).sum().backward()
        y = m.distributions.Beta(a, b).rsample()
        (y * w[1]).sum().backward()
        return [x, c.grad, y, a.grad, b.grad]

    if dtype == "float64":
        same(torch, fn, seed=11)
    close(torch, fn, 11, rtol=1e-5 if dtype == "float32" else 1e-15)


def test_bad_alpha_does_not_hang():
    out = ember._standard_gamma(ember.tensor([float("nan"), -1.0, 2.0]))
    assert out[:2].isnan().all() and out[2] > 0
