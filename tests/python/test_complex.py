"""complex64/complex128: dtypes, promotion, construction, parts as views, conjugation, printing,
numpy interop, save/load, and the elementwise, reduction and product kernels against numpy and
torch."""

import io

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(3)


def crand(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def close(e, ref, tol=1e-10):
    got = e.detach().numpy() if isinstance(e, ember.Tensor) else np.asarray(e)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def test_dtype_objects_and_predicates():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert repr(ember.complex64) == "torch.complex64"
    assert ember.complex64.is_complex and not ember.complex64.is_floating_point
    assert ember.complex128.itemsize == 16 and ember.complex64.itemsize == 8
    z = ember.zeros(3, dtype=ember.complex64)
    assert z.is_complex() and ember.is_complex(z) and not z.is_floating_point()
    assert not ember.ones(2).is_complex()


def test_promotion_as_torch():
    P = ember.promote_types
    assert P(ember.complex64, ember.float64) == ember.complex128
    assert P(ember.complex64, ember.float32) == ember.complex64
    assert P(ember.complex64, ember.int64) == ember.complex64
    assert P(ember.complex128, ember.complex64) == ember.complex128
    assert P(ember.bool, ember.complex64) == ember.complex64
    assert (ember.ones(2) + 1j).dtype == ember.complex64
    assert (ember.ones(2, dtype=ember.float64) * 1j).dtype == ember.complex128
    assert (ember.arange(3) + 2j).dtype == ember.complex64
    assert (ember.zeros(2, dtype=ember.complex64) + ember.ones(2, dtype=ember.float64)).dtype == (
        ember.complex128
    )
    assert not ember.can_cast(ember.complex64, ember.float32)
    assert ember.can_cast(ember.float32, ember.complex64)


def test_tensor_from_python_complex_and_item():
    t = ember.tensor([1 + 2j, 3.5 - 1j])
    assert t.dtype == ember.complex64
    assert t.tolist() == [1 + 2j, 3.5 - 1j]
    assert t[0].item() == 1 + 2j and isinstance(t[1].item(), complex)
    assert ember.tensor([1, 2j], dtype=ember.complex128).dtype == ember.complex128
    assert ember.tensor(1j).dim() == 0
    assert complex(ember.tensor(2 - 3j)) == 2 - 3j
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1j]).dtype == ember.complex128
        assert (ember.ones(1, dtype=ember.float32) + 1j).dtype == ember.complex64
    finally:
        ember.set_default_dtype(ember.float32)


def test_numpy_round_trip_and_copy_conversions():
    a = crand(3, 4)
    t = ember.from_numpy(a)
    assert t.dtype == ember.complex128
    close(t, a)
    a[0, 0] = 5 + 5j  # from_numpy shares memory
    assert t[0, 0].item() == 5 + 5j
    close(t.to(ember.complex64), a.astype(np.complex64), tol=1e-6)
    close(ember.arange(4).to(ember.complex64), np.arange(4).astype(np.complex64))
    back = t.numpy()
    assert back.dtype == np.complex128
    f = ember.tensor([1.5, -2.0]).to(ember.complex128)
    close(f, np.array([1.5, -2.0], dtype=np.complex128))
    close(t.t().contiguous(), a.T)
    close(t.clone(), a)


