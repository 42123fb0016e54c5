"""repr/str of tensors: ember prints exactly what PyTorch prints (including the `torch.` dtype
prefix).

Literal strings below were produced by PyTorch; the `torch` fixture tests compare many random
tensors against real PyTorch.
"""

import numpy as np
import pytest

import ember

LITERALS = [
    # (construct, expected repr)
    (lambda: ember.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: ember.tensor([[1, -20], [300, 4]]), "tensor([[  1, -20],\n        [300,   4]])"),
    (lambda: ember.tensor([1.0, 2.5, -3.25]), "tensor([ 1.0000,  2.5000, -3.2500])"),
    (lambda: ember.tensor([1.0, 2.0]), "tensor([1., 2.])"),  # all integral: no digits
    (lambda: ember.tensor([0.123456789, 1.0]), "tensor([0.1235, 1.0000])"),  # 4 digits
    (lambda: ember.tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),  # large range
    (lambda: ember.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),  # small values
    (lambda: ember.tensor([123456.0, 1.5]), "tensor([1.2346e+05, 1.5000e+00])"),
    (lambda: ember.tensor([True, False]), "tensor([ True, False])"),
    (lambda: ember.tensor(3.5), "tensor(3.5000)"),
    (lambda: ember.tensor(7), "tensor(7)"),
    (lambda: ember.tensor(True), "tensor(True)"),
    (lambda: ember.tensor([]), "tensor([])"),
    (lambda: ember.zeros(2, 0), "tensor([], size=(2, 0))"),
    # an empty int64 tensor shows its dtype (tensor([]) alone would be float)
    (lambda: ember.zeros(0, dtype=ember.int64), "tensor([], dtype=torch.int64)"),
    (lambda: ember.zeros(0, 3, dtype=ember.int32), "tensor([], size=(0, 3), dtype=torch.int32)"),
    (
        lambda: ember.arange(8.0).view(2, 2, 2),
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])",
    ),
    (
        lambda: ember.tensor([1.5, 2.0], dtype=ember.float64),
        "tensor([1.5000, 2.0000], dtype=torch.float64)",
    ),
    (lambda: ember.tensor([1, 2], dtype=ember.int32), "tensor([1, 2], dtype=torch.int32)"),
    (lambda: ember.tensor([1.5], dtype=ember.float16), "tensor([1.5000], dtype=torch.float16)"),
    (lambda: ember.tensor([1.5], dtype=ember.bfloat16), "tensor([1.5000], dtype=torch.bfloat16)"),
    (lambda: ember.tensor([1], dtype=ember.uint8), "tensor([1], dtype=torch.uint8)"),
    (lambda: ember.tensor(1.5, dtype=ember.float64), "tensor(1.5000, dtype=torch.float64)"),
    (lambda: ember.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (
        lambda: ember.tensor([1.0, 2.0], requires_grad=True) + 1,
        "tensor([2., 3.], grad_fn=<AddBackward0>)",
    ),
    (
        lambda: ember.tensor([1.0], dtype=ember.float64, requires_grad=True) * 2,
        "tensor([2.], dtype=torch.float64, grad_fn=<MulBackward0>)",
    ),
    (
        lambda: ember.tensor([float("inf"), float("nan"), -float("inf"), 1.5]),
        "tensor([   inf,    nan,   -inf, 1.5000])",
    ),
    (lambda: ember.tensor([-0.0, 0.0]), "tensor([-0., 0.])"),
    # > 1000 elements: 3 items at each edge and "..."
    (lambda: ember.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
]


@pytest.mark.parametrize("make,expected", LITERALS, ids=[e for _, e in LITERALS])
def test_repr_literal(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected  # str and repr are the same for tensors


def test_summarized_2d_wraps_lines():
    expected = (
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.7000e+01, 9.8000e+01,\n"
        "         9.9000e+01],\n"
        "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.9700e+02, 1.9800e+02,\n"
        "         1.9900e+02],\n"
        "        [2.0000e+02, 2.0100e+02, 2.0200e+02,  ..., 2.9700e+02, 2.9800e+02,\n"
        "         2.9900e+02],\n"
        "        ...,\n"
        "        [2.7000e+03, 2.7010e+03, 2.7020e+03,  ..., 2.7970e+03, 2.7980e+03,\n"
        "         2.7990e+03],\n"
        "        [2.8000e+03, 2.8010e+03, 2.8020e+03,  ..., 2.8970e+03, 2.8980e+03,\n"
        "         2.8990e+03],\n"
        "        [2.9000e+03, 2.9010e+03, 2.9020e+03,  ..., 2.9970e+03, 2.9980e+03,\n"
        "         2.9990e+03]])"
    )
    assert repr(ember.arange(3000.0).view(30, 100)) == expected


def test_exactly_1000_elements_not_summarized():
    assert "..." not in repr(ember.zeros(1000))
    assert "..." in repr(ember.zeros(1001))


def test_repr_of_views_and_noncontiguous():
    t = ember.arange(6).view(2, 3)
    assert repr(t.t()) == "tensor([[0, 3],\n        [1, 4],\n        [2, 5]])"
    assert repr(t[:, ::2]) == "tensor([[0, 2],\n        [3, 5]])"
    assert repr(ember.tensor([1, 2]).expand(2, 2)) == "tensor([[1, 2],\n        [1, 2]])"


def test_dtype_and_size_repr():
    assert repr(ember.float32) == "torch.float32"
    assert repr(ember.int64) == "torch.int64"
    assert repr(ember.zeros(2, 3).shape) == "torch.Size([2, 3])"
    assert repr(ember.zeros(()).shape) == "torch.Size([])"


# ----------------------------------------------------------------------------------------------
# comparison with real PyTorch on random tensors
# ----------------------------------------------------------------------------------------------

FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]


def random_case(rng):
    """A random numpy array plus a dtype name, covering the formatter's branches."""
    ndim = int(rng.integers(0, 4))
    shape = tuple(int(s) for s in rng.integers(0, 5, size=ndim))
    kind = rng.choice(["float", "int", "bool", "big"])
    if kind == "big":  # summarization (> 1000 elements)
        shape = (
            (int(rng.integers(1001, 1500)),)
            if rng.random() < 0.5
            else (int(rng.integers(33, 50)),) * 2
        )
        kind = rng.choice(["float", "int"])
    if kind == "bool":
        return rng.random(shape) < 0.5, "bool"
    if kind == "int":
        dtype = str(rng.choice(INT_DTYPES))
        info = np.iinfo(dtype)
        hi = min(int(info.max), 10 ** int(rng.integers(1, 6)))
        lo = max(int(info.min), -hi)
        return rng.integers(lo, hi, size=shape), dtype
    dtype = str(rng.choice(FLOAT_DTYPES))
    scale = 10.0 ** float(rng.integers(-6, 9))
    a = rng.standard_normal(shape) * scale
    style = rng.random()
    if style < 0.2:
        a = np.round(a)  # integral floats print without digits
    elif style < 0.3 and a.size:
        a.flat[0] = rng.choice([np.inf, -np.inf, np.nan])
    elif style < 0.4:
        a = np.abs(a)
    if dtype == "float16":
        a = np.clip(a, -6e4, 6e4)
    return a, dtype


def make_pair(torch, a, dtype):
    """The same tensor built by ember and by torch (going through float32 for bfloat16)."""
    src = a.astype(np.float32) if dtype == "bfloat16" else a.astype(dtype)
    e = ember.tensor(src).to(getattr(ember, dtype))
    t = torch.tensor(src).to(getattr(torch, dtype))
    return e, t


@pytest.mark.parametrize("seed", range(8))
def test_str_matches_torch_on_random_tensors(torch, seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        a, dtype = random_case(rng)
        e, t = make_pair(torch, a, dtype)
        assert str(e) == str(t), (a.shape, dtype)


def test_str_matches_torch_with_autograd_suffixes(torch):
    rng = np.random.default_rng(123)
    for dtype in ["float32", "float64"]:
        a = rng.standard_normal((3, 2))
        e, t = make_pair(torch, a, dtype)
        e.requires_grad_()
        t.requires_grad_()
        assert str(e) == str(t)
        assert str(e * 2) == str(t * 2)
        assert str(e.sum()) == str(t.sum())
        assert str(e[0]) == str(t[0])


def test_str_matches_torch_on_strided_views(torch):
    a = np.random.default_rng(7).standard_normal((6, 5)).astype(np.float32) * 100
    e, t = ember.tensor(a), torch.tensor(a)
    for view in (
        lambda x: x.t(),
        lambda x: x[::2, 1::3],
        lambda x: x[2],
        lambda x: x[:, :1].expand(6, 4),
    ):
        assert str(view(e)) == str(view(t))
