"""ember.accelerator, ember.xpu, ember.mps and Tensor.is_xpu/is_mps answer as CPU-only torch."""

import warnings

import pytest

import ember


def _outcome(fn, *args):
    """('ok', value) or (exception type name, message) of fn(*args)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return (type(e).__name__, str(e))


ACCELERATOR_CALLS = [
    ("is_available", ()),
    ("current_accelerator", ()),
    ("current_accelerator", (True,)),
    ("device_count", ()),
    ("current_device_index", ()),
    ("current_device_idx", ()),
    ("set_device_index", (0,)),
    ("set_device_index", (None,)),
    ("current_stream", ()),
    ("synchronize", ()),
    ("empty_cache", ()),
    ("get_memory_info", ()),
    ("memory_allocated", ()),
    ("max_memory_allocated", ()),
    ("memory_reserved", ()),
    ("max_memory_reserved", ()),
    ("memory_stats", ()),
    ("reset_peak_memory_stats", ()),
    ("reset_accumulated_memory_stats", ()),
]


def test_cpu_only_answers():
    acc = ember.accelerator
    assert acc.is_available() is False and acc.current_accelerator() is None
    assert acc.device_count() == 0
    with pytest.raises(RuntimeError, match="none is available"):
        acc.current_device_index()
    with acc.device_index(None):
        pass
    with pytest.raises(RuntimeError, match="none is available"):
        with acc.device_index(0):
            pass
    with pytest.warns(FutureWarning):
        with pytest.raises(RuntimeError):
            acc.current_device_idx()
    t = ember.zeros(2)
    assert t.is_xpu is False and t.is_mps is False and t.is_cuda is False
    assert ember.xpu.is_available() is False and ember.xpu.device_count() == 0
    assert ember.mps.is_available() is False and ember.mps.device_count() == 0
    # The pattern current examples start with picks the CPU.
    dev = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert ember.ones(1, device=dev).device == ember.device("cpu")


@pytest.mark.parametrize("name,args", ACCELERATOR_CALLS, ids=lambda x: str(x))
def test_accelerator_matches_cpu_only_torch(name, args):
    torch = pytest.importorskip("torch")
    if torch.accelerator.is_available():
        pytest.skip("the reference torch sees an accelerator")
    ours = _outcome(getattr(ember.accelerator, name), *args)
    theirs = _outcome(getattr(torch.accelerator, name), *args)
    assert ours == theirs


@pytest.mark.parametrize(
    "module,name,args",
    [
        ("xpu", "is_available", ()),
        ("xpu", "device_count", ()),
        ("xpu", "is_initialized", ()),
        ("xpu", "is_bf16_supported", ()),
        ("xpu", "manual_seed", (1,)),
        ("xpu", "empty_cache", ()),
        ("xpu", "memory_allocated", ()),
        ("xpu", "current_device", ()),
        ("xpu", "synchronize", ()),
        ("mps", "is_available", ()),
        ("mps", "device_count", ()),
        ("mps", "manual_seed", (1,)),
        ("mps", "synchronize", ()),
        ("mps", "empty_cache", ()),
        ("mps", "current_allocated_memory", ()),
    ],
)
def test_xpu_and_mps_match_torch(module, name, args):
    torch = pytest.importorskip("torch")
    ours = _outcome(getattr(getattr(ember, module), name), *args)
    theirs = _outcome(getattr(getattr(torch, module), name), *args)
    assert ours == theirs


def test_tensor_queries_match_torch():
    torch = pytest.importorskip("torch")
    for attr in ("is_xpu", "is_mps", "is_cuda", "is_meta"):
        if hasattr(ember.Tensor, attr):
            assert getattr(ember.zeros(1), attr) == getattr(torch.zeros(1), attr), attr
