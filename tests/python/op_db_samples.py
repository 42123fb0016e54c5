"""op_db's sample generators for ops with arguments beyond their tensors."""

from __future__ import annotations

import math

import numpy as np
from op_db_core import (  # noqa: F401
    UNARY_SHAPES,
    Sample,
    T,
    binary_samples,
    is_float,
    make,
    scalar_for,
    tensor,
)

# ----------------------------------------------------------------------------- special generators


def clamp_samples(op, dtype, rng):
    lo, hi = (-1.5, 1.5) if is_float(dtype) else (-1, 2)
    if dtype == "uint8":
        lo, hi = 1, 2
    x = lambda shape: make(shape, dtype, rng, -3, 3)  # noqa: E731
    for shape in UNARY_SHAPES:
        yield Sample((x(shape),), {"min": lo, "max": hi})
    yield Sample((x((3, 4)),), {"min": lo})
    yield Sample((x((3, 4)),), {"max": hi})
    # tensor bounds, broadcast against the input
    yield Sample(
        (x((3, 4)),),
        {"min": make((4,), dtype, rng, -2, lo), "max": make((3, 1), dtype, rng, hi, 3)},
    )
    yield Sample((x((3, 4)),), {"max": make((3, 4), dtype, rng, -3, 3)})
    if not is_float(dtype):  # float bounds promote an integer input to float32
        yield Sample((x((3, 4)),), {"min": 0.5})


def pow_samples(op, dtype, rng):
    # floats: positive bases keep results real; ints: non-negative exponents are required
    if is_float(dtype):
        return binary_samples(
            op, dtype, rng, lhs_domain=(0.5, 2.5), rhs_domain=(-2, 2), float_scalar=True
        )
    return binary_samples(op, dtype, rng, lhs_domain=(-3, 3), rhs_domain=(0, 3), float_scalar=True)


def pow_scalar_exponent_samples(op, dtype, rng):
    if is_float(dtype):
        exps, lo, hi = (2, 3, 0, 0.5, -1.5), 0.5, 2.5
    else:
        exps, lo, hi = (2, 3, 0, 2.5), -3, 3  # 2.5: integer ** float -> float32
    for e in exps:
        yield Sample((make((3, 4), dtype, rng, lo, hi), e))
    yield Sample((make((), dtype, rng, lo, hi), 2))
    yield Sample((make((0, 3), dtype, rng, lo, hi), 2))


def pow_scalar_base_samples(op, dtype, rng):
    lo, hi = (-2, 2) if is_float(dtype) else (0, 4)
    for base in (2, 3, 2.5):
        yield Sample((base, make((3, 4), dtype, rng, lo, hi)))
    yield Sample((2, make((), dtype, rng, lo, hi)))
    yield Sample((2, make((0, 3), dtype, rng, lo, hi)))


def lerp_samples(op, dtype, rng):
    m = lambda shape: make(shape, dtype, rng)  # noqa: E731
    w = lambda shape: make(shape, dtype, rng, 0, 1)  # noqa: E731
    yield Sample((m((3, 4)), m((3, 4)), 0.3))
    yield Sample((m((3, 4)), m((3, 4)), 0.7))  # torch switches formula at weight 0.5
    yield Sample((m((3, 4)), m((3, 4)), w((3, 4))))
    yield Sample((m((3, 1)), m((1, 4)), w((4,))))
    yield Sample((m(()), m(()), w(())))
    yield Sample((m((0, 4)), m((4,)), 0.5))


def addc_samples(op, dtype, rng, *, divide=False):
    value = 0.5 if is_float(dtype) else 2
    m = lambda shape, **k: make(shape, dtype, rng, **k)  # noqa: E731
    yield Sample((m((3, 4)), m((3, 4)), m((3, 4), nonzero=divide)))
    yield Sample((m((3, 4)), m((3, 4)), m((3, 4), nonzero=divide)), {"value": value})
    yield Sample((m((3, 4)), m((3, 1)), m((1, 4), nonzero=divide)), {"value": value})
    yield Sample((m(()), m(()), m((), nonzero=divide)))
    yield Sample((m((0, 4)), m((4,)), m((1, 4), nonzero=divide)))


def where_samples(op, dtype, rng):
    cond = lambda shape: make(shape, "bool", rng)  # noqa: E731
    m = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((cond((3, 4)), m((3, 4)), m((3, 4))))
    yield Sample((cond((3, 1)), m((1, 4)), m((4,))))
    yield Sample((cond(()), m((3,)), m(())))
    yield Sample((cond((0, 4)), m((4,)), m((0, 1))))
    yield Sample((cond((3, 4)), m((3, 4)), scalar_for(dtype)))
    yield Sample((cond((3, 4)), m((3, 4)), 0.5))  # float scalar promotes integer/bool to float32


