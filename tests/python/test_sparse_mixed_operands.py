"""A dense left operand (plain Tensor, nn.Parameter, a user subclass) with a sparse right operand:
every operator and method gives torch's result or raises, never computes on the values array."""

import numpy as np
import pytest

import ember
from ember import nn


class MyTensor(ember.Tensor):
    pass


I = [[0, 1, 2, 2], [1, 2, 0, 2]]
V = [1.5, -2.0, 3.0, 0.5]
D = np.arange(9, dtype=np.float32).reshape(3, 3) / 4 - 1


def _left(kind):
    x = ember.tensor(D)
    if kind == "param":
        return nn.Parameter(x)
    if kind == "subclass":
        return MyTensor(x)
    return x


def _sparse(layout, lib=ember):
    s = lib.sparse_coo_tensor(lib.tensor(I), lib.tensor(V), (3, 3))
    return s if layout == "coo" else s.to_sparse_csr()


def _dense_np(x):
    x = x.to_dense() if x.layout != ember.strided else x
    return x.detach().numpy()


S_DENSE = np.zeros((3, 3), np.float32)
for (r, c), v in zip(zip(*I), V):
    S_DENSE[r, c] += v
Y = np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)

# name -> (ember call, numpy reference or None where the result must be an exception)
CASES = {
    "@": (lambda a, s: a @ s, lambda: D @ S_DENSE),
    "*": (lambda a, s: a * s, lambda: D * S_DENSE),
    "+": (lambda a, s: a + s, lambda: D + S_DENSE),
    "-": (lambda a, s: a - s, lambda: D - S_DENSE),
    "mm": (lambda a, s: a.mm(s), lambda: D @ S_DENSE),
    "matmul": (lambda a, s: a.matmul(s), lambda: D @ S_DENSE),
    "add": (lambda a, s: a.add(s), lambda: D + S_DENSE),
    "add alpha": (lambda a, s: a.add(s, alpha=2), lambda: D + 2 * S_DENSE),
    "sub": (lambda a, s: a.sub(s), lambda: D - S_DENSE),
    "mul": (lambda a, s: a.mul(s), lambda: D * S_DENSE),
    "addmm(s, y)": (lambda a, s: a.addmm(s, ember.tensor(Y)), lambda: D + S_DENSE @ Y),
    "addmm(y, s)": (lambda a, s: a.addmm(ember.tensor(Y), s), lambda: D + Y @ S_DENSE),
    "mm other=": (lambda a, s: a.mm(mat2=s), lambda: D @ S_DENSE),
    "add other=": (lambda a, s: a.add(other=s), lambda: D + S_DENSE),
    "add_": (lambda a, s: a.detach().clone().add_(s), lambda: D + S_DENSE),
    "+=": (lambda a, s: _iadd(a.detach().clone(), s), lambda: D + S_DENSE),
    "/": (lambda a, s: a / s, None),
    "==": (lambda a, s: a == s, None),
    "**": (lambda a, s: a**s, None),
    "div": (lambda a, s: a.div(s), None),
    "maximum": (lambda a, s: a.maximum(s), None),
    "where": (lambda a, s: a.where(a > 0, s), None),
    "copy_": (lambda a, s: a.detach().clone().copy_(s), None),
    "addcmul (4th arg)": (lambda a, s: a.addcmul(a, s), None),
    "index x[s]": (lambda a, s: a[s], None),
}
# torch's layouts of the results that are sparse (dense * sparse)
SPARSE_RESULT = {"*", "mul"}
# where torch 2.13 itself refuses a layout (ember computes the dense-equivalent answer there)
TORCH_REFUSES = {("csr", "-"), ("csr", "sub"), ("coo", "addmm(y, s)")}


