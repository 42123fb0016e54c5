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
    assert p.pin_memory().data.dtype == ember.float64


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
