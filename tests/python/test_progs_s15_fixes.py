"""The ember fixes that the session-15 real programs (tests/python/torch_scripts/, listed in
test_real_programs.py) led to, each checked on its own, against torch where it is installed."""

import pytest

import ember
from ember.nn import functional as F
from ember.nn.utils.rnn import PackedSequence, pack_sequence


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the class is what is compared)
        return type(e).__name__, str(e)
    return None


# ---- full with a complex fill value (creation_overloads) ----------------------------------------


def test_full_takes_a_complex_fill_value():
    t = ember.full((2, 3), 1 + 2j)
    assert t.dtype == ember.complex64 and t.shape == (2, 3) and t.is_contiguous()
    assert t.tolist() == [[1 + 2j] * 3] * 2
    assert ember.full((2,), 1j, dtype=ember.complex128).dtype == ember.complex128
    assert ember.full((2,), 3j, requires_grad=True).requires_grad
    assert ember.full_like(ember.zeros(2, dtype=ember.complex64), 2j).tolist() == [2j, 2j]
    assert ember.zeros(1, dtype=ember.complex64).new_full((3,), -1j).tolist() == [-1j] * 3
    assert ember.full((2,), 1j, device="meta").dtype == ember.complex64
    # torch keys the dtype on the Python type: 1+0j still gives a complex tensor
    assert ember.full((1,), 1 + 0j).dtype == ember.complex64
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.full((1,), 1j).dtype == ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)


def test_full_complex_into_a_real_dtype_is_refused_as_torch():
    for fn in (
        lambda m: m.full((2,), 1j, dtype=m.float32),
        lambda m: m.full_like(m.ones(2), 1j),
        lambda m: m.ones(2, dtype=m.float64).new_full((2,), 2j),
        lambda m: m.full((2,), 1j, dtype=m.int64),
    ):
        got = _error(lambda: fn(ember))
        assert got is not None and got[0] == "RuntimeError"
        assert "cannot be converted to type" in got[1]
    assert "type float without" in _error(lambda: ember.full((1,), 1j, dtype=ember.float32))[1]


def test_full_complex_matches_torch():
    torch = pytest.importorskip("torch")
    for fn in (
        lambda m: m.full((2,), 1 + 2j),
        lambda m: m.full((2, 2), -3j, dtype=m.complex128),
        lambda m: m.full_like(m.zeros(3, dtype=m.complex64), 0.5j),
    ):
        a, b = fn(ember), fn(torch)
        assert str(a.dtype) == str(b.dtype) and a.tolist() == b.tolist()
    for fn in (
        lambda m: m.full((2,), 1j, dtype=m.float32),
        lambda m: m.full((2,), 1j, dtype=m.float64),
        lambda m: m.full((2,), 1j, dtype=m.int64),
    ):
        assert _error(lambda: fn(ember)) == _error(lambda: fn(torch))


# ---- zeros with a negative size (creation_overloads) -------------------------------------------


def test_zeros_negative_size_has_torchs_message():
    for fn in (
        lambda m: m.zeros(-1),
        lambda m: m.zeros(2, -1),
        lambda m: m.zeros((-3,), dtype=m.int64),
        lambda m: m.zeros(-1, device="meta"),
    ):
        assert _error(lambda: fn(ember)) == (
            "RuntimeError",
            "zeros: Dimension size must be non-negative.",
        )
    # the other factories keep their own wording
    assert "negative dimension" in _error(lambda: ember.ones(-1))[1]


def test_zeros_negative_size_matches_torch():
    torch = pytest.importorskip("torch")
    for fn in (lambda m: m.zeros(-1), lambda m: m.zeros(3, -2), lambda m: m.ones(2, -1)):
        assert _error(lambda: fn(ember)) == _error(lambda: fn(torch))


# ---- frombuffer shares a writable buffer (creation_overloads) ----------------------------------


def test_frombuffer_shares_a_writable_buffer():
    buf = bytearray(16)
    t = ember.frombuffer(buf, dtype=ember.int32)
    buf[4] = 7
    assert t.tolist() == [0, 7, 0, 0]
    t[0] = 3  # and writes go back to the buffer
    assert buf[0] == 3
    part = ember.frombuffer(buf, dtype=ember.int16, offset=4, count=2)
    buf[6] = 5
    assert part.tolist() == [7, 5]
    del buf  # the tensor keeps the memory alive
    assert t.tolist() == [3, 7 + (5 << 16), 0, 0]  # buf[6] is the high half of element 1
    ro = ember.frombuffer(bytes(8), dtype=ember.float32)  # read-only: a copy, still readable
    assert ro.tolist() == [0.0, 0.0]


