"""Tensor basics, continued: in-place ops and version counters, the Python protocol.

Every expectation here is what PyTorch does; ember must behave identically.
"""

import operator

import numpy as np
import pytest

import ember

# ----------------------------------------------------------------------------------------------
# in-place ops and versions
# ----------------------------------------------------------------------------------------------


def test_inplace_ops_return_self_and_bump_version():
    t = ember.tensor([1.0, -2.0, 3.0])
    v0 = t._version
    assert t.add_(1) is t
    assert t.tolist() == [2.0, -1.0, 4.0]
    assert t.mul_(2) is t
    assert t.tolist() == [4.0, -2.0, 8.0]
    assert t.add_(ember.ones(3), alpha=2).tolist() == [6.0, 0.0, 10.0]
    assert t.clamp_(0, 7).tolist() == [6.0, 0.0, 7.0]
    assert t.clamp_(min=1).tolist() == [6.0, 1.0, 7.0]
    assert t.fill_(2.5).tolist() == [2.5] * 3
    assert t.zero_().tolist() == [0.0] * 3
    assert t._version > v0
    # every in-place op bumps the version counter by (at least) one
    v = t._version
    t.add_(1)
    assert t._version == v + 1
    t[0] = 3
    assert t._version == v + 2
    # views share the version counter with their base
    view = t[1:]
    view.mul_(2)
    assert t._version == v + 3 and view._version == t._version


def test_inplace_op_keeps_dtype():
    t = ember.tensor([1, 2, 3])
    t.mul_(2)
    assert t.dtype == ember.int64
    with pytest.raises(RuntimeError):
        t.mul_(1.5)  # result float can't be cast to int in place
    f = ember.tensor([1.0, 2.0], dtype=ember.float16)
    f.add_(ember.tensor([1.0, 1.0], dtype=ember.float64))  # downcast into self is fine
    assert f.dtype == ember.float16 and f.tolist() == [2.0, 3.0]


def test_inplace_broadcasting_rules():
    t = ember.zeros(2, 3)
    t.add_(ember.tensor([1.0, 2.0, 3.0]))
    assert t.tolist() == [[1, 2, 3], [1, 2, 3]]
    with pytest.raises(RuntimeError):
        ember.zeros(3).add_(ember.zeros(2, 3))  # result shape must equal self's


def test_copy_():
    t = ember.zeros(2, 3)
    assert t.copy_(ember.tensor([1, 2, 3])) is t  # broadcasts, converts int -> float
    assert t.dtype == ember.float32
    assert t.tolist() == [[1, 2, 3], [1, 2, 3]]
    i = ember.zeros(3, dtype=ember.int32)
    i.copy_(ember.tensor([1.9, -1.9, 2.5]))
    assert i.tolist() == [1, -1, 2]  # truncation toward zero
    b = ember.zeros(3, dtype=ember.bool)
    b.copy_(ember.tensor([0.0, 0.5, -2.0]))
    assert b.tolist() == [False, True, True]
    # copy into a non-contiguous view
    m = ember.zeros(3, 3)
    m.t()[0].copy_(ember.tensor([1.0, 2.0, 3.0]))
    assert m[:, 0].tolist() == [1, 2, 3]
    with pytest.raises(RuntimeError):
        ember.zeros(2).copy_(ember.zeros(3))


# ----------------------------------------------------------------------------------------------
# Python protocol
# ----------------------------------------------------------------------------------------------


def test_isinstance_tensor():
    t = ember.zeros(1)
    assert isinstance(t, ember.Tensor)
    assert ember.is_tensor(t) and not ember.is_tensor([1])
    assert type(t) is ember.Tensor
    assert isinstance(ember.nn.Parameter(ember.zeros(1)), ember.Tensor)


def test_item_tolist():
    assert ember.tensor(3).item() == 3 and isinstance(ember.tensor(3).item(), int)
    assert isinstance(ember.tensor(3.5).item(), float)
    assert ember.tensor(True).item() is True
    assert ember.tensor([[7]]).item() == 7  # any one-element tensor
    with pytest.raises(RuntimeError):
        ember.tensor([1, 2]).item()
    assert ember.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert ember.tensor(2.5).tolist() == 2.5
    assert ember.zeros(2, 0).tolist() == [[], []]
    assert ember.tensor([0.1], dtype=ember.float64).tolist()[0] == 0.1
    assert ember.tensor([0.1]).tolist()[0] == float(np.float32(0.1))
    assert type(ember.tensor([True]).tolist()[0]) is bool