def _with_nan(samples, dtype, rng):
    """minimum/maximum propagate nan (unlike fmin/fmax)."""
    yield from samples
    if is_float(dtype):
        a, b = make((3, 4), "float64", rng).values, make((3, 4), "float64", rng).values
        a[0, 0], b[1, 1] = np.nan, np.nan
        yield Sample((tensor(a, dtype), tensor(b, dtype)), grad_ok=False)


def var_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"dim": 1})
    yield Sample((x((2, 3, 4)),), {"dim": (0, 2), "keepdim": True})
    yield Sample((x((3, 4)),), {"dim": 1, "correction": 0})
    yield Sample((x((2, 3, 4)),), {"dim": -1, "unbiased": False})
    yield Sample((x((2, 3, 4)),), {"dim": (-1, 0), "correction": 2, "keepdim": True})
    yield Sample((x((3, 4)),), {"unbiased": False})
    yield Sample((x(()),), {"correction": 0})
    yield Sample((x((0, 3)),), {"dim": 1})


def norm_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    for kw in ({}, {"p": 1}, {"p": math.inf}, {"p": "fro"}, {"p": 3}):
        yield Sample((x((3, 4)),), kw)
    yield Sample((x((2, 3, 4)),), {"p": 2, "dim": 1, "keepdim": True})
    yield Sample((x((2, 3, 4)),), {"p": 1, "dim": (0, 2)})
    yield Sample((x((2, 3, 4)),), {"p": "fro", "dim": (-1, 0)})
    yield Sample((x((2, 3, 4)),), {"p": math.inf, "dim": -1})
    yield Sample((x(()),))
    yield Sample((x((0, 3)),), {"p": 2, "dim": 1})


def sort_samples(op, dtype, rng, *, argsort=False):
    x = lambda shape, **k: make(shape, dtype, rng, **k)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"dim": 0})
    yield Sample((x((2, 3, 4)),), {"dim": -1, "descending": True})
    yield Sample((x(()),))
    yield Sample((x((0, 3)),), {"dim": 1})
    # ties: stable sorts keep equal elements in input order (indices compared exactly)
    yield Sample((x((3, 6), discrete=True),), {"stable": True}, grad_ok=False)
    yield Sample(
        (x((6, 3), discrete=True),), {"dim": 0, "descending": True, "stable": True}, grad_ok=False
    )


def topk_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 5)), 2))
    yield Sample((x((3, 5)), 2), {"dim": 0})
    yield Sample((x((2, 3, 5)), 3), {"largest": False})
    yield Sample((x((3, 5)), 3), {"sorted": False})
    yield Sample((x((5,)), 5))
    yield Sample((x((3, 5)), 0))


def kthvalue_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 5)), 2))
    yield Sample((x((3, 5)), 1), {"dim": 0})
    yield Sample((x((2, 3, 5)), 5), {"dim": -1, "keepdim": True})
    yield Sample((x(()), 1))


def median_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 5)),))
    yield Sample((x((3, 4)),))  # even count: torch returns the lower middle, not the mean
    yield Sample((x((3, 4)),), {"dim": 1})
    yield Sample((x((2, 3, 5)),), {"dim": 0, "keepdim": True})
    yield Sample((x(()),))
    yield Sample((x((0, 3)),), {"dim": 1})


def mode_samples(op, dtype, rng):
    """Rows with exactly one most-frequent value, so the mode value is unambiguous."""

    def rows(n_rows, n=5):
        if dtype == "bool":  # odd length: a strict majority always exists
            return rng.random((n_rows, n)) < 0.5
        start = 0 if dtype == "uint8" else -2
        out = []
        for _ in range(n_rows):
            distinct = rng.permutation(np.arange(start, start + n - 1))
            row = np.append(distinct, distinct[rng.integers(n - 1)])
            out.append(rng.permutation(row))
        scale = 0.5 if is_float(dtype) else 1
        return np.array(out) * scale

    yield Sample((tensor(rows(3), dtype),))
    yield Sample((tensor(rows(3).T, dtype),), {"dim": 0})
    yield Sample((tensor(rows(6).reshape(2, 3, 5), dtype),), {"dim": -1, "keepdim": True})
    yield Sample((make((), dtype, rng),))
    yield Sample((make((0, 5), dtype, rng),), {"dim": 1})


