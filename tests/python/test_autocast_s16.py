"""autocast(bfloat16) on CPU, session 16: ops of torch's float32 list written in Python (3-d
pools, reflection/replication pads, unpooling, fractional pooling, FFTs, stft, pinverse, polar)
run in float32, against the dtypes written here and torch's."""

import numpy as np
import pytest

import ember

RS = np.random.RandomState(0)
A = RS.randn(4, 4).astype("float32")


def _fp32_cases(T):
    F = T.nn.functional
    h = T.tensor(A).to(T.bfloat16)
    img = h.view(1, 1, 4, 4)
    vol = h.view(1, 1, 1, 4, 4)
    return {
        "max_pool3d": lambda: F.max_pool3d(vol, 1),
        "avg_pool3d": lambda: F.avg_pool3d(vol, 1),
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(vol, 1),
        "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(vol, 1),
        "reflect_pad2d": lambda: F.pad(img, (1, 1, 1, 1), mode="reflect"),
        "reflect_pad1d": lambda: F.pad(h, (1, 1), mode="reflect"),
        "replicate_pad2d": lambda: F.pad(img, (1, 1, 1, 1), mode="replicate"),
        "max_unpool2d": lambda: F.max_unpool2d(*F.max_pool2d(img, 2, return_indices=True), 2),
        "fractional_max_pool2d": lambda: F.fractional_max_pool2d(img, 2, output_size=2),
        "rfft": lambda: T.fft.rfft(h),
        "fft2": lambda: T.fft.fft2(h),
        "stft": lambda: T.stft(h.flatten(), 4, window=T.ones(4), return_complex=True),
        "pinverse": lambda: T.pinverse(h),
        "polar": lambda: T.polar(h.abs(), h),
    }


_WANT = {"rfft": "complex64", "fft2": "complex64", "stft": "complex64", "polar": "complex64"}


def _dtype_name(t):
    return repr(t.dtype).split(".")[-1]


def test_float32_list_ops_written_in_python_run_in_float32():
    with ember.autocast("cpu", dtype=ember.bfloat16):
        for name, f in _fp32_cases(ember).items():
            assert _dtype_name(f()) == _WANT.get(name, "float32"), name
    # outside autocast the bfloat16 input keeps its dtype
    img = ember.tensor(A).to(ember.bfloat16).view(1, 1, 4, 4)
    assert ember.nn.functional.pad(img, (1, 1, 1, 1), mode="replicate").dtype == ember.bfloat16
    with ember.autocast("cpu", dtype=ember.bfloat16):  # not on the list: reflect of 3-d
        vol = ember.tensor(A).to(ember.bfloat16).view(1, 1, 1, 4, 4)
        out = ember.nn.functional.pad(vol, (1, 1, 1, 1, 0, 0), mode="reflect")
        assert out.dtype == ember.bfloat16


def test_autocast_dtypes_against_torch():
    torch = pytest.importorskip("torch")
    got = {}
    for T in (torch, ember):
        with T.autocast("cpu", dtype=T.bfloat16):
            got[T.__name__] = {k: _dtype_name(f()) for k, f in _fp32_cases(T).items()}
    assert got["ember"] == got["torch"]


A3 = RS.randn(2, 4, 4).astype("float32")


def _mixed_cases(T):
    a, a3 = T.tensor(A), T.tensor(A3)
    h, h3 = a.to(T.bfloat16), a3.to(T.bfloat16)
    return {
        "mm": lambda: T.mm(h, a),
        "matmul": lambda: T.matmul(a, h),
        "bmm": lambda: T.bmm(h3, a3),
        "addmm": lambda: T.addmm(a, h, a),
        "addmm_self": lambda: T.addmm(h, a, a),
        "baddbmm": lambda: T.baddbmm(h3, a3, a3),
        "baddbmm_batch": lambda: T.baddbmm(a3, h3, a3),
        "linear": lambda: T.nn.functional.linear(h, a, a[0]),
    }


def test_matrix_products_take_mixed_operands_under_autocast():
    with ember.autocast("cpu", dtype=ember.bfloat16):
        for name, f in _mixed_cases(ember).items():
            assert f().dtype == ember.bfloat16, name
    a, h = ember.tensor(A), ember.tensor(A).to(ember.bfloat16)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        ember.mm(h, a)  # outside autocast the mismatch stands
    with ember.autocast("cpu", dtype=ember.bfloat16):
        with pytest.raises(RuntimeError, match="same dtype"):
            ember.mm(h, a.double())  # float64 is never cast


def test_mixed_matrix_products_against_torch():
    torch = pytest.importorskip("torch")
    got = {}
    for T in (torch, ember):
        with T.autocast("cpu", dtype=T.bfloat16):
            got[T.__name__] = {k: _dtype_name(f()) for k, f in _mixed_cases(T).items()}
    assert got["ember"] == got["torch"]