def test_complex_polar_and_parts_are_views():
    re, im = ember.tensor([1.0, -2.0]), ember.tensor([0.5, 3.0])
    z = ember.complex(re, im)
    assert z.dtype == ember.complex64
    close(z, np.array([1 + 0.5j, -2 + 3j], dtype=np.complex64))
    close(ember.polar(ember.tensor([2.0]), ember.tensor([np.pi / 2])), [2j], tol=1e-6)
    r = z.real
    r[0] = 10.0
    assert z[0].item() == 10 + 0.5j
    z.imag = ember.tensor([7.0, 8.0])
    assert z.tolist() == [10 + 7j, -2 + 8j]
    v = ember.view_as_real(z)
    assert v.shape == (2, 2) and v.dtype == ember.float32
    v[1, 0] = 4.0
    assert z[1].item() == 4 + 8j
    w = ember.view_as_complex(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert w.tolist() == [1 + 2j, 3 + 4j]
    with pytest.raises(RuntimeError):
        ember.view_as_complex(ember.ones(3))
    with pytest.raises(RuntimeError, match="non-complex"):
        ember.ones(2).imag
    assert ember.ones(2).real.tolist() == [1.0, 1.0]


def test_conj_abs_angle_sgn():
    a = crand(5)
    z = ember.from_numpy(a)
    close(z.conj(), np.conj(a))
    close(ember.conj_physical(z), np.conj(a))
    close(z.conj().resolve_conj(), np.conj(a))
    assert not z.conj().is_conj()
    close(z.abs(), np.abs(a))
    close(ember.abs(z), np.abs(a))
    close(ember.angle(z), np.angle(a))
    close(ember.sgn(z), a / np.abs(a))
    assert ember.sgn(ember.zeros(1, dtype=ember.complex64)).tolist() == [0j]
    close(ember.isreal(ember.tensor([1 + 0j, 1j])), np.array([True, False]))


UNARY = [
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "reciprocal",
    "neg",
    "square",
    "sigmoid",
    "rsqrt",
    "log10",
    "log2",
]


@pytest.mark.parametrize("name", UNARY)
def test_unary_against_numpy(name):
    a = crand(4, 3)
    ref = {
        "reciprocal": lambda x: 1 / x,
        "neg": np.negative,
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "rsqrt": lambda x: 1 / np.sqrt(x),
    }.get(name, getattr(np, name, None))
    z = ember.from_numpy(a)
    close(getattr(ember, name)(z), ref(a), tol=1e-9)
    close(getattr(z, name)(), ref(a), tol=1e-9)


def test_binary_arithmetic_and_comparisons():
    a, b = crand(3, 4), crand(4)
    x, y = ember.from_numpy(a), ember.from_numpy(b)
    close(x + y, a + b)
    close(x - y, a - b)
    close(x * y, a * b)
    close(x / y, a / b)
    close(-x, -a)
    close(x * 2, a * 2)
    close(2j * x, 2j * a)
    close(x + 1.5, a + 1.5)
    close(1 / x, 1 / a)
    close(x**2, a**2)
    close(x.pow(0.5), a**0.5)
    close(x**y, a**b, tol=1e-8)
    r = RNG.standard_normal((3, 4))
    close(x * ember.from_numpy(r), a * r)
    close(ember.from_numpy(r) - x, r - a)
    close(x == x.clone(), np.ones((3, 4), dtype=bool))
    close(x != y, a != b)
    x2 = x.clone()
    x2 += y
    close(x2, a + b)
    x2.mul_(2)
    close(x2, 2 * (a + b))


def test_reductions():
    a = crand(3, 4, 5)
    z = ember.from_numpy(a)
    close(z.sum(), a.sum())
    close(z.sum(1), a.sum(1))
    close(z.sum((0, 2), keepdim=True), a.sum((0, 2), keepdims=True))
    close(z.mean(), a.mean())
    close(z.mean(-1), a.mean(-1))
    close(ember.prod(z), a.prod())
    close(z.prod(1), a.prod(1))
    close(z.prod(2, keepdim=True), a.prod(2, keepdims=True))


def test_products():
    a, b = crand(3, 4), crand(4, 2)
    x, y = ember.from_numpy(a), ember.from_numpy(b)
    close(x @ y, a @ b)
    close(ember.mm(x, y), a @ b)
    close(ember.matmul(x, y), a @ b)
    ba, bb = crand(2, 3, 4), crand(2, 4, 5)
    close(ember.bmm(ember.from_numpy(ba), ember.from_numpy(bb)), ba @ bb)
    v = crand(4)
    close(ember.mv(x, ember.from_numpy(v)), a @ v)
    w = crand(4)
    close(ember.dot(ember.from_numpy(v), ember.from_numpy(w)), np.dot(v, w))
    close(ember.vdot(ember.from_numpy(v), ember.from_numpy(w)), np.vdot(v, w))
    r = RNG.standard_normal((4, 2))
    close(x @ ember.from_numpy(r), a @ r)
    close(ember.from_numpy(r.T) @ x.t(), r.T @ a.T)


def test_shape_ops_and_selection():
    a, b = crand(2, 3), crand(2, 3)
    x, y = ember.from_numpy(a), ember.from_numpy(b)
    close(ember.cat([x, y], 1), np.concatenate([a, b], 1))
    close(ember.cat([x, y], -1), np.concatenate([a, b], -1))
    close(ember.stack([x, y], -1), np.stack([a, b], -1))
    close(ember.flip(x, [1]), a[:, ::-1])
    close(ember.roll(x, 1, 1), np.roll(a, 1, 1))
    close(x.reshape(3, 2), a.reshape(3, 2))
    close(x.t(), a.T)
    close(x[:, 1], a[:, 1])
    close(ember.where(ember.tensor([True, False, True]), x, y), np.where([True, False, True], a, b))
    assert bool(ember.allclose(x, x.clone()))
    close(ember.isnan(x), np.isnan(a))


def test_printing_as_torch():
    t = ember.tensor([1 + 2j, -3.5 - 1j])
    assert repr(t) == "tensor([ 1.0000+2.j, -3.5000-1.j])"
    assert repr(ember.tensor([1 + 2j], dtype=ember.complex128)) == (
        "tensor([1.+2.j], dtype=torch.complex128)"
    )
    assert repr(ember.tensor(1j)) == "tensor(0.+1.j)"


def test_repr_matches_torch_repr():
    torch = pytest.importorskip("torch")
    for data in ([1 + 2j, -3.5 - 1j], [[0.25j, 1], [2 + 0j, -1e-3j]], [1e6 + 1j]):
        assert repr(ember.tensor(data)) == repr(torch.tensor(data))


def test_save_load_round_trip(tmp_path):
    z = ember.from_numpy(crand(3, 2).astype(np.complex64))
    buf = io.BytesIO()
    ember.save({"z": z}, buf)
    buf.seek(0)
    back = ember.load(buf)["z"]
    assert back.dtype == ember.complex64
    close(back, z.numpy())


def test_against_torch_values():
    torch = pytest.importorskip("torch")
    a, b = crand(3, 3), crand(3, 3)
    for fn in [
        lambda m, x, y: x * y + x / y,
        lambda m, x, y: m.exp(x) - m.log(y),
        lambda m, x, y: (x @ y).sum(0),
        lambda m, x, y: m.sqrt(x) * m.tanh(y),
        lambda m, x, y: x.abs() + m.angle(y),
        lambda m, x, y: m.sgn(x) + y.conj(),
    ]:
        e = fn(ember, ember.from_numpy(a), ember.from_numpy(b))
        t = fn(torch, torch.from_numpy(a), torch.from_numpy(b))
        close(e, t.numpy())


def _sorted(w):
    return np.sort_complex(np.round(np.asarray(w), 8))


def test_linalg_eig_and_eigvals():
    for a in (RNG.standard_normal((2, 4, 4)), crand(2, 4, 4)):
        w, V = ember.linalg.eig(ember.from_numpy(a))
        assert w.dtype == ember.complex128 and V.shape == (2, 4, 4)
        w, V = w.numpy(), V.numpy()
        np.testing.assert_allclose(a @ V, V * w[..., None, :], atol=1e-10)
        np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1.0, atol=1e-12)
        for k in range(2):
            np.testing.assert_allclose(_sorted(w[k]), _sorted(np.linalg.eigvals(a[k])), atol=1e-7)
        ev = ember.linalg.eigvals(ember.from_numpy(a)).numpy()
        np.testing.assert_allclose(ev, w, atol=1e-12)
    w32 = ember.linalg.eigvals(ember.tensor([[0.0, -1.0], [1.0, 0.0]]))
    assert w32.dtype == ember.complex64
    assert sorted(w32.tolist(), key=lambda c: c.imag) == [-1j, 1j]