def unique_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng, -2, 2, discrete=True)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"return_inverse": True})
    yield Sample((x((3, 4)),), {"return_counts": True})
    yield Sample((x((2, 3, 4)),), {"sorted": True, "return_inverse": True, "return_counts": True})
    yield Sample((x((12,)),), {"sorted": False, "return_inverse": True, "return_counts": True})
    yield Sample((x(()),), {"return_inverse": True})
    yield Sample((x((0, 3)),), {"return_counts": True})


def bincount_samples(op, dtype, rng):
    x = lambda n: make((n,), dtype, rng, 0, 6)  # noqa: E731
    yield Sample((x(10),))
    yield Sample((x(10),), {"minlength": 10})
    yield Sample((x(8),), {"weights": make((8,), "float32", rng)})
    yield Sample((x(8),), {"weights": make((8,), "float64", rng), "minlength": 3})
    yield Sample((x(0),), {"minlength": 3})


def histc_samples(op, dtype, rng):
    # half-integers never on a bin edge (nor inside rounding distance of one)
    v = rng.integers(-3, 3, size=(3, 4)) + 0.5
    v[0, 0], v[0, 1] = -2.5, 2.5
    x = tensor(v, dtype)
    yield Sample((x,), {"bins": 4})  # min == max == 0: the data's own range, [-2.5, 2.5]
    yield Sample((x,), {"bins": 4, "min": -2, "max": 2})  # +-2.5 fall outside and are dropped
    yield Sample((x,), {"bins": 3, "min": -3, "max": 3})
    yield Sample((tensor(v[0], dtype),), {"bins": 7})


def cat_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample(([x((2, 3)), x((4, 3))],))
    yield Sample(([x((2, 3)), x((2, 1)), x((2, 2))],), {"dim": -1})
    yield Sample(([x((2, 3, 4)), x((2, 2, 4))],), {"dim": 1})
    yield Sample(([x((0, 3)), x((2, 3))],), {"dim": 0})
    yield Sample(([x((5,))],))


def stack_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample(([x((3, 4)), x((3, 4)), x((3, 4))],))
    yield Sample(([x((3, 4)), x((3, 4))],), {"dim": -1})
    yield Sample(([x((3, 4)), x((3, 4))],), {"dim": 1})
    yield Sample(([x(()), x(())],))
    yield Sample(([x((0, 2)), x((0, 2))],), {"dim": 2})


def hvstack_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample(([x((3,)), x((3,))],))
    yield Sample(([x((2, 3)), x((2, 3))],))
    yield Sample(([x(()), x(())],))
    vertical = op.name == "vstack"
    yield Sample(([x((2, 3)), x((1, 3) if vertical else (2, 1))],))
    yield Sample(([x((0, 3)), x((2, 3))] if vertical else [x((2, 0)), x((2, 3))],))


def split_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((5, 4)), 2))
    yield Sample((x((3, 5)), 2), {"dim": 1})
    yield Sample((x((3, 6)), [1, 0, 5]), {"dim": -1})
    yield Sample((x((4, 3)), 4))
    yield Sample((x((2, 3, 4)), 3), {"dim": 1})


def chunk_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((6, 4)), 3))
    yield Sample((x((6, 4)), 4))  # 4 chunks of 6 rows: torch gives 3 chunks of 2
    yield Sample((x((3, 5)), 2), {"dim": -1})
    yield Sample((x((3, 4)), 5))  # more chunks than rows: one row each
    yield Sample((x((2, 3, 4)), 2), {"dim": 2})


def unbind_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)),))
    yield Sample((x((3, 4)),), {"dim": 1})
    yield Sample((x((2, 3, 4)),), {"dim": -1})
    yield Sample((x((0, 3)),), {"dim": 1})


def flip_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), (0,)))
    yield Sample((x((2, 3, 4)), (0, -1)))
    yield Sample((x((2, 3, 4)), [1]))
    yield Sample((x(()), ()))
    yield Sample((x((0, 3)), (1,)))


def roll_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), 1))  # no dims: rolls the flattened tensor
    yield Sample((x((3, 4)), -1), {"dims": 0})
    yield Sample((x((2, 3, 4)), (1, -2)), {"dims": (0, 2)})
    yield Sample((x((3, 4)), 6), {"dims": 1})  # shift larger than the dim wraps
    yield Sample((x((0, 3)), 1), {"dims": 1})


