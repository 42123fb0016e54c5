"""DLPack exchange both ways, zero-copy (issue 16): ember.from_dlpack, Tensor.__dlpack__ /
__dlpack_device__ and ember.utils.dlpack, with numpy and torch; sharing is checked by writing
through one side and reading the other, lifetimes by weak references to the producer's memory."""

import ctypes
import gc
import weakref

import numpy as np
import pytest

import ember
from ember.utils import dlpack

NP_DTYPES = [
    "float32",
    "float64",
    "float16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "complex64",
    "complex128",
]


def _capsule_name(capsule):
    get = ctypes.pythonapi.PyCapsule_GetName
    get.restype, get.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get(capsule).decode()


def _sample(dtype, shape=(3, 4)):
    a = (np.arange(np.prod(shape)) % 5).reshape(shape)
    if dtype == "bool":
        return (a % 2).astype(bool)
    if dtype.startswith("complex"):
        return (a + 1j * a).astype(dtype)
    return a.astype(dtype)


def _bump(a):
    """Changes every element of a numpy array in place (whatever its dtype)."""
    if a.dtype == bool:
        np.logical_not(a, out=a)
    else:
        a += 1


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_numpy_to_ember_shares_memory(dtype):
    a = _sample(dtype)
    t = ember.from_dlpack(a)
    assert str(t.dtype) == f"torch.{dtype}" and tuple(t.shape) == a.shape
    assert t.data_ptr() == a.ctypes.data
    want = a.copy()
    _bump(a)  # written through numpy, read through ember
    assert not np.array_equal(t.numpy(), want) and np.array_equal(t.numpy(), a)


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_ember_to_numpy_shares_memory(dtype):
    t = ember.from_numpy(_sample(dtype)).clone()
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.ctypes.data == t.data_ptr()
    if dtype == "bool":
        t.logical_not_()
    else:
        t.add_(1)  # written through ember, read through numpy
    assert np.array_equal(a, t.numpy())
    assert not np.array_equal(a, _sample(dtype))


def test_strides_and_offsets_are_kept_both_ways():
    base = np.arange(48.0).reshape(6, 8)
    for a in (base.T, base[1:, 2::3], base[2], base[::2, 1:7:2].T):
        t = ember.from_dlpack(a)
        assert t.stride() == tuple(s // 8 for s in a.strides)
        assert np.array_equal(t.numpy(), a) and t.data_ptr() == a.ctypes.data
    e = ember.arange(48.0).reshape(6, 8)
    for v in (e.t(), e[1:, 2::3], e[3], e.unfold(1, 3, 2)):
        a = np.from_dlpack(v)
        assert a.strides == tuple(a.itemsize * s for s in v.stride())
        assert a.ctypes.data == v.data_ptr() and np.array_equal(a, v.numpy())
    e[3].fill_(-1.0)  # storage offsets: the views see writes into the base
    assert (np.from_dlpack(e[3]) == -1).all()


def test_zero_size_and_zero_dim():
    assert ember.from_dlpack(np.zeros((0, 3), np.float32)).shape == (0, 3)
    s = ember.from_dlpack(np.array(2.5))
    assert s.dim() == 0 and s.item() == 2.5
    assert np.from_dlpack(ember.tensor(7)).shape == ()
    assert np.from_dlpack(ember.ones(2, 0)).shape == (2, 0)


def test_from_dlpack_copy_and_device():
    a = np.arange(3.0)
    c = ember.from_dlpack(a, copy=True)
    a[0] = 9.0
    assert c.tolist() == [0.0, 1.0, 2.0]
    assert ember.from_dlpack(a, device="cpu").data_ptr() == a.ctypes.data
    with pytest.raises(BufferError, match="device"):
        ember.from_dlpack(a, device="cuda")


def test_negative_strides_are_refused():
    with pytest.raises(BufferError, match="non-negative strides"):
        ember.from_dlpack(np.arange(6.0)[::-1])


def test_read_only_numpy_arrays_are_shared_as_torch_does():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = ember.from_dlpack(a)  # versioned capsule with the read-only flag: shared, as torch's
    assert t.data_ptr() == a.ctypes.data and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    torch = pytest.importorskip("torch")
    assert torch.from_dlpack(a).data_ptr() == a.ctypes.data


def test_protocol_methods():
    t = ember.ones(2, 3)
    assert t.__dlpack_device__() == (1, 0)
    assert _capsule_name(t.__dlpack__()) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert _capsule_name(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0))) == (
        "dltensor_versioned"
    )
    copied = ember.from_dlpack(t.__dlpack__(copy=True))
    copied.add_(1)
    assert t.sum().item() == 6  # a copy: the source is untouched
    shared = ember.from_dlpack(t.__dlpack__(copy=False))
    shared.add_(1)
    assert t.sum().item() == 12
    with pytest.raises(BufferError, match="require gradient"):
        ember.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(AssertionError, match="stream should be None on cpu"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="dl_device"):
        t.__dlpack__(dl_device=(2, 0))
    assert ember.from_dlpack(ember.ones(2, requires_grad=True).detach()).tolist() == [1.0, 1.0]