def _iadd(a, s):
    a += s
    return a


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("kind", ["tensor", "param", "subclass"])
@pytest.mark.parametrize("case", list(CASES))
def test_dense_left_sparse_right(case, kind, layout):
    call, ref = CASES[case]
    a, s = _left(kind), _sparse(layout)
    if ref is None:
        with pytest.raises(RuntimeError):  # NotImplementedError is a RuntimeError too
            call(a, s)
        return
    out = call(a, s)
    np.testing.assert_allclose(_dense_np(out), ref(), rtol=1e-5, atol=1e-6)
    if case in SPARSE_RESULT:
        assert out.layout == (ember.sparse_coo if layout == "coo" else ember.sparse_csr)
    else:
        assert out.layout == ember.strided


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(case, layout):
    torch = pytest.importorskip("torch")
    call, ref = CASES[case]
    td = torch.nn.Parameter(torch.tensor(D))
    ts = _sparse(layout, torch)

    def torch_call():
        # the same lambda, with torch's `tensor` where a case makes one
        saved = ember.tensor
        ember.tensor = torch.tensor
        try:
            return call(td, ts)
        finally:
            ember.tensor = saved

    if ref is None:
        with pytest.raises((RuntimeError, TypeError, IndexError)):
            torch_call()
        return
    if (layout, case) in TORCH_REFUSES:
        with pytest.raises(RuntimeError):
            torch_call()
        return
    expected = torch_call()
    np.testing.assert_allclose(_dense_np(call(_left("param"), _sparse(layout))), ref(), rtol=1e-5)
    exp = expected.to_dense() if expected.layout != torch.strided else expected
    np.testing.assert_allclose(exp.detach().numpy(), ref(), rtol=1e-5, atol=1e-6)


def test_dense_calls_unchanged():
    a, b = ember.tensor(D), ember.tensor(Y)
    np.testing.assert_allclose((a @ b).numpy(), D @ Y, rtol=1e-5)
    np.testing.assert_allclose(a.add(b, alpha=2).numpy(), D + 2 * Y, rtol=1e-5)
    p = nn.Parameter(ember.tensor(D))
    np.testing.assert_allclose((p * b).detach().numpy(), D * Y, rtol=1e-5)
    assert ember.Tensor.add.__name__ == "add"


def test_sparse_self_keeps_tensor_methods():
    s = _sparse("coo")
    s.requires_grad_()
    assert s.requires_grad
    with pytest.raises(RuntimeError):
        s == s  # noqa: B015 (torch raises for sparse ==)


def test_gradient_through_param_matmul_sparse():
    p = nn.Parameter(ember.tensor(D))
    (p @ _sparse("coo")).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), np.ones((3, 3)) @ S_DENSE.T, rtol=1e-5)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_package_functions(layout):
    a, s = _left("param"), _sparse(layout)
    np.testing.assert_allclose(_dense_np(ember.multiply(a, s)), D * S_DENSE, rtol=1e-5)
    np.testing.assert_allclose(_dense_np(ember.subtract(a, s)), D - S_DENSE, rtol=1e-5)
    np.testing.assert_allclose(_dense_np(ember.mm(a, s)), D @ S_DENSE, rtol=1e-5)
    for call in (
        lambda: ember.maximum(a, s),
        lambda: ember.addcmul(a, a, s),
        lambda: ember.gather(a, 0, s),
        lambda: ember.clone(s),
    ):
        with pytest.raises(RuntimeError):
            call()
    # dense calls of the guarded functions are unchanged
    np.testing.assert_allclose(
        ember.maximum(ember.tensor(D), ember.tensor(Y)).numpy(), np.maximum(D, Y)
    )