# ---- PackedSequence dtype casts (rnn_packing_lstm) ---------------------------------------------


def test_packed_sequence_has_tensors_casts():
    p = pack_sequence(
        [ember.ones(3, 2, dtype=ember.float64), ember.ones(1, 2, dtype=ember.float64)]
    )
    for name, dtype in (
        ("float", ember.float32),
        ("half", ember.float16),
        ("long", ember.int64),
        ("int", ember.int32),
        ("short", ember.int16),
        ("char", ember.int8),
        ("byte", ember.uint8),
    ):
        q = getattr(p, name)()
        assert isinstance(q, PackedSequence) and q.data.dtype == dtype, name
        assert q.batch_sizes.dtype == ember.int64 and q.batch_sizes.tolist() == [2, 1, 1]
    assert p.double() is p and p.cpu() is p  # nothing to change: the same object, as torch's
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        p.pin_memory()  # torch's CPU build has no pinned memory and raises
    assert p.is_pinned() is False


def test_packed_sequence_casts_match_torch():
    torch = pytest.importorskip("torch")
    names = ("float", "half", "long", "int", "short", "char", "byte", "double", "cpu")
    for name in names:
        assert hasattr(torch.nn.utils.rnn.PackedSequence, name)
        assert callable(getattr(PackedSequence, name))


# ---- embedding_bag index errors (embed_sparse) -------------------------------------------------


def test_embedding_bag_bad_index_has_torchs_error():
    w = ember.ones(3, 2)
    got = _error(lambda: F.embedding_bag(ember.tensor([[1, -1]]), w))
    assert got == ("RuntimeError", "Index 1 of input takes value -1 which is not in the valid "
                   "range [0, 3)")  # fmt: skip
    got = _error(lambda: F.embedding_bag(ember.tensor([1, 5]), w, ember.tensor([0]), mode="max"))
    assert got == (
        "RuntimeError",
        "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 5",
    )
    ok = F.embedding_bag(ember.tensor([0, 2]), w, ember.tensor([0]))  # in range: unchanged
    assert ok.tolist() == [[1.0, 1.0]]


def test_embedding_bag_bad_index_matches_torch():
    torch = pytest.importorskip("torch")
    for fn in (
        lambda m: m.nn.functional.embedding_bag(m.tensor([0, 3, 1]), m.ones(3, 2), m.tensor([0])),
        lambda m: m.nn.functional.embedding_bag(m.tensor([[2, 9]]), m.ones(3, 2), mode="sum"),
        lambda m: m.nn.functional.embedding_bag(
            m.tensor([7]), m.ones(3, 2), m.tensor([0]), mode="max"
        ),
    ):
        assert _error(lambda: fn(ember)) == _error(lambda: fn(torch))


# ---- view(dtype) across element sizes, set_ on a storage, _is_view() (tensor_meta) -------------


def test_view_dtype_changes_the_last_dim_when_sizes_differ():
    a = ember.arange(12.0).view(3, 4)
    b = a.view(ember.uint8)
    assert b.shape == (3, 16) and b.stride() == (16, 1) and b.dtype == ember.uint8
    c = a.view(ember.float64)
    assert c.shape == (3, 2) and c.stride() == (2, 1)
    assert c.view(ember.float32).equal(a)  # the bytes are the same
    b[0, :4] = 0  # a view: writes reach a
    assert a[0, 0].item() == 0.0
    s = a[1:, :].view(ember.int16)  # the offset scales too
    assert s.storage_offset() == 8 and s.shape == (2, 8)
    assert ember.zeros(0).view(ember.float64).shape == (0,)
    assert ember.tensor(1.0).view(ember.int32).shape == ()


