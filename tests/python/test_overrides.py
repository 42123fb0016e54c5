"""ember.overrides.TorchFunctionMode: what reaches a mode; eager ember is untouched after."""

import threading

import pytest

import ember
from ember.overrides import TorchFunctionMode


class Recorder(TorchFunctionMode):
    def __init__(self):
        self.funcs = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.funcs.append(func)
        return func(*args, **(kwargs or {}))


def _names(funcs):
    return [getattr(f, "__name__", None) for f in funcs]


def test_functions_methods_operators_and_properties_reach_the_mode():
    x = ember.randn(3, 4)
    with Recorder() as mode:
        y = ember.relu(x) + 1
        z = ember.nn.functional.gelu(y).sum(dim=0)
        shape = z.shape
        positive = bool(z.sum() > 0)
    assert _names(mode.funcs) == [  # operators under the names torch hands to modes
        "relu",
        "add",
        "gelu",
        "sum",
        "__get__",
        "sum",
        "gt",
        "__bool__",
    ]
    assert shape == (4,)
    expected = ember.nn.functional.gelu(ember.relu(x) + 1).sum(dim=0)
    assert ember.equal(z, expected)
    assert positive == bool(expected.sum() > 0)


def test_func_is_the_original_and_calls_inside_the_handler_are_not_seen():
    seen = []

    class Doubler(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            if func is ember.Tensor.__dict__.get("__mul__", None):
                raise AssertionError("inner multiply must not reach the mode")
            out = func(*args, **(kwargs or {}))
            return out * 2 if isinstance(out, ember.Tensor) else out

    original_relu = ember.relu
    x = ember.tensor([-1.0, 2.0])
    with Doubler():
        y = ember.relu(x)
    assert seen == [original_relu]
    assert y.tolist() == [0.0, 4.0]


def test_types_lists_the_tensor_types_of_the_arguments():
    got = []

    class Types(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            got.append(types)
            return func(*args, **(kwargs or {}))

    p, ones = ember.nn.Parameter(ember.ones(2)), ember.ones(2)
    with Types():
        ember.add(p, ones)
    assert set(got[0]) == {ember.nn.Parameter, ember.Tensor}


def test_modes_nest_innermost_first():
    order = []

    class Named(TorchFunctionMode):
        def __init__(self, name):
            self.name = name

        def __torch_function__(self, func, types, args=(), kwargs=None):
            order.append(self.name)
            return func(*args, **(kwargs or {}))

    ones = ember.ones(1)
    with Named("outer"), Named("inner"):
        ember.neg(ones)
    assert order == ["inner", "outer"]  # the inner handler's own call reaches the outer mode
    assert ember.overrides._get_current_function_mode_stack() == []


def test_originals_are_restored_even_when_the_body_raises():
    relu, add, shape = ember.relu, ember.Tensor.__dict__["__add__"], ember.Tensor.__dict__["shape"]
    with pytest.raises(ValueError), Recorder():
        raise ValueError("boom")
    assert ember.relu is relu
    assert ember.Tensor.__dict__["__add__"] is add
    assert ember.Tensor.__dict__["shape"] is shape
    # the setter of a routed property still works while a mode is active
    x = ember.zeros(2)
    with Recorder():
        x.requires_grad = True
    assert x.requires_grad


def test_modes_are_per_thread():
    calls_in_thread = []

    def work():
        calls_in_thread.append(ember.relu(ember.ones(2)))

    with Recorder() as mode:
        t = threading.Thread(target=work)
        t.start()
        t.join()
    assert mode.funcs == []
    assert calls_in_thread[0].tolist() == [1.0, 1.0]


def test_exiting_out_of_order_raises():
    a, b = Recorder(), Recorder()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="innermost"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert ember.overrides._get_current_function_mode_stack() == []


def test_push_enters_a_mode():
    zeros = ember.zeros(1)
    mode = Recorder.push()
    try:
        ember.exp(zeros)
    finally:
        mode.__exit__(None, None, None)
    assert _names(mode.funcs) == ["exp"]


def test_against_torch_for_the_same_program():
    torch = pytest.importorskip("torch")

    class TorchRecorder(torch.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append(func)
            return func(*args, **(kwargs or {}))

    def program(lib, x):
        return lib.nn.functional.relu(x * 2).mean()

    with TorchRecorder() as tmode:
        program(torch, torch.ones(3))
    with Recorder() as emode:
        program(ember, ember.ones(3))
    # torch names Tensor.__mul__ "mul"; the calls are the same ones in the same order
    assert [n.strip("_") for n in _names(emode.funcs)] == [f.__name__ for f in tmode.funcs]


def test_original_and_routed_map_between_wrappers_and_originals():
    relu = ember.relu
    assert ember.overrides.routed(relu) is relu  # no mode: nothing is wrapped
    with Recorder():
        wrapper = ember.relu
        assert wrapper is not relu
        assert ember.overrides.original(wrapper) is relu
        assert ember.overrides.routed(relu) is wrapper
    assert ember.overrides.original(relu) is relu
