"""The ember fixes that the session-12 real programs (tests/python/torch_scripts/, listed in
test_real_programs.py) led to, each checked on its own, against torch where it is installed."""

import subprocess
import sys
import textwrap
import warnings
from collections import OrderedDict

import pytest

import ember
from ember import nn

# A Tensor subclass with its own __torch_function__ switches on subclass dispatch for the rest of
# the process, so those checks run in a fresh interpreter; the same text runs on torch too.
_SUBCLASS_SCRIPT = textwrap.dedent(
    """
    import {mod} as torch
    import torch.nn as nn

    class Logging(torch.Tensor):
        log = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            Logging.log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {{}})

    print("plain_before", torch.overrides.has_torch_function((torch.ones(1),)))
    x = torch.arange(4.0).as_subclass(Logging)
    y = (x * 2 + 1).sum()
    print("types", type(y).__name__, type(torch.ones(4) - x).__name__, type(x[0]).__name__)
    print("log", Logging.log)
    relu = torch.nn.functional.relu
    print("functional", type(relu(x)).__name__, type(torch.ones(2) + 1).__name__)
    print("value", y.item(), [t.__class__.__name__ for t in x.split(2)])
    has_tf = torch.overrides.has_torch_function
    print("has_tf", has_tf((x,)), has_tf((torch.ones(1),)))
    p = nn.Parameter(torch.ones(2))
    print("param_ops_plain", type(p * 2).__name__)

    class Tagged(torch.Tensor):
        @staticmethod
        def __new__(cls, data, tag=""):
            t = torch.Tensor._make_subclass(cls, data)
            t.tag = tag
            return t

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            out = super().__torch_function__(func, types, args, kwargs or {{}})
            if isinstance(out, Tagged) and not hasattr(out, "tag"):
                out.tag = next(a.tag for a in args if isinstance(a, Tagged))
            return out

    t = Tagged(torch.ones(3), tag="m")
    u = t * 3
    print("tagged", type(u).__name__, u.tag, u.tolist(), t.is_leaf, t.requires_grad)
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    sub = leaf.as_subclass(Logging)
    (sub ** 2).sum().backward()
    print("alias", sub.is_leaf, leaf.grad.tolist())
    """
)