def test_view_dtype_across_sizes_matches_torch():
    torch = pytest.importorskip("torch")
    cases = (
        lambda m: m.arange(12.0).view(3, 4).view(m.uint8),
        lambda m: m.arange(12.0).view(3, 4).view(m.float64),
        lambda m: m.arange(12.0).view(3, 4)[:, 2:].view(m.float64),
        lambda m: m.arange(8, dtype=m.int16).view(2, 4).view(m.int64),
        lambda m: m.ones(2, 2).view(m.complex64),
        lambda m: m.arange(12.0).view(3, 4)[:, 1:].view(m.float64),
        lambda m: m.arange(12.0).view(3, 4)[:, 1:3].view(m.float64),
        lambda m: m.arange(12.0).view(3, 4)[:, ::2].view(m.int16),
        lambda m: m.arange(12.0).view(3, 4).t().view(m.int16),
        lambda m: m.tensor(1.0).view(m.int16),
        lambda m: m.arange(6.0).view(3, 2)[:, :1].view(m.float64),
        lambda m: m.arange(12.0).view(4, 3)[::3].view(m.float64),
    )
    for fn in cases:
        want = _error(lambda: fn(torch))
        got = _error(lambda: fn(ember))
        assert got == want
        if want is None:
            a, b = fn(ember), fn(torch)
            assert tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
            assert a.storage_offset() == b.storage_offset() and str(a.dtype) == str(b.dtype)


def test_set_on_a_storage_reads_its_bytes_as_the_tensors_dtype():
    a = ember.arange(10.0)
    b = ember.empty(0)
    b.set_(a.untyped_storage(), 2, (2, 2), (3, 1))
    assert b.tolist() == [[2.0, 3.0], [5.0, 6.0]] and b.storage_offset() == 2
    b[0, 0] = 100.0
    assert a[2].item() == 100.0
    whole = ember.empty(0).set_(a.untyped_storage())
    assert whole.shape == (10,) and whole.data_ptr() == a.data_ptr()
    assert _error(lambda: ember.empty(0, dtype=ember.int32).set_(a.storage())) == (
        "RuntimeError",
        "Expected a Storage of type int or an UntypedStorage, but got type Float for argument 1 "
        "'storage'",
    )
    as_int = ember.empty(0, dtype=ember.int32).set_(a.untyped_storage())  # bytes: any dtype
    assert as_int.shape == (10,) and as_int.dtype == ember.int32
    wide = ember.empty(0, dtype=ember.float64).set_(a.untyped_storage(), 1, (2,))
    assert wide.data_ptr() == a.data_ptr() + 8


def test_set_on_a_storage_matches_torch():
    torch = pytest.importorskip("torch")
    for fn in (
        lambda m: m.empty(0).set_(m.arange(10.0).untyped_storage(), 2, (2, 2), (3, 1)),
        lambda m: m.empty(0, dtype=m.float64).set_(m.arange(10.0).untyped_storage(), 1, (2,)),
        lambda m: m.empty(0, dtype=m.int16).set_(m.arange(4.0).untyped_storage()),
        lambda m: m.empty(0, dtype=m.int16).set_(m.zeros(4, dtype=m.float64).storage()),
        lambda m: m.empty(0, dtype=m.uint8).set_(m.zeros(4, dtype=m.bool).storage()),
    ):
        want = _error(lambda: fn(torch))
        assert _error(lambda: fn(ember)) == want
        if want is None:
            a, b = fn(ember), fn(torch)
            assert a.tolist() == b.tolist() and a.stride() == b.stride()


def test_full_complex_into_bool_is_nonzero():
    assert ember.full((2,), 1j, dtype=ember.bool).tolist() == [True, True]
    assert ember.full((1,), 0j, dtype=ember.bool).tolist() == [False]


def test_is_view_is_a_method():
    base = ember.arange(6.0)
    assert base.view(2, 3)._is_view() is True
    assert base._is_view() is False and base.view(2, 3).clone()._is_view() is False


def test_index_select_bad_index_has_torchs_error():
    m2, m3 = ember.ones(3, 2), ember.ones(3, 2, 2)
    assert _error(lambda: m2.index_select(0, ember.tensor([5]))) == (
        "IndexError",
        "index out of range in self",
    )
    assert _error(lambda: m2.index_select(1, ember.tensor([5]))) == (
        "RuntimeError",
        "INDICES element is out of DATA bounds, id=5 axis_dim=2",
    )
    assert _error(lambda: m3.index_select(2, ember.tensor([3])))[0] == "IndexError"
    assert _error(lambda: F.embedding(ember.tensor([10]), m2)) == (
        "IndexError",
        "index out of range in self",
    )


