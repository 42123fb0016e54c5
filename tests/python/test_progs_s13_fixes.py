"""The ember fixes that the session-13 real programs (tests/python/torch_scripts/, listed in
test_real_programs.py) led to, each checked on its own, against torch where it is installed."""

import subprocess
import sys
import textwrap

import pytest

import ember
from ember import nn


def test_rdiv_and_the_python2_operator_names():
    t = ember.tensor([2.0, 4.0])
    assert t.__rdiv__(8).tolist() == [4.0, 2.0]
    assert t.__rdiv__(ember.tensor([8.0, 8.0])).tolist() == [4.0, 2.0]
    assert ember.tensor([1, 2]).__rdiv__(3).tolist() == [3.0, 1.5]  # true division of ints
    assert t.__rdiv__("a") is NotImplemented
    assert t.__div__(2).tolist() == [1.0, 2.0]
    u = ember.tensor([2.0, 4.0])
    assert u.__idiv__(2) is u and u.tolist() == [1.0, 2.0]
    assert ember.tensor([3.0]).__long__() == 3 and ember.tensor([1.0]).__nonzero__() is True
    torch = pytest.importorskip("torch")
    assert torch.tensor([2.0, 4.0]).__rdiv__(8).tolist() == t.__rdiv__(8).tolist()


# A Tensor subclass with its own __torch_function__ switches on subclass dispatch for the rest of
# the process, so these checks run in a fresh interpreter; the same text runs on torch too.
_REDISPATCH_SCRIPT = textwrap.dedent(
    """
    import {mod} as torch

    log = []
    HANDLED = {{}}

    class A(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {{}}
            log.append(func.__name__)
            if func in HANDLED:
                return HANDLED[func](*args, **kwargs)
            if func is torch.add:
                return torch.mul(args[0], args[1])  # comes back here as mul
            if func is torch.sub:
                with torch._C.DisableTorchFunctionSubclass():
                    return torch.neg(args[0])  # does not come back
            if func is torch.Tensor.__pow__:
                return "pow seen"
            return super().__torch_function__(func, types, args, kwargs)

    def implements(f):
        def deco(g):
            HANDLED[f] = g
            return g
        return deco

    @implements(torch.mean)
    def mean(x):
        return "handled mean"

    x = torch.tensor([1.0, 2.0]).as_subclass(A)
    y = torch.add(x, x)
    print("redispatch", type(y).__name__, y.tolist(), log)
    log.clear()
    z = torch.sub(x, x)
    print("disabled", type(z).__name__, z.tolist(), log)
    log.clear()
    print("rdiv", (3 / x).tolist(), x.__rdiv__(3).tolist(), log)
    log.clear()
    print("pow", x ** 2, log)
    print("implements", torch.mean(x), x.mean())
    resolve = torch.overrides.resolve_name
    print("resolve", resolve(torch.add), resolve(torch.Tensor.add))

    class Named(torch.Tensor):
        pass

    class Custom(torch.Tensor):
        def __repr__(self):
            return "custom!"

    print("repr", repr(torch.ones(2).as_subclass(Named)), str(torch.ones(1).as_subclass(Custom)))
    print("plain_repr", repr(torch.ones(2)), str(torch.nn.Parameter(torch.ones(1))).splitlines()[0])
    """
)


