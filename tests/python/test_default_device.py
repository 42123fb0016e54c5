"""The default device: ``with ember.device(...)``, set_default_device / get_default_device, as
torch's (thread-local, innermost block wins, explicit ``device=`` wins, *_like follow their
input)."""

import threading

import pytest

import ember
import ember.nn as nn


def _factories(lib):
    """One call of each factory torch's default device applies to, with its own arguments."""
    return {
        "empty": lambda: lib.empty(2, 3),
        "zeros": lambda: lib.zeros(2, 3, dtype=lib.float64),
        "ones": lambda: lib.ones((4,)),
        "full": lambda: lib.full((2, 2), 7),
        "full_bool": lambda: lib.full((2,), True),
        "rand": lambda: lib.rand(3, 2),
        "randn": lambda: lib.randn(5),
        "randint": lambda: lib.randint(10, (3,)),
        "randperm": lambda: lib.randperm(6),
        "arange": lambda: lib.arange(5),
        "arange_float": lambda: lib.arange(0, 1, 0.25),
        "linspace": lambda: lib.linspace(0, 1, 5),
        "logspace": lambda: lib.logspace(0, 1, 4),
        "eye": lambda: lib.eye(3, 4),
        "tensor": lambda: lib.tensor([[1, 2], [3, 4]]),
        "as_tensor": lambda: lib.as_tensor([1.0, 2.0]),
        "scalar_tensor": lambda: lib.scalar_tensor(3),
        "empty_strided": lambda: lib.empty_strided((2, 3), (1, 2)),
        "tril_indices": lambda: lib.tril_indices(3, 3),
        "hann_window": lambda: lib.hann_window(8),
    }


def _meta_of(t):
    return (t.device.type, tuple(t.shape), t.dtype, tuple(t.stride()))


def test_starts_on_cpu():
    assert ember.get_default_device() == ember.device("cpu")
    assert ember.zeros(2).device.type == "cpu"


@pytest.mark.parametrize("name", sorted(_factories(ember)))
def test_with_block_moves_every_factory(name):
    make = _factories(ember)[name]
    with ember.device("meta"):
        t = make()
    assert t.device.type == "meta" and t.is_meta
    assert make().device.type == "cpu"  # the block is over


@pytest.mark.parametrize("name", sorted(_factories(ember)))
def test_factories_as_torch(name):
    torch = pytest.importorskip("torch")
    with torch.device("meta"):
        want = _factories(torch)[name]()
    with ember.device("meta"):
        got = _factories(ember)[name]()
    assert _meta_of(got) == (want.device.type, tuple(want.shape), got.dtype, tuple(want.stride()))
    assert repr(got.dtype) == repr(want.dtype)


def test_nesting_and_exceptions_restore():
    with ember.device("meta"):
        assert ember.get_default_device() == ember.device("meta")
        with ember.device("cpu"):
            assert ember.get_default_device() == ember.device("cpu")
            assert not ember.empty(1).is_meta
        assert ember.empty(1).is_meta
        with pytest.raises(ValueError):
            with ember.device("cpu"):
                raise ValueError("inside")
        assert ember.get_default_device().type == "meta"
    assert ember.get_default_device() == ember.device("cpu")


def test_explicit_device_wins():
    with ember.device("meta"):
        assert ember.zeros(2, device="cpu").device.type == "cpu"
        assert ember.tensor([1.0], device="cpu").tolist() == [1.0]
    assert ember.zeros(2, device="meta").is_meta


def test_set_default_device():
    try:
        ember.set_default_device("meta")
        assert ember.get_default_device() == ember.device("meta")
        assert ember.ones(3).is_meta
        with ember.device("cpu"):
            assert not ember.ones(3).is_meta
        assert ember.ones(3).is_meta
    finally:
        ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")
    assert not ember.ones(3).is_meta
    ember.set_default_device("cpu")
    assert not ember.ones(3).is_meta
    ember.set_default_device(None)


def test_default_device_is_per_thread():
    seen = {}

    def other():
        seen["device"] = ember.get_default_device()
        seen["tensor"] = ember.zeros(2).device.type

    with ember.device("meta"):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == {"device": ember.device("cpu"), "tensor": "cpu"}


def test_like_factories_follow_their_input():
    x = ember.ones(2, 3)
    with ember.device("meta"):
        assert ember.zeros_like(x).device.type == "cpu"
        assert ember.empty_like(x).device.type == "cpu"
        assert x.new_zeros(4).device.type == "cpu"  # new_* follow self, as torch's
    m = ember.empty(2, 3, device="meta")
    assert ember.zeros_like(m).is_meta and ember.rand_like(m).is_meta
    assert m.new_ones(5).is_meta and m.new_full((2,), 1.0).is_meta
    assert ember.ones_like(m, device="cpu").tolist() == [[1.0] * 3] * 2
    assert ember.zeros_like(x, device="meta").is_meta


def test_modules_built_under_the_default_device():
    with ember.device("meta"):
        net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8), nn.Linear(8, 2))
    assert all(p.is_meta for p in net.parameters())
    assert all(b.is_meta for b in net.buffers())
    assert isinstance(net[0].weight, nn.Parameter) and net[0].weight.requires_grad


def test_module_device_argument():
    lin = nn.Linear(3, 5, device="meta")
    assert lin.weight.is_meta and lin.bias.is_meta
    conv = nn.Conv2d(3, 4, 3, device=ember.device("meta"))
    assert conv.weight.is_meta and tuple(conv.weight.shape) == (4, 3, 3, 3)
    with ember.device("meta"):
        cpu = nn.Linear(2, 2, device="cpu")
    assert not cpu.weight.is_meta


def test_modules_as_torch():
    torch = pytest.importorskip("torch")
    with torch.device("meta"):
        want = torch.nn.LSTM(4, 6, num_layers=2)
    with ember.device("meta"):
        got = nn.LSTM(4, 6, num_layers=2)
    w = {k: (tuple(v.shape), v.device.type) for k, v in want.state_dict().items()}
    g = {k: (tuple(v.shape), v.device.type) for k, v in got.state_dict().items()}
    assert g == w