def test_index_select_bad_index_matches_torch():
    torch = pytest.importorskip("torch")
    for fn in (
        lambda m: m.ones(3, 2).index_select(0, m.tensor([5])),
        lambda m: m.ones(3, 2).index_select(1, m.tensor([5])),
        lambda m: m.ones(3, 2).index_select(-1, m.tensor([-1])),
        lambda m: m.ones(3).index_select(0, m.tensor([3])),
        lambda m: m.ones(3, 2, 2).index_select(1, m.tensor([3])),
        lambda m: m.ones(3, 2, 2).index_select(2, m.tensor([3])),
        lambda m: m.nn.functional.embedding(m.tensor([[0, 4]]), m.ones(3, 2)),
    ):
        assert _error(lambda: fn(ember)) == _error(lambda: fn(torch))


def test_view_dtype_of_a_tensor_that_requires_grad_is_outside_autograd():
    a = ember.ones(2, requires_grad=True)
    for dtype in (ember.int32, ember.float16, ember.float32, ember.float64):
        b = (
            a.view(dtype)
            if dtype != ember.float64
            else ember.ones(4, requires_grad=True).view(dtype)
        )
        assert not b.requires_grad and b.grad_fn is None


# ---- autograd wordings found by probing daily idioms -------------------------------------------


def test_detach_inplace_of_a_view_is_refused():
    for v in (ember.ones(2, requires_grad=True)[0:1], ember.ones(4).view(2, 2)):
        got = _error(lambda: v.detach_())
        assert got[0] == "RuntimeError"
        assert got[1].startswith("Can't detach views in-place. Use detach() instead.")
    y = ember.ones(2, requires_grad=True) * 2  # not a view: allowed
    assert y.detach_() is y and not y.requires_grad


def test_autograd_messages_match_torch():
    torch = pytest.importorskip("torch")
    for fn in (
        lambda m: m.ones(2, requires_grad=True).mul(2).backward(),
        lambda m: m.ones(2, dtype=m.int64, requires_grad=True),
        lambda m: m.nn.Parameter(m.ones(2, dtype=m.int64)),
        lambda m: m.tensor([1, 2], requires_grad=True),
        lambda m: m.ones(3, requires_grad=True)[1:].detach_(),
    ):
        assert _error(lambda: fn(ember)) == _error(lambda: fn(torch))


def test_warnings_have_torchs_text():
    torch = pytest.importorskip("torch")
    import warnings

    def caught(fn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn()
        # torch's C++ warnings end with where they were raised: " (Triggered internally at ...)"
        return [str(x.message).split(" (Triggered internally")[0] for x in w]

    for fn in (
        lambda m: m.tensor(m.ones(2)),
        lambda m: (m.ones(2, requires_grad=True) * 2).grad,
    ):
        assert caught(lambda: fn(ember)) == caught(lambda: fn(torch))


def test_loss_size_warning_points_at_the_callers_line():
    import warnings

    for loss in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss(ember.ones(2, 1), ember.ones(2))
        assert len(w) == 1 and "Using a target size" in str(w[0].message)
        assert w[0].filename == __file__, (loss.__name__, w[0].filename)


def test_inplace_version_error_has_torchs_wording():
    a = ember.ones(2, requires_grad=True)
    b = a.sigmoid()
    b.mul_(2)
    msg = _error(lambda: b.sum().backward())[1]
    assert "[torch.FloatTensor [2]], which is output 0 of Sigmoid, is at version 1" in msg
    assert msg.endswith("set_detect_anomaly(True, check_nan=False).")


def test_inplace_version_error_matches_torch():
    torch = pytest.importorskip("torch")

    def saved_output(m):
        a = m.ones(2, requires_grad=True)
        b = a.sigmoid()
        b.mul_(2)
        b.sum().backward()

    def saved_input(m):
        a = m.ones(2, requires_grad=True)
        x = a * 1
        y = x * x
        x.add_(1)
        y.sum().backward()

    for fn in (saved_output, saved_input):
        assert _error(lambda: fn(ember)) == _error(lambda: fn(torch))
    with torch.autograd.set_detect_anomaly(True), ember.autograd.set_detect_anomaly(True):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the recorded forward stacks
            assert _error(lambda: saved_output(ember)) == _error(lambda: saved_output(torch))