def _run_subclass_script(mod, script=_SUBCLASS_SCRIPT):
    out = subprocess.run(
        [sys.executable, "-c", script.format(mod=mod)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_tensor_subclass_torch_function():
    got = _run_subclass_script("ember")
    lines = dict(line.split(" ", 1) for line in got.splitlines())
    assert lines["plain_before"] == "False"
    assert lines["types"] == "Logging Logging Logging"
    assert lines["log"].startswith("['mul', 'add', 'sum'")
    assert lines["functional"] == "Logging Tensor"
    assert lines["has_tf"] == "True False"
    assert lines["param_ops_plain"] == "Tensor"
    assert lines["tagged"] == "Tagged m [3.0, 3.0, 3.0] True False"
    assert lines["alias"] == "False [2.0, 4.0]"
    pytest.importorskip("torch")
    assert got == _run_subclass_script("torch")


HANDLED = {}


class ScalarLike:
    """The tensor-like of torch's "Extending torch" docs: not a Tensor, its own dispatch table."""

    def __init__(self, n, value):
        self.n, self.value = n, value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in HANDLED:
            return NotImplemented
        return HANDLED[func](*args, **(kwargs or {}))


def test_tensor_like_torch_function_on_rejected_calls():
    HANDLED.clear()
    HANDLED[ember.mean] = lambda s: float(s.value) / s.n
    HANDLED[ember.add] = lambda a, b: ember.add(a.value * ember.eye(a.n), b)
    d = ScalarLike(4, 2)
    assert ember.mean(d) == 0.5
    assert ember.add(d, ember.ones(4, 4)).diagonal().tolist() == [3.0] * 4
    with pytest.raises(TypeError, match="no implementation found for"):
        ember.sum(d)
    assert ember.overrides.has_torch_function((d,))
    assert not ember.overrides.has_torch_function((ember.ones(1),))


def test_default_torch_function_converts_results():
    class Sub(ember.Tensor):
        pass

    out = ember.Tensor.__torch_function__.__func__(Sub, ember.add, (Sub,), (ember.ones(2), 1))
    assert type(out) is Sub and out.tolist() == [2.0, 2.0]
    pair = ember.Tensor.__torch_function__.__func__(Sub, ember.split, (Sub,), (ember.ones(4), 2))
    assert all(type(t) is Sub for t in pair)
    assert ember.Tensor.grad.__get__ in ember.overrides.get_default_nowrap_functions()
    from ember._subclass_dispatch import _disabled_torch_function_impl

    plain = _disabled_torch_function_impl(ember.mul, (), (ember.ones(2), 3))
    assert type(plain) is ember.Tensor


def test_as_subclass_of_a_tensor_requiring_grad_is_an_alias():
    class Sub(ember.Tensor):
        pass

    leaf = ember.tensor([1.0, 3.0], requires_grad=True)
    sub = leaf.as_subclass(Sub)
    assert not sub.is_leaf and sub.requires_grad and sub.data_ptr() == leaf.data_ptr()
    (sub * sub).sum().backward()
    assert leaf.grad.tolist() == [2.0, 6.0]
    plain = ember.ones(2).as_subclass(Sub)
    assert plain.is_leaf and type(plain) is Sub


def test_subclass_with_new_taking_extra_arguments():
    class Boxed(ember.Tensor):
        def __new__(cls, data, unit="m"):
            t = ember.Tensor._make_subclass(cls, data, True)
            t.unit = unit
            return t

    b = Boxed(ember.ones(2), unit="s")
    assert type(b) is Boxed and b.unit == "s" and b.is_leaf and b.requires_grad

    class Built(ember.Tensor):
        def __new__(cls, data, unit="m"):
            return super().__new__(cls, data)  # left to Tensor's own initialization

    c = Built(ember.arange(3.0), "s")
    assert type(c) is Built and c.tolist() == [0.0, 1.0, 2.0]


def test_consume_prefix_in_state_dict_if_present():
    from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present

    wrapped = nn.Sequential()
    wrapped.add_module("module", nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
    sd = wrapped.state_dict()
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd)[:3] == ["0.weight", "0.bias", "1.weight"]
    assert "" in sd._metadata and "0" in sd._metadata and "module.0" not in sd._metadata
    assert nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).load_state_dict(sd)
    plain = OrderedDict(a=1, b=2)
    consume_prefix_in_state_dict_if_present(plain, "x.")
    assert list(plain) == ["a", "b"]


def test_out_resize_warning_points_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.mul(ember.ones(2, 2), 3, out=ember.empty(1))
    assert [w.filename for w in caught] == [__file__]
    assert "was resized" in str(caught[0].message)


_COMPLEX_OPTIMS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("Adam", {"lr": 0.1}),
    ("AdamW", {"lr": 0.1, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adadelta", {"lr": 1.0}),
    ("Adamax", {"lr": 0.1}),
    ("NAdam", {"lr": 0.1}),
    ("RAdam", {"lr": 0.1}),
    ("Rprop", {"lr": 0.1}),
]


def _complex_run(lib, name, kwargs):
    p = lib.nn.Parameter(lib.tensor([1.0 + 2.0j, -0.5 + 0.25j, 0.3 - 1.0j]))
    opt = getattr(lib.optim, name)([p], **kwargs)
    for _ in range(4):
        opt.zero_grad()
        (p.abs() ** 2 + 0.5 * (p * (1 - 1j)).real + p.real**3).sum().backward()
        opt.step()
    states = {k: v.dtype for k, v in opt.state[p].items() if k != "step" and v.dim() > 0}
    return p.detach().tolist(), {k: str(v).split(".")[-1] for k, v in states.items()}


@pytest.mark.parametrize("name,kwargs", _COMPLEX_OPTIMS, ids=[n for n, _ in _COMPLEX_OPTIMS])
def test_optimizers_update_complex_parameters_as_real_pairs(name, kwargs):
    got, states = _complex_run(ember, name, kwargs)
    # the imaginary parts move too, and the state keeps the parameter's complex dtype
    assert all(isinstance(v, complex) for v in got)
    assert set(states.values()) <= {"complex64"}
    # a complex parameter steps as the two real coordinates (re, im) would
    re = ember.nn.Parameter(ember.tensor([[1.0, 2.0], [-0.5, 0.25], [0.3, -1.0]]))
    opt = getattr(ember.optim, name)([re], **kwargs)
    for _ in range(4):
        opt.zero_grad()
        x, y = re[:, 0], re[:, 1]
        (x**2 + y**2 + 0.5 * (x + y) + x**3).sum().backward()
        opt.step()
    expect = [complex(a, b) for a, b in re.detach().tolist()]
    assert got == pytest.approx(expect, rel=1e-5, abs=1e-6)
    torch = pytest.importorskip("torch")
    ref, ref_states = _complex_run(torch, name, kwargs)
    assert got == pytest.approx(ref, rel=1e-4, abs=1e-5)
    assert states == ref_states


def test_retained_grad_is_the_hooked_one():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    (y * y).sum().backward()
    assert y.grad.tolist() == [12.0, 24.0]  # 2 * (2 y), as torch: retain_grad's hook runs last
    assert x.grad.tolist() == [36.0, 72.0]
    z = x * 1
    z.register_hook(lambda g: g + 1)  # registered before retain_grad: already first
    z.retain_grad()
    z.sum().backward()
    assert z.grad.tolist() == [2.0, 2.0]
    w = x * 1
    w.retain_grad()
    w.register_hook(lambda g: None)  # a hook that returns nothing keeps the gradient
    w.sum().backward(retain_graph=True)
    w.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]  # and the retained gradient still accumulates


def test_accumulate_grad_node_names_as_torch():
    x = ember.ones(2, requires_grad=True)
    node = (x * 2).grad_fn.next_functions[0][0]
    assert node.name() == "torch::autograd::AccumulateGrad"
    assert type(node).__name__ == "AccumulateGrad" and repr(node).startswith("<AccumulateGrad ")


# Also in a fresh interpreter (the subclass with __torch_function__ switches dispatch on).
_PROTOCOL_NAMES_SCRIPT = textwrap.dedent(
    """
    import {mod} as torch

    class Plain(torch.Tensor):
        __torch_function__ = torch._C._disabled_torch_function_impl

    class Logged(torch.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {{}})

    p = torch.ones(2, 3).as_subclass(Plain)
    out = [type(p + 1).__name__, type(p.sum()).__name__, type(p).__name__]
    logged = torch.ones(2).as_subclass(Logged)
    with torch._C.DisableTorchFunctionSubclass():
        plain = logged * 2
    out += [type(plain).__name__, len(Logged.seen), type(logged * 2).__name__, len(Logged.seen)]
    print(out)
    """
)


def test_subclass_protocol_names_on_the_extension_module():
    # subclasses name these through torch._C: results stay plain, the block sees no subclass
    got = _run_subclass_script("ember", _PROTOCOL_NAMES_SCRIPT)
    assert got.strip() == "['Tensor', 'Tensor', 'Plain', 'Tensor', 0, 'Logged', 1]"
    pytest.importorskip("torch")
    assert _run_subclass_script("torch", _PROTOCOL_NAMES_SCRIPT) == got