def _sparse_shape_cases(lib):
    s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), lib.tensor(V), (2, 3))
    h = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.tensor([[1.0, 2.0], [3.0, 4.0]]), (3, 2))
    wide = lib.sparse_coo_tensor(s.coalesce().indices(), s.coalesce().values(), (2, 4))
    F = lib.nn.functional
    diags = lib.arange(1.0, 10.0).reshape(3, 3)
    csr = lib.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]).to_sparse_csr()
    return {
        "cat0": lambda: lib.cat([s, s.coalesce()]),
        "cat1": lambda: lib.cat((s, wide), 1),
        "cat_dense_dim": lambda: lib.cat([h, h], 1),
        "cat_promotes": lambda: lib.cat([s, s.double()]),
        "concat": lambda: lib.concat([h, h], 0),
        "stack2": lambda: lib.stack([s, s], 2),
        "stack0": lambda: lib.stack([s, s]),
        "unsqueeze_sparse": lambda: s.unsqueeze(-1),
        "unsqueeze_fn": lambda: lib.unsqueeze(s, 1),
        "unsqueeze_dense": lambda: h.unsqueeze(2),
        "index_select0": lambda: s.index_select(0, lib.tensor([1, 1, 0])),
        "index_select_fn": lambda: lib.index_select(s, 1, lib.tensor([2])),
        "index_select_dense": lambda: h.index_select(1, lib.tensor([1, 1])),
        "zeros_coo": lambda: lib.zeros(2, 3, layout=lib.sparse_coo),
        "zeros_csr": lambda: lib.zeros((2, 3), layout=lib.sparse_csr, dtype=lib.float64),
        "empty_coo": lambda: lib.empty(2, 3, layout=lib.sparse_coo),
        "spdiags": lambda: lib.sparse.spdiags(diags, lib.tensor([0, 2, -1]), (3, 4)),
        "spdiags_csr": lambda: lib.sparse.spdiags(
            diags, lib.tensor([-2, 2, 1]), (4, 2), layout=lib.sparse_csr
        ),
        "spdiags_1d": lambda: lib.sparse.spdiags(diags[0], lib.tensor([1]), (3, 3)),
        "sampled_addmm": lambda: lib.sparse.sampled_addmm(
            csr, lib.arange(8.0).reshape(2, 4), lib.arange(12.0).reshape(4, 3), beta=0.5, alpha=2
        ),
        "smm": lambda: lib.smm(s, lib.ones(3, 2)),
        "smm_method": lambda: s.smm(lib.ones(3, 2)),
        "zeros_like": lambda: lib.zeros_like(s),
        "zeros_like_csr": lambda: lib.zeros_like(lib.tensor(D).to_sparse_csr()),
        "F_relu": lambda: F.relu(s),
        "F_tanh": lambda: F.tanh(s),
        "F_tanhshrink": lambda: F.tanhshrink(s.coalesce()),
        "F_alpha_dropout_eval": lambda: F.alpha_dropout(s),
        # errors
        "F_gelu": lambda: F.gelu(s),
        "F_sigmoid": lambda: F.sigmoid(s),
        "F_dropout": lambda: F.dropout(s),
        "F_leaky_relu": lambda: F.leaky_relu(s),
        "sigmoid": lambda: lib.sigmoid(s),
        "exp": lambda: lib.exp(s),
        "amax_like": lambda: lib.max(s),
        "var": lambda: lib.var(s),
        "unique": lambda: lib.unique(s),
        "spdiags_duplicate": lambda: lib.sparse.spdiags(diags, lib.tensor([0, 0, 1]), (3, 3)),
        "spdiags_count": lambda: lib.sparse.spdiags(diags, lib.tensor([0]), (3, 3)),
        "spdiags_strided": lambda: lib.sparse.spdiags(
            diags, lib.tensor([0, 1, 2]), (3, 3), layout=lib.strided
        ),
        "sampled_addmm_shapes": lambda: lib.sparse.sampled_addmm(
            csr, lib.ones(2, 3), lib.ones(2, 2)
        ),
        "cat_with_dense": lambda: lib.cat([s, lib.ones(2, 3)]),
        "cat_shape": lambda: lib.cat([s, wide], 0),
        "index_out_of_range": lambda: s.index_select(1, lib.tensor([3])),
        "index_float": lambda: s.index_select(1, lib.tensor([0.0])),
        "zeros_csr_1d": lambda: lib.zeros(2, layout=lib.sparse_csr),
    }