def test_len_and_iteration():
    t = ember.arange(6).view(3, 2)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, ember.Tensor) for r in rows)
    assert rows[2].tolist() == [4, 5]
    rows[0][0] = 100  # iteration yields views
    assert t[0, 0].item() == 100
    with pytest.raises(TypeError):
        len(ember.tensor(1))
    with pytest.raises(TypeError):
        iter(ember.tensor(1))
    assert [x.item() for x in ember.tensor([1.0, 2.0])] == [1.0, 2.0]


def test_bool_int_float_index_conversions():
    assert bool(ember.tensor([1])) is True
    assert bool(ember.tensor(0.0)) is False
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(ember.tensor([1, 1]))
    with pytest.raises(RuntimeError):
        bool(ember.zeros(0))
    assert int(ember.tensor(3.9)) == 3
    assert int(ember.tensor(-3.9)) == -3
    assert float(ember.tensor([2])) == 2.0
    assert operator.index(ember.tensor(4)) == 4
    assert [10, 20, 30][ember.tensor(1)] == 20
    with pytest.raises(TypeError):
        operator.index(ember.tensor(1.0))  # only integer tensors act as indices
    with pytest.raises((TypeError, RuntimeError)):
        operator.index(ember.tensor([1, 2]))
    with pytest.raises((ValueError, RuntimeError, TypeError)):
        int(ember.tensor([1, 2]))


BINARY_OPS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
]


