"""Fixes found by session 17's programs (tests/python/torch_scripts): ember.return_types as
torch's C struct sequences, numpy conversion of a tensor that requires grad refused as torch
refuses it, tensors built from numpy scalars, lists of arrays and read-only arrays as torch
builds them, and dtype.to_real / to_complex."""

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
    with pytest.raises(AttributeError, match="readonly attribute"):
        del r.indices
    unknown = "^'torch.return_types.sort' object has no attribute 'foo'$"
    for touch in (lambda: r.foo, lambda: setattr(r, "foo", 1), lambda: delattr(r, "foo")):
        with pytest.raises(AttributeError, match=unknown):
            touch()
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
            with ember.no_grad():
                float(x)  # under no_grad torch does not warn (nor use up its warn-once)
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


# --- tensors out of numpy pieces ---------------------------------------------------------------


def test_numpy_scalars_in_a_sequence_keep_their_dtype():
    cases = [
        ([np.float32(1), np.float64(2)], ember.float64),
        ([np.float64(1)], ember.float64),
        ([np.int32(1)], ember.int32),
        ([np.int64(1), 2.5], ember.float32),  # a Python float brings the default dtype
        ([1, np.float32(2)], ember.float32),
        ([np.float16(1)], ember.float16),
        ([np.bool_(True), np.bool_(False)], ember.bool),
        ([[np.float64(1)], [2.0]], ember.float64),
        ([np.uint8(3)], ember.uint8),
        ([np.int8(1), np.int16(2)], ember.int16),
        ([np.complex64(1)], ember.complex64),
        # every element's type promoted together, Python numbers as int64 / the default dtype
        ([1, np.uint8(2)], ember.int64),
        ([np.float16(1), 2.0], ember.float32),
        ([1, ember.tensor(2, dtype=ember.uint8)], ember.int64),
        ([ember.tensor(1, dtype=ember.int8), 2], ember.int64),
        ([True, ember.tensor(1, dtype=ember.int8)], ember.int8),
        ([ember.tensor(1.0, dtype=ember.float16), 2.0], ember.float32),
        ([1j, np.float64(1)], ember.complex128),
        ([True, np.uint8(2)], ember.uint8),
    ]
    for data, want in cases:
        assert ember.tensor(data).dtype == want, data
    assert ember.tensor([np.bool_(True), np.bool_(False)]).tolist() == [True, False]
    assert ember.tensor([np.int8(1), np.int16(300)]).tolist() == [1, 300]


def test_a_list_of_arrays_becomes_one_tensor_with_torchs_warning():
    code = """
        import warnings, numpy as np, ember
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = ember.tensor([np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32)])
            b = ember.tensor((np.ones(2, dtype=np.int32),))
        print(a.dtype, a.tolist(), b.dtype, ember.tensor([np.ones(2), [1, 2]]).dtype, len(w))
        print(w[0].message)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    first, message = out.stdout.split("\n", 1)
    assert first == "torch.float32 [[1.0, 1.0], [0.0, 0.0]] torch.int32 torch.float64 1"
    assert message.startswith("Creating a tensor from a list of numpy.ndarrays is extremely slow.")


def test_read_only_arrays_are_shared_with_torchs_warning():
    raw = bytes(range(8))
    buf = np.frombuffer(raw, dtype=np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # given once a process: checked in the subprocess below
        t = ember.from_numpy(buf)
        assert t.tolist() == list(range(8)) and t.data_ptr() == buf.ctypes.data
        assert ember.as_tensor(buf).data_ptr() == buf.ctypes.data
        assert ember.tensor(buf).tolist() == list(range(8))
        base = np.arange(3.0)
        view = base.view()
        view.flags.writeable = False
        shared = ember.from_numpy(view)
        base[0] = 5.0
        assert shared[0].item() == 5.0
    with pytest.raises(TypeError, match=r"^expected np\.ndarray \(got list\)$"):
        ember.from_numpy([1, 2])
    code = """
        import warnings, numpy as np, ember
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ember.from_numpy(np.frombuffer(b"ab", dtype=np.uint8))
            ember.from_numpy(np.frombuffer(b"cd", dtype=np.uint8))
            ember.from_numpy(np.zeros(2))
        print(len(w), w[0].message)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("1 The given NumPy array is not writable, and PyTorch does not")


def test_dtype_to_real_and_to_complex_as_torch():
    assert (
        ember.complex64.to_real() == ember.float32 and ember.complex128.to_real() == ember.float64
    )
    assert ember.int64.to_real() == ember.int64 and ember.float16.to_real() == ember.float16
    assert ember.float32.to_complex() == ember.complex64
    assert ember.float64.to_complex() == ember.complex128
    assert ember.bfloat16.to_complex() == ember.complex64
    assert ember.complex64.to_complex() == ember.complex64
    with pytest.raises(RuntimeError, match="^Unknown Complex ScalarType for Long$"):
        ember.int64.to_complex()
    with pytest.raises(RuntimeError, match="^Unknown Complex ScalarType for Bool$"):
        ember.bool.to_complex()


def test_post_accumulate_grad_hook_must_return_none():
    a = ember.ones(2, requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(3))  # returns the grad: refused
    with pytest.raises(RuntimeError, match=r"^Tensor post accumulate grad hooks should return"):
        (a * 2).sum().backward()
    assert a.grad.tolist() == [6.0, 6.0]  # the hook ran before its result was checked, as torch's
    b = ember.ones(2, requires_grad=True)
    b.register_post_accumulate_grad_hook(lambda p: None if p.grad.mul_(3) is None else None)
    (b * 2).sum().backward()
    assert b.grad.tolist() == [6.0, 6.0]


# --- a short list holding tensors, lists, slices, None or Ellipsis indexes as a tuple -----------


def test_list_of_index_tensors_reads_as_a_tuple_with_torchs_warning():
    x = ember.arange(12.0).view(3, 4)
    r, c = ember.tensor([0, 2]), ember.tensor([1, 3])
    cases = [
        ([r, c], [1.0, 11.0]),
        ([[0, 1], [2, 2]], [2.0, 6.0]),
        ([slice(0, 2), 1], [1.0, 5.0]),
        ([Ellipsis, 1], [1.0, 5.0, 9.0]),
        ([np.array([0, 1]), np.array([1, 2])], [1.0, 6.0]),
        ([range(2), [1, 2]], [1.0, 6.0]),
    ]
    for index, want in cases:
        with pytest.warns(UserWarning, match="^Using a non-tuple sequence for multidimensional"):
            assert x[index].tolist() == want, index
    with pytest.warns(UserWarning):
        assert x[[0, None]].shape == (1, 4)
    y = x.clone()
    with pytest.warns(UserWarning):
        y[[r, c]] = -1.0
    assert y[0, 1].item() == -1.0 and y[2, 3].item() == -1.0 and y.sum().item() == 66 - 12 - 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # plain lists and masks are tensor indices, unwarned
        assert x[[0, 2]].shape == (2, 4) and x[[True, False, True]].shape == (2, 4)
        assert x[[[0, 1]] * 40].shape == (40, 2, 4)  # 32 items or more: one index tensor