def _run(mod, script):
    out = subprocess.run(
        [sys.executable, "-c", script.format(mod=mod)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_calls_inside_a_subclass_handler_dispatch_again():
    got = _run("ember", _REDISPATCH_SCRIPT)
    lines = dict(line.split(" ", 1) for line in got.splitlines())
    assert lines["redispatch"] == "A [1.0, 4.0] ['add', 'mul', 'tolist']"
    assert lines["disabled"] == "Tensor [-1.0, -2.0] ['sub']"
    assert lines["rdiv"] == "[3.0, 1.5] [3.0, 1.5] ['__rdiv__', 'tolist', '__rdiv__', 'tolist']"
    assert lines["pow"] == "pow seen ['pow']"
    assert lines["implements"] == "handled mean A(1.5000)"  # x.mean() is Tensor.mean, not in it
    assert lines["resolve"] == "torch.add torch.Tensor.add"
    assert lines["repr"] == "Named([1., 1.]) custom!"
    assert lines["plain_repr"] == "tensor([1., 1.]) Parameter containing:"
    pytest.importorskip("torch")
    assert got == _run("torch", _REDISPATCH_SCRIPT)


def test_user_modes_see_calls_as_torch_hands_them():
    from ember.overrides import TorchFunctionMode

    table = {ember.nn.functional.linear: "linear"}  # built before the mode: the originals
    seen, order = [], []

    class Flops(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is ember.nn.functional.linear:  # looked up while the mode is on
                seen.append(("is", table.get(func)))
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    class Named(TorchFunctionMode):
        def __init__(self, name):
            self.name = name

        def __torch_function__(self, func, types, args=(), kwargs=None):
            order.append(self.name)
            return func(*args, **(kwargs or {}))

    relu = ember.relu
    x, w = ember.ones(1, 2), ember.ones(3, 2)
    with Flops():
        ember.nn.functional.linear(x, w)
        y = x + 1
        _ = 2 / y
    assert seen == [("is", "linear"), "linear", "add", "__rdiv__"]
    with Flops():
        pass
    with Named("outer"), Named("inner"):
        ember.relu(x)
    assert order == ["inner", "outer"]
    got = []

    class Keep(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            got.append(func)
            return func(*args, **(kwargs or {}))

    with Keep():
        ember.relu(x)
    assert got == [relu] and hash(got[0]) == hash(relu)  # equal to the function it stands for
    assert ember.relu is relu  # the originals are back after the mode


def test_set_submodule():
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    m.set_submodule("1", nn.GELU())
    assert type(m[1]) is nn.GELU
    outer = nn.Sequential(m)
    outer.set_submodule("0.0", nn.Identity())
    assert type(m[0]) is nn.Identity
    m.set_submodule("2", nn.Tanh())  # strict=False may add
    assert type(m[2]) is nn.Tanh
    with pytest.raises(AttributeError, match="has no attribute `5`"):
        m.set_submodule("5", nn.ReLU(), strict=True)
    with pytest.raises(AttributeError, match="has no attribute `x`"):
        m.set_submodule("x.y", nn.ReLU())
    with pytest.raises(ValueError, match="`module` is not an nn.Module"):
        m.set_submodule("1", 3)
    with pytest.raises(ValueError, match="without a target name"):
        m.set_submodule("", nn.ReLU())
    lin = nn.Linear(1, 1)
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        nn.Sequential(lin).set_submodule("0.weight", nn.ReLU())


def test_global_full_backward_hooks_run_before_the_modules_own():
    from ember.nn.modules import module as module_mod

    events = []
    net = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    own = net[1].register_full_backward_hook(lambda m, gi, go: events.append("own"))
    g_pre = module_mod.register_module_full_backward_pre_hook(
        lambda m, go: events.append(("pre", type(m).__name__))
    )
    g_bwd = module_mod.register_module_full_backward_hook(
        lambda m, gi, go: events.append(("bwd", type(m).__name__))
    )
    try:
        net(ember.ones(1, 2, requires_grad=True)).sum().backward()
    finally:
        g_pre.remove()
        g_bwd.remove()
    assert events == [
        ("pre", "Sequential"),
        ("pre", "Tanh"),
        ("bwd", "Tanh"),
        "own",
        ("pre", "Linear"),
        ("bwd", "Linear"),
        ("bwd", "Sequential"),
    ]
    events.clear()
    net(ember.ones(1, 2, requires_grad=True)).sum().backward()
    assert events == ["own"]
    own.remove()


def test_type_info_dtype_is_a_string():
    assert ember.iinfo(ember.int64).dtype == "int64"
    assert ember.finfo(ember.bfloat16).dtype == "bfloat16"
    assert ember.finfo().dtype == "float32"
    assert repr(ember.iinfo(ember.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"
    torch = pytest.importorskip("torch")
    assert torch.iinfo(torch.int64).dtype == ember.iinfo(ember.int64).dtype
    assert repr(torch.finfo(torch.float16)) == repr(ember.finfo(ember.float16))


def test_grad_mode_decorators_on_generators():
    @ember.no_grad()
    def gen():
        received = yield ember.is_grad_enabled()
        yield received, ember.is_grad_enabled()

    it = gen()
    assert next(it) is False
    assert ember.is_grad_enabled()  # the caller's code between steps runs in its own mode
    assert it.send("x") == ("x", False)

    @ember.inference_mode()
    def inf():
        yield ember.is_inference_mode_enabled()

    with ember.no_grad():

        @ember.enable_grad()
        def on():
            yield ember.is_grad_enabled()

        assert list(on()) == [True]
    assert list(inf()) == [True] and not ember.is_inference_mode_enabled()


def test_inference_mode_false_turns_grad_on():
    with ember.no_grad():
        with ember.inference_mode(False):
            assert ember.is_grad_enabled() and not ember.is_inference_mode_enabled()
        assert not ember.is_grad_enabled()
    with ember.inference_mode():
        with ember.inference_mode(False):
            assert ember.is_grad_enabled()
        assert not ember.is_grad_enabled()


def test_requires_grad_on_an_inference_tensor():
    with ember.inference_mode():
        t = ember.ones(2)
    with pytest.raises(
        RuntimeError, match="Setting requires_grad=True on inference tensor outside"
    ):
        t.requires_grad_(True)
    with pytest.raises(
        RuntimeError, match="Setting requires_grad=True on inference tensor outside"
    ):
        t.requires_grad = True
    t.requires_grad_(False)  # allowed
    with ember.inference_mode():
        t.requires_grad_(True)  # inside the mode: allowed
    assert t.requires_grad
