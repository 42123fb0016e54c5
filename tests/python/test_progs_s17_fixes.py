"""Fixes found by session 17's programs (tests/python/torch_scripts): ember.return_types as
torch's C struct sequences, and numpy conversion of a tensor that requires grad refused as torch
refuses it."""

import copy
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember
from ember.utils import _pytree

# --- return_types: struct sequences, not namedtuples ----------------------------------------


def test_return_type_is_a_struct_sequence():
    r = ember.tensor([[3.0, 1.0], [2.0, 4.0]]).max(0)
    t = type(r)
    assert isinstance(r, tuple) and t.__name__ == "max" and t.__module__ == "ember.return_types"
    assert (t.n_fields, t.n_sequence_fields, t.n_unnamed_fields) == (2, 2, 0)
    assert t.__match_args__ == ("values", "indices") and not hasattr(r, "_fields")
    assert r.values is r[0] and r.indices is r[1] and len(r) == 2
    values, indices = r
    assert values.tolist() == [3.0, 4.0] and indices.tolist() == [0, 1]
    assert type(r[:1]) is tuple and type(r + (1,)) is tuple and r == tuple(r)
    want = "torch.return_types.max(\nvalues=tensor([3., 4.]),\nindices=tensor([0, 1]))"
    assert repr(r) == want and str(r) == repr(r)


def test_return_type_construction_and_refusals_as_torch():
    rt = ember.return_types
    assert tuple(rt.max((1, 2))) == (1, 2) and tuple(rt.max([1, 2], {})) == (1, 2)
    assert tuple(rt.max(iter([1, 2]))) == (1, 2) and tuple(rt.max(sequence=(1, 2))) == (1, 2)
    with pytest.raises(TypeError, match="^constructor requires a sequence$"):
        rt.max(1)
    with pytest.raises(TypeError, match=r"takes a 2-sequence \(1-sequence given\)"):
        rt.max((1,))
    with pytest.raises(TypeError, match="takes a dict as second arg, if any"):
        rt.max((1, 2), (3,))
    r = rt.sort((1, 2))
    with pytest.raises(AttributeError, match="readonly attribute"):
        r.values = 3
    with pytest.raises(TypeError, match="is not an acceptable base type"):
        type("S", (rt.max,), {})


def test_return_type_pickles_copies_and_flattens():
    r = ember.tensor([3, 1, 2]).topk(2)
    for back in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r), copy.copy(r)):
        assert type(back) is ember.return_types.topk and back.values.tolist() == [3, 2]
    assert r.__reduce__()[1][1] == {}
    leaves, spec = _pytree.tree_flatten(r)
    assert len(leaves) == 2 and spec.type is ember.return_types.topk
    doubled = _pytree.tree_map(lambda t: t * 2, r)
    assert type(doubled) is ember.return_types.topk and doubled.indices.tolist() == [0, 4]


def test_out_variants_and_the_linalg_ex_types():
    x = ember.tensor([[3.0, 1.0], [2.0, 4.0]])
    A = ember.tensor([[4.0, 1.0], [1.0, 3.0]])
    r = ember.max(x, 1, out=(ember.empty(0), ember.empty(0, dtype=ember.long)))
    assert type(r) is ember.return_types.max_out and r.values.tolist() == [3.0, 4.0]
    assert type(ember.linalg.lu_factor_ex(A)) is ember.return_types.linalg_lu_factor_ex
    assert ember.linalg.lu_factor_ex(A).info.item() == 0
    assert type(ember.linalg.solve_ex(A, A)) is ember.return_types.linalg_solve_ex
    assert type(ember.var_mean(x)) is tuple  # torch returns a plain tuple here
    names = {t.__name__ for t in ember.return_types.all_return_types}
    assert {"max", "max_out", "linalg_svd", "_lu_with_info"} <= names


def test_return_types_match_torch():
    torch = pytest.importorskip("torch")
    for t in ember.return_types.all_return_types:
        ref = getattr(torch.return_types, t.__name__)
        assert t.__match_args__ == ref.__match_args__ and t.n_fields == ref.n_fields
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecation, given once a process
        got = ember.lu(ember.eye(2), get_infos=True)
    assert type(got).__name__ == "_lu_with_info"
    cases = [
        lambda T, x: T.sort(x, 1),
        lambda T, x: x.kthvalue(1, 0),
        lambda T, x: T.aminmax(x, dim=0),
        lambda T, x: T.linalg.slogdet(x),
        lambda T, x: T.linalg.eigh(x @ x.mT),
        lambda T, x: T.frexp(x),
    ]
    x = [[3.0, 1.0], [2.0, 4.0]]
    for case in cases:
        mine, ref = case(ember, ember.tensor(x)), case(torch, torch.tensor(x))
        assert type(mine).__name__ == type(ref).__name__
        assert repr(mine) == repr(ref)


# --- numpy conversion of a tensor that requires grad ------------------------------------------

_NUMPY_REFUSAL = r"^Can't call numpy\(\) on Tensor that requires grad\. Use tensor\.detach\(\)"


@pytest.mark.parametrize(
    ("convert", "detached"),
    [
        (lambda t: t.numpy(), [1.0, 1.0]),
        (np.array, [1.0, 1.0]),
        (np.asarray, [1.0, 1.0]),
        (lambda t: np.array([t, t]), [[1.0, 1.0], [1.0, 1.0]]),
        (lambda t: np.asarray(t, dtype=np.float64), [1.0, 1.0]),
        (np.exp, [np.e, np.e]),  # a ufunc reads the tensor through __array__ first
    ],
)
def test_numpy_of_a_tensor_requiring_grad_is_refused(convert, detached):
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=_NUMPY_REFUSAL):
        convert(x)
    np.testing.assert_allclose(np.asarray(convert(x.detach())), detached, rtol=1e-6)


def test_numpy_force_and_detached_still_convert():
    x = ember.nn.Parameter(ember.ones(2))
    assert x.numpy(force=True).tolist() == [1.0, 1.0]
    assert np.asarray(x.detach(), dtype=np.float64).dtype == np.float64
    assert x.tolist() == [1.0, 1.0]


def test_float_of_a_tensor_requiring_grad_warns_once_as_torch():
    code = """
        import warnings, ember
        x = ember.ones(1, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            float(x); float(x * 2); int(x); x.item(); float(x.detach())
        print(len(w), w[0].filename)
        print(w[0].message)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    first, message = out.stdout.split("\n", 1)
    assert first == "1 <string>"
    assert message.startswith(
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior."
        "\nConsider using tensor.detach() first."
    )