def repeat_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), 2, 1))
    yield Sample((x((3,)), 2, 2))  # more repeats than dims adds leading dims
    yield Sample((x((2, 3)), 1, 0))
    yield Sample((x(()), 3))


def tile_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 4)), (2, 1)))
    yield Sample((x((2, 3)), (2,)))  # fewer reps than dims: leading reps are 1 (unlike repeat)
    yield Sample((x((3,)), (2, 2)))
    yield Sample((x(()), (3,)))


def repeat_interleave_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((2, 3)), 2))  # no dim: flattened
    yield Sample((x((2, 3)), 2), {"dim": 1})
    yield Sample((x((3, 2)), tensor([1, 0, 2], "int64")), {"dim": 0})
    yield Sample((x((2, 2)), tensor([1, 2, 0, 1], "int64")))
    yield Sample((x(()), 3))


def meshgrid_samples(op, dtype, rng):
    x = lambda n: make((n,), dtype, rng)  # noqa: E731
    yield Sample((x(3), x(4)), {"indexing": "ij"})
    yield Sample((x(3), x(4)), {"indexing": "xy"})
    yield Sample((x(2), x(3), x(4)), {"indexing": "ij"})
    yield Sample((x(2), x(3), x(4)), {"indexing": "xy"})
    yield Sample((x(0), x(2)), {"indexing": "ij"})


def broadcast_to_samples(op, dtype, rng):
    x = lambda shape: make(shape, dtype, rng)  # noqa: E731
    yield Sample((x((3, 1)), (3, 4)))
    yield Sample((x((4,)), (2, 3, 4)))
    yield Sample((x((3, 1)), (2, -1, 4)))
    yield Sample((x(()), (2, 2)))
    yield Sample((x((1,)), (0,)))


def movedim_samples(op, dtype, rng):
    x = lambda: make((2, 3, 4), dtype, rng)  # noqa: E731
    yield Sample((x(), 0, 2))
    yield Sample((x(), -1, 0))
    yield Sample((x(), (0, 1), (2, 0)))
    yield Sample((x(), (-1, 0), (0, -1)))
    yield Sample((make((0, 3), dtype, rng), 0, 1))


def _matrices(pairs):
    def gen(op, dtype, rng):
        lo, hi = op.domain
        for shapes in pairs:
            yield Sample(tuple(make(s, dtype, rng, lo, hi) for s in shapes))

    return gen


def addmm_samples(op, dtype, rng, *, batched=False):
    lo, hi = op.domain
    m = lambda shape: make(shape, dtype, rng, lo, hi)  # noqa: E731
    b = (2,) if batched else ()
    scales = {"beta": 0.5, "alpha": 2.0} if is_float(dtype) else {"beta": 2, "alpha": 3}
    yield Sample((m(b + (3, 2)), m(b + (3, 4)), m(b + (4, 2))))
    yield Sample((m(b + (3, 2)), m(b + (3, 4)), m(b + (4, 2))), scales)
    yield Sample((m((2,)), m(b + (3, 4)), m(b + (4, 2))), scales)  # input broadcasts
    yield Sample((m(b + (0, 2)), m(b + (0, 4)), m(b + (4, 2))))
    if is_float(dtype):  # beta=0: the input is ignored, nan in it must not propagate
        nan_input = tensor(np.full(b + (3, 2), np.nan), dtype)
        yield Sample((nan_input, m(b + (3, 4)), m(b + (4, 2))), {"beta": 0}, grad_ok=False)


EINSUM_CASES = (
    ("ij,jk->ik", (3, 4), (4, 2)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
    ("ii->i", (3, 3)),
    ("ij->ji", (3, 4)),
    ("i,i->", (4,), (4,)),
    ("i,j->ij", (3,), (4,)),
    ("ij->", (3, 4)),
    ("ij->i", (3, 4)),
    ("...ij->...ji", (2, 3, 4)),
)


def _einsum_dtype(dtype, sample):
    """A single operand with summed-out subscripts ('ij->', 'ii->') is a torch.sum, which
    widens integers and bool to int64; contractions of several operands keep the dtype."""
    inputs, output = sample.args[0].split("->")
    summed = set(inputs) - set(output) - set(".,")
    return "int64" if "," not in inputs and summed and not is_float(dtype) else dtype


def einsum_samples(op, dtype, rng):
    lo, hi = op.domain
    for eq, *shapes in EINSUM_CASES:
        yield Sample((eq, *(make(s, dtype, rng, lo, hi) for s in shapes)))