@pytest.mark.parametrize("op", BINARY_OPS, ids=lambda o: o.__name__)
def test_arithmetic_operators_match_numpy(op):
    a = np.array([[1.5, -2.0, 3.0], [4.0, 5.5, -6.0]], dtype=np.float64)
    b = np.array([2.0, -3.0, 0.5], dtype=np.float64)
    ta, tb = ember.tensor(a), ember.tensor(b)
    with np.errstate(invalid="ignore"):  # (-2.0) ** 0.5 is nan in both libraries
        expected = op(a, b)
    np.testing.assert_allclose(op(ta, tb).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(op(ta, 2).numpy(), op(a, 2), rtol=1e-12)
    np.testing.assert_allclose(op(2, tb).numpy(), op(2, b), rtol=1e-12)  # reflected
    np.testing.assert_allclose(op(2.5, tb).numpy(), op(2.5, b), rtol=1e-12)


def test_reflected_operators_on_ints():
    t = ember.tensor([1, 2, 3])
    assert (2 - t).tolist() == [1, 0, -1]
    assert (2**t).tolist() == [2, 4, 8] and (2**t).dtype == ember.int64
    assert (2.0**t).dtype == ember.float32
    assert (10 // t).tolist() == [10, 5, 3]
    assert (7 % t).tolist() == [0, 1, 1]
    assert (1 / t).dtype == ember.float32
    assert (6 / t).tolist() == [6.0, 3.0, 2.0]


def test_int_division_semantics():
    a = ember.tensor([7, -7, 7, -7])
    b = ember.tensor([2, 2, -2, -2])
    # floor division and Python-style modulo (sign of the divisor), like numpy
    assert (a // b).tolist() == [3, -4, -4, 3]
    assert (a % b).tolist() == [1, 1, -1, -1]
    assert ember.fmod(a, b).tolist() == [1, -1, 1, -1]
    assert ember.div(a, b, rounding_mode="trunc").tolist() == [3, -3, -3, 3]
    with pytest.raises(RuntimeError):
        ember.tensor([1]) // ember.tensor([0])  # integer division by zero


def test_comparison_operators():
    a = ember.tensor([1, 2, 3])
    assert (a < 2).tolist() == [True, False, False]
    assert (a <= 2).tolist() == [True, True, False]
    assert (a > ember.tensor([0, 2, 4])).tolist() == [True, False, False]
    assert (a >= 2).tolist() == [False, True, True]
    assert (a == 2).tolist() == [False, True, False]
    assert (a != 2).tolist() == [True, False, True]
    assert (2 < a).tolist() == [False, False, True]  # reflected


def test_bitwise_operators():
    a = ember.tensor([0b1100, 0b1010], dtype=ember.int32)
    b = ember.tensor([0b1010, 0b0110], dtype=ember.int32)
    assert (a & b).tolist() == [0b1000, 0b0010]
    assert (a | b).tolist() == [0b1110, 0b1110]
    assert (a ^ b).tolist() == [0b0110, 0b1100]
    assert (~a).tolist() == [~0b1100, ~0b1010]
    assert (a << 1).tolist() == [24, 20]
    assert (a >> 2).tolist() == [3, 2]
    assert (1 << ember.tensor([1, 2])).tolist() == [2, 4]
    assert (3 & ember.tensor([1, 2])).tolist() == [1, 2]
    m = ember.tensor([True, False])
    assert (~m).tolist() == [False, True]  # logical not on bool
    assert (m & ember.tensor([True, True])).tolist() == [True, False]
    assert (m | False).dtype == ember.bool
    assert (~ember.tensor([0], dtype=ember.uint8)).tolist() == [255]
    # no bitwise ops on floats: a kernel-dtype error (RuntimeError) for binary ops, but
    # TypeError for ~ (torch checks that one in Python)
    with pytest.raises(RuntimeError):
        ember.tensor([1.0]) & ember.tensor([1.0])
    with pytest.raises(TypeError):
        ~ember.tensor([1.0])


def test_unary_operators():
    t = ember.tensor([1.5, -2.0])
    assert (-t).tolist() == [-1.5, 2.0]
    assert (+t).tolist() == [1.5, -2.0]
    assert abs(t).tolist() == [1.5, 2.0]
    assert (-ember.tensor([1], dtype=ember.uint8)).tolist() == [255]  # wraps
    with pytest.raises(RuntimeError):
        -ember.tensor([True])  # negation of bool is refused


def test_matmul_operator():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    ta, tb, tv = ember.tensor(a), ember.tensor(b), ember.tensor(v)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b)
    np.testing.assert_allclose((ta @ tv).numpy(), a @ v)
    assert (tv @ tv).shape == ()
    assert (tv @ tv).item() == 14.0
    batched = ember.ones(5, 2, 3) @ tb
    assert batched.shape == (5, 2, 4)
    with pytest.raises(RuntimeError):
        ta @ ta


def test_augmented_assignment_is_inplace():
    t = ember.tensor([1, 2])
    alias = t
    ptr = t.data_ptr()
    t += 1
    t *= 3
    t -= ember.tensor([1, 1])
    t //= 2
    assert t is alias and t.data_ptr() == ptr
    assert t.tolist() == [2, 4]
    t |= 1
    assert t.tolist() == [3, 5]
    with pytest.raises(RuntimeError):
        t += 1.5  # float result can't be stored in an int tensor
    with pytest.raises(RuntimeError):
        t /= 2
    f = ember.tensor([1.0])
    f += 1  # ints into float tensors are fine
    f **= 2
    assert f.tolist() == [4.0]


def test_equality_and_allclose_helpers():
    a = ember.tensor([1.0, 2.0])
    assert ember.equal(a, ember.tensor([1.0, 2.0]))
    assert not ember.equal(a, ember.tensor([1.0, 2.0, 3.0]))
    assert ember.allclose(a, a + 1e-9)
    assert ember.isclose(a, ember.tensor([1.0, 2.1])).tolist() == [True, False]
    # tensors hash by identity, so they can be dict keys / set members
    assert {a: 1}[a] == 1
    assert len({a, ember.tensor([1.0, 2.0])}) == 2


def test_python_float_keeps_double_precision():
    a = ember.tensor([0.1, 1 / 3], dtype=ember.float64)
    expected = np.array([0.1, 1 / 3]) * 0.01
    assert (a * 0.01).numpy().tolist() == expected.tolist()
    assert (a * 0.01).dtype == ember.float64
    assert (ember.tensor([1, 2]) * 2.5).dtype == ember.float32  # still the default dtype


def test_numpy_style_aliases_and_clamp_forms():
    t = ember.tensor([-2.0, 0.5, 3.0])
    assert t.clip(-1, 1).tolist() == [-1.0, 0.5, 1.0]
    assert t.clamp_min(0).tolist() == [0.0, 0.5, 3.0]
    assert t.clamp_max(1).tolist() == [-2.0, 0.5, 1.0]
    assert np.allclose(ember.tensor([0.5]).arccos().numpy(), np.arccos([0.5]))
    u = t.clone()
    u.lerp_(ember.zeros(3), 0.5)
    assert u.tolist() == [-1.0, 0.25, 1.5]
    u.clip_(0, 1)
    assert u.tolist() == [0.0, 0.25, 1.0]


def test_forked_child_gets_a_working_thread_pool():
    # Without the at-fork reset, resizing the inherited pool in the child joins threads that do
    # not exist there and hangs.
    import multiprocessing as mp

    def child(queue):
        ember.set_num_threads(2)
        queue.put(float(ember.ones(1_000_000).sum()))

    ember.ones(1_000_000).sum()  # the parent's pool is running
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=child, args=(queue,))
    proc.start()
    proc.join(timeout=60)
    alive = proc.is_alive()
    if alive:
        proc.kill()
    assert not alive and proc.exitcode == 0
    assert queue.get(timeout=5) == 1_000_000.0


def test_import_leaves_numpy_unloaded_until_used():
    # numpy's import alone took more than half of `import ember` (issue 4's import-time target).
    import subprocess
    import sys

    code = (
        "import sys, ember; assert 'numpy' not in sys.modules, 'numpy imported'; "
        "t = ember.tensor([1.0, 2.0]); import numpy as np; "
        "assert ember.as_tensor(np.ones(2)).dtype == ember.float64; "
        "assert ember.tensor(np.float32(1)).dtype == ember.float32; print(t.numpy().sum())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3.0"


def test_import_restores_the_openblas_thread_timeout():
    # ember sets OPENBLAS_THREAD_TIMEOUT only while its extension (and OpenBLAS) loads: the
    # program's environment, and a user's own setting, come out as they went in.
    import os
    import subprocess
    import sys

    code = "import os, ember; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    for setting, expected in ((None, "None"), ("7", "7")):
        if setting is not None:
            env["OPENBLAS_THREAD_TIMEOUT"] = setting
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == expected


def test_numpy_scalars_act_as_python_numbers():
    t = ember.tensor([1, 2])
    f = ember.tensor([1.0, 2.0])
    assert (t + np.int64(3)).tolist() == [4, 5] and (t + np.int64(3)).dtype == ember.int64
    assert isinstance(np.float32(2) * f, ember.Tensor)  # numpy defers to the tensor's __rmul__
    assert (np.float32(2) * f).dtype == ember.float32
    h = ember.tensor([1.0], dtype=ember.float16)
    assert (h + np.float64(2)).dtype == ember.float16  # a wrapped number does not promote
    assert ember.clamp(f, np.float32(1.5)).tolist() == [1.5, 2.0]
    assert f.add(np.float32(1), alpha=np.int64(2)).tolist() == [3.0, 4.0]


def test_numpy_ufuncs_on_tensors_give_tensors():
    f = ember.tensor([0.0, 1.0])
    r = np.exp(f)
    assert isinstance(r, ember.Tensor) and r.dtype == ember.float32
    np.testing.assert_allclose(r.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
    assert np.greater(f, 0.5).dtype == ember.uint8  # torch's choice for bool results


def test_return_types_print_as_torch_and_pickle():
    import pickle

    r = ember.tensor([3, 1, 2]).sort(descending=True)
    assert repr(r) == (
        "torch.return_types.sort(\nvalues=tensor([3, 2, 1]),\nindices=tensor([0, 2, 1]))"
    )
    values, indices = pickle.loads(pickle.dumps(r))
    assert values.tolist() == [3, 2, 1] and r.indices.tolist() == [0, 2, 1]
    assert repr(ember.var_mean(ember.tensor([1.0, 2.0]))).startswith("(tensor(")


def test_numpy_axis_and_keepdims_keywords():
    """torch's builtins take numpy's spellings: axis for dim, keepdims for keepdim."""
    a = np.arange(12.0).reshape(3, 4)
    t = ember.tensor(a)
    np.testing.assert_array_equal(t.sum(axis=0).numpy(), a.sum(axis=0))
    np.testing.assert_array_equal(
        ember.mean(t, axis=1, keepdims=True).numpy(), a.mean(axis=1, keepdims=True)
    )
    assert t.max(axis=1, keepdims=True).values.shape == (3, 1)  # a Python-level function
    np.testing.assert_allclose(ember.std(t, axis=0).numpy(), a.std(axis=0, ddof=1))
    assert ember.cat([t, t], axis=1).shape == (3, 8)
    assert t.unsqueeze(axis=0).shape == (1, 3, 4)
    assert ember.argmax(t, axis=1).tolist() == [3, 3, 3]
    assert t.softmax(axis=0).shape == (3, 4)
    with pytest.raises(TypeError):
        t.sum(axes=0)  # other unknown keywords still fail as before


def test_storage_views_resize_and_set():
    t = ember.arange(10.0)
    v = t[2:5]
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    assert t.clone().untyped_storage() != t.untyped_storage()
    assert v.untyped_storage().nbytes() == 40 and len(v.storage()) == 10
    assert v.storage()[9] == 9.0 and v.storage().tolist() == list(range(10))
    x = ember.arange(6.0)
    assert x.resize_(2, 2) is x and x.tolist() == [[0, 1], [2, 3]]  # reuses the storage
    x.resize_((3, 3))
    assert x.shape == (3, 3) and x.reshape(-1)[:6].tolist() == [0, 1, 2, 3, 4, 5]
    assert ember.zeros(1).resize_as_(ember.ones(2, 2)).shape == (2, 2)
    z = ember.empty(0).set_(t, 2, (2, 2), (1, 2))
    assert z.tolist() == [[2, 4], [3, 5]] and z.data_ptr() != t.data_ptr()
    t[2] = 7  # z shares t's storage
    assert z[0, 0].item() == 7
    with pytest.raises(RuntimeError, match="require grad"):
        ember.ones(2, requires_grad=True).resize_(3)


def test_storage_classes_match_torch():
    torch = pytest.importorskip("torch")
    import warnings

    def probe(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = m.arange(4, dtype=m.float32)
            u = x.untyped_storage()
            st = x.storage()
            grown = m.UntypedStorage(4).resize_(12)
            filled = m.UntypedStorage(3).fill_(7)
            typed = m.TypedStorage([1, 2, 3], dtype=m.int64)
            return [
                isinstance(u, m.UntypedStorage),
                isinstance(st, m.TypedStorage),
                m.storage.UntypedStorage is m.UntypedStorage,
                m.is_storage(m.UntypedStorage(2)),
                m.UntypedStorage(8).nbytes(),
                len(m.UntypedStorage(5)),
                u.nbytes(),
                u.data_ptr() == x.data_ptr(),
                m.Tensor().set_(u).tolist(),
                m.tensor([], dtype=m.int32)
                .set_(m.UntypedStorage([1, 0, 0, 0, 2, 0, 0, 0]))
                .tolist(),
                grown.nbytes(),
                filled.tolist(),
                m.UntypedStorage([1, 2, 255]).tolist(),
                u.clone().data_ptr() != u.data_ptr(),
                u.element_size(),
                u.tolist()[4:8],
                u[6],
                st.dtype,
                st.tolist(),
                st.size(),
                st.nbytes(),
                st[1],
                st.element_size(),
                st.untyped().nbytes(),
                typed.tolist(),
                typed.dtype,
                m.TypedStorage(3, dtype=m.float64).nbytes(),
                repr(m.UntypedStorage([1, 2])),
                repr(m.arange(2.0).storage()),
                repr(m.UntypedStorage(0)),
                isinstance(st, m.FloatStorage),
                isinstance(st, m.DoubleStorage),
                isinstance(u, m.FloatStorage),
                type(m.LongStorage([1, 2])) is m.TypedStorage,
                m.LongStorage([1, 2]).tolist(),
                m.BoolStorage(3).dtype,
                m.FloatStorage.dtype,
            ]

    got, want = probe(ember), probe(torch)
    assert [str(v) for v in got] == [str(v) for v in want]
    with pytest.raises(RuntimeError, match="one of the items was of type str"):
        ember.UntypedStorage(["a"])