def _outcome(f, lib):
    try:
        r = f()
    except NotImplementedError:  # torch's is its dispatcher's long message
        return "NotImplementedError"
    except Exception as e:  # noqa: BLE001  (the class and message are compared)
        return type(e).__name__, str(e).split("\n")[0]
    if not isinstance(r, lib.Tensor):
        return r
    return str(r.layout), str(r.dtype), tuple(r.shape), r._nnz(), r.to_dense().tolist()


@pytest.mark.filterwarnings("ignore:Sparse")
def test_sparse_shape_ops_and_sparse_factories_match_torch():
    """cat/stack/unsqueeze/index_select on sparse tensors, zeros/empty(layout=sparse_*),
    torch.sparse.spdiags and sampled_addmm: computed on the index arrays (cat on the values
    alone was silently wrong), as torch; functions behind another guard (sigmoid, max, var)
    and nn.functional's activations take their sparse form or refuse a sparse argument
    instead of reading its values."""
    torch = pytest.importorskip("torch")
    mine, ref = _sparse_shape_cases(ember), _sparse_shape_cases(torch)
    for name in mine:
        got, want = _outcome(mine[name], ember), _outcome(ref[name], torch)
        assert got == want, (name, got, want)


def test_sparse_cat_and_index_select_gradients_reach_values():
    v = ember.tensor(V, requires_grad=True)
    a = ember.sparse_coo_tensor(ember.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), v, (2, 3))
    w = ember.arange(12.0).reshape(4, 3)
    ember.sparse.sum(ember.cat([a, a * 2]) * w).backward()
    # entry (r, c) appears at (r, c) and, doubled, at (r + 2, c)
    np.testing.assert_allclose(v.grad.numpy(), [2 + 16, 3 + 18, 5 + 22, 2 + 16])
    v.grad = None
    r = a.index_select(1, ember.tensor([2, 0, 2]))
    ember.sparse.mm(r, ember.arange(3.0)[:, None]).sum().backward()
    # column 2 lands at output columns 0 and 2 (weights 0 and 2), column 0 at column 1
    np.testing.assert_allclose(v.grad.numpy(), [2.0, 1.0, 2.0, 2.0])


def test_sampled_addmm_gradients_reach_dense_operands():
    csr = ember.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]).to_sparse_csr()
    m1 = ember.arange(8.0).reshape(2, 4).requires_grad_()
    m2 = ember.arange(12.0).reshape(4, 3).requires_grad_()
    ember.sparse.sampled_addmm(csr, m1, m2, alpha=3).values().sum().backward()
    # entries (0, 1), (1, 0), (1, 2): d/dm1[r] = 3 * sum of m2's sampled columns, and so on
    m2n = np.arange(12.0).reshape(4, 3)
    m1n = np.arange(8.0).reshape(2, 4)
    np.testing.assert_allclose(m1.grad.numpy(), 3 * np.stack([m2n[:, 1], m2n[:, 0] + m2n[:, 2]]))
    want2 = np.zeros((4, 3))
    want2[:, 1] += 3 * m1n[0]
    want2[:, 0] += 3 * m1n[1]
    want2[:, 2] += 3 * m1n[1]
    np.testing.assert_allclose(m2.grad.numpy(), want2)


def test_norm_of_uncoalesced_sparse_counts_duplicates_summed(torch):
    i = [[0, 1, 1, 0], [2, 0, 2, 2]]
    mine = ember.sparse_coo_tensor(ember.tensor(i), ember.tensor(V), (2, 3))
    ref = torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(V), (2, 3))
    for p in ("fro", 1, 3):
        np.testing.assert_allclose(ember.norm(mine, p).item(), torch.norm(ref, p).item(), rtol=1e-6)
    np.testing.assert_allclose(mine.norm().item(), ref.norm().item(), rtol=1e-6)