def test_capsules_are_consumed_once():
    t = ember.arange(4)
    for capsule in (dlpack.to_dlpack(t), t.__dlpack__(max_version=(1, 0))):
        u = dlpack.from_dlpack(capsule)
        assert u.data_ptr() == t.data_ptr()
        assert _capsule_name(capsule).startswith("used_")
        with pytest.raises(RuntimeError, match="can be consumed only once"):
            ember.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="invalid capsule"):
        ember.from_dlpack(5)


def test_the_producers_memory_lives_as_long_as_the_consumer():
    # numpy -> ember: the array stays alive while the tensor does, and goes with it
    a = np.arange(8.0)
    ref = weakref.ref(a)
    t = ember.from_dlpack(a)
    del a
    gc.collect()
    assert ref() is not None and t.sum().item() == 28
    view = t[2:]
    del t
    gc.collect()
    assert ref() is not None and view.tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    del view
    gc.collect()
    assert ref() is None
    # ember -> numpy: the memory of the tensor (here itself over a numpy array) outlives it
    owner = np.arange(5.0)
    ref = weakref.ref(owner)
    t = ember.from_numpy(owner)
    del owner
    consumer = np.from_dlpack(t)
    del t
    gc.collect()
    assert ref() is not None and consumer.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del consumer
    gc.collect()
    assert ref() is None  # the deleter ran (once: a second run would free it twice)
    # a capsule nobody consumes frees its tensor when it goes
    owner = np.arange(3.0)
    ref = weakref.ref(owner)
    capsule = ember.from_numpy(owner).__dlpack__(max_version=(1, 0))
    del owner
    gc.collect()
    assert ref() is not None
    del capsule
    gc.collect()
    assert ref() is None


def test_many_round_trips_do_not_leak_the_source():
    owner = np.arange(16.0)
    ref = weakref.ref(owner)
    t = ember.from_numpy(owner)
    del owner
    for _ in range(50):
        t = ember.from_dlpack(np.from_dlpack(ember.from_dlpack(t.__dlpack__(max_version=(1, 0)))))
    assert t.sum().item() == 120
    del t
    gc.collect()
    assert ref() is None


def test_torch_both_ways():
    torch = pytest.importorskip("torch")
    for name in NP_DTYPES + ["bfloat16"]:
        src = torch.arange(12).reshape(3, 4).to(getattr(torch, name))
        e = ember.from_dlpack(src)
        assert str(e.dtype) == str(src.dtype) and e.data_ptr() == src.data_ptr()
        back = torch.from_dlpack(e)
        assert back.dtype == src.dtype and back.data_ptr() == src.data_ptr()
        assert torch.equal(back, src)
        # legacy capsules through the utils modules, both directions
        assert ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(src)).shape == (3, 4)
        assert torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(e)).data_ptr() == src.data_ptr()
    x = torch.zeros(4, 6)
    view = x.t()[1:, ::2]
    e = ember.from_dlpack(view)
    assert e.stride() == view.stride() and e.data_ptr() == view.data_ptr()
    e.fill_(3.0)  # through ember, seen by torch
    assert x[::2, 1:].eq(3).all() and x.sum().item() == 3.0 * e.numel()
    t = ember.arange(10.0)[2:].view(2, 4)
    tt = torch.from_dlpack(t)
    assert tt.stride() == t.stride() and tt.storage_offset() == 0 and tt.data_ptr() == t.data_ptr()
    tt.mul_(-1)  # through torch, seen by ember
    assert t.tolist() == [[-2.0, -3.0, -4.0, -5.0], [-6.0, -7.0, -8.0, -9.0]]
    bf = ember.tensor([1.5, -2.25], dtype=ember.bfloat16)
    assert torch.from_dlpack(bf).tolist() == [1.5, -2.25]
    c = ember.tensor([1 + 2j, 3 - 4j])
    assert torch.from_dlpack(c).tolist() == [1 + 2j, 3 - 4j]


def test_torch_keeps_ember_memory_alive():
    torch = pytest.importorskip("torch")
    owner = np.arange(6.0)
    ref = weakref.ref(owner)
    t = ember.from_numpy(owner)
    del owner
    tt = torch.from_dlpack(t)
    del t
    gc.collect()
    assert ref() is not None and tt.sum().item() == 15
    del tt
    gc.collect()
    assert ref() is None
    src = torch.arange(5.0)
    e = ember.from_dlpack(src)
    del src
    gc.collect()
    assert e.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