def test_linalg_solve_inv_det_complex():
    a = crand(3, 3) + 3 * np.eye(3)
    b = crand(3, 2)
    A, B = ember.from_numpy(a), ember.from_numpy(b)
    close(ember.linalg.solve(A, B), np.linalg.solve(a, b))
    close(ember.linalg.solve(A, B[:, 0]), np.linalg.solve(a, b[:, 0]))
    close(ember.linalg.inv(A), np.linalg.inv(a))
    close(ember.linalg.det(A), np.linalg.det(a), tol=1e-9)
    r = RNG.standard_normal((3, 2))
    close(ember.linalg.solve(A, ember.from_numpy(r)), np.linalg.solve(a, r))
    A.requires_grad_()
    assert ember.autograd.gradcheck(lambda m: ember.linalg.solve(m, B), (A,))


def test_checkpoints_with_torch_both_ways():
    torch = pytest.importorskip("torch")
    a = crand(2, 3).astype(np.complex64)
    buf = io.BytesIO()
    torch.save({"z": torch.from_numpy(a), "w": torch.from_numpy(a.astype(np.complex128))}, buf)
    buf.seek(0)
    got = ember.load(buf)
    assert got["z"].dtype == ember.complex64 and got["w"].dtype == ember.complex128
    close(got["z"], a)
    buf = io.BytesIO()
    ember.save({"z": ember.from_numpy(a)}, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=True)["z"]
    assert back.dtype == torch.complex64
    close(back.numpy(), a)


def test_complex_guards_route_by_argument_and_keep_the_originals_identity():
    # The real-only functions and methods sit behind ember._C._complex_guard: a complex
    # argument anywhere it checks takes the complex path, a real call the original kernel.
    a, b = crand(3), crand(3)
    za, zb = ember.tensor(a), ember.tensor(b)
    x = ember.tensor([1.0, 2.0, 4.0], dtype=ember.float64)
    close(ember.exp(za), np.exp(a))
    close(za.exp(), np.exp(a))
    close(ember.Tensor.exp(za), np.exp(a))
    close(x / za, x.numpy() / a)  # complex on the right of an operator slot
    close(za / x, a / x.numpy())
    close(za / zb, a / b)
    close(ember.div(x, other=za), x.numpy() / a)  # `other` given by keyword
    close(x.pow(2j), x.numpy() ** 2j)  # a Python complex scalar
    close(ember.cat([x.to(ember.complex128), za]), np.concatenate([x.numpy(), a]))
    close(ember.cat((x, x)), np.concatenate([x.numpy(), x.numpy()]))
    close(ember.cat(tensors=[za, za]), np.concatenate([a, a]))  # the list by keyword
    close(x.exp(), np.exp(x.numpy()))
    bound = za.exp
    close(bound(), np.exp(a))
    assert ember.exp.__name__ == "exp" and ember.exp.__doc__.startswith("exp(")
    assert callable(ember.exp.__wrapped__) and ember.exp.__wrapped__ is not ember.exp
    with pytest.raises(TypeError):
        ember.exp("not a tensor")
