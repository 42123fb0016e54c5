"""ember.ops: ember's operators under torch's ATen names, built from the dispatcher's registry, and
operators declared outside ember under their own namespace."""

import pickle

import numpy as np
import pytest

import ember
from ember._op_overloads import FunctionSchema, OpOverload, OpOverloadPacket


def test_aten_overloads_call_ember_ops():
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = ember.tensor([[0.5, -1.0], [2.0, 0.0]])
    aten = ember.ops.aten
    assert ember.equal(aten.add.Tensor(a, b), a + b)
    assert ember.equal(aten.add.Tensor(a, b, alpha=2), a + 2 * b)
    assert ember.equal(aten.mm.default(a, b), a @ b)
    assert ember.equal(aten.relu.default(a - 2.5), ember.relu(a - 2.5))
    assert ember.equal(aten.mm(a, b), a @ b)  # the packet picks the overload
    c = a.clone()
    aten.add_.Tensor(c, b)
    assert ember.equal(c, a + b)


def test_overload_objects():
    add = ember.ops.aten.add
    assert isinstance(add, OpOverloadPacket) and isinstance(add.Tensor, OpOverload)
    assert add.Tensor.name() == "aten::add.Tensor"
    assert ember.ops.aten.mm.default.name() == "aten::mm"
    assert str(add.Tensor._schema) == (
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    )
    args = add.Tensor._schema.arguments
    assert [a.name for a in args] == ["self", "other", "alpha"]
    assert args[2].kwarg_only and args[2].default_value == 1
    assert repr(add.Tensor) == "aten.add.Tensor" and repr(add) == "aten.add"
    assert add.Tensor.overloadpacket is add
    assert "Tensor" in add.overloads()
    assert pickle.loads(pickle.dumps(add.Tensor)) is add.Tensor
    assert ember.ops.aten.add_.Tensor._schema.arguments[0].is_write


def test_every_registered_op_is_reachable():
    for e in ember._C._op_schemas():
        name = e["name"]
        ns, _, rest = name.rpartition("::")
        ns = ns or "aten"
        if ns == "quantized":
            continue
        base, _, overload = rest.partition(".")
        op = getattr(getattr(getattr(ember.ops, ns), base), overload or "default")
        # the registry's text, with float defaults printed as c10 prints them (`eps=1e-05` as
        # `eps=1.0000000000000001e-05`, as torch's schemas print)
        registry = str(FunctionSchema(e["schema"]))
        assert str(op._schema).split("::", 1)[-1] == registry.split("::", 1)[-1]


def test_schemas_match_torch_aten():
    torch = pytest.importorskip("torch")
    for ns_name in ("add.Tensor", "mm.default", "relu.default", "sum.dim_IntList", "mul.Tensor"):
        base, overload = ns_name.split(".")
        ours = getattr(getattr(ember.ops.aten, base, None), overload, None)
        if ours is None:
            continue
        theirs = getattr(getattr(torch.ops.aten, base), overload)
        assert ours.name() == theirs.name()
        assert [a.name for a in ours._schema.arguments] == [
            a.name for a in theirs._schema.arguments
        ]


def test_errors():
    with pytest.raises(AttributeError, match="has no attribute 'not_an_op'"):
        ember.ops.aten.not_an_op
    with pytest.raises(AttributeError, match="has no overload name 'nope'"):
        ember.ops.aten.add.nope
    with pytest.raises(AttributeError, match="'quantized' object has no attribute 'nope'"):
        ember.ops.quantized.nope


def test_an_op_declared_outside_python_appears_under_its_namespace():
    # What a C++ declaration (EMBER_DECLARE_OP(x, "cppns::thing(Tensor self) -> Tensor", ...))
    # creates: a dispatcher entry with a namespaced name.
    ember._C._custom_op_define("cppns::thing", "cppns::thing(Tensor self, int k) -> Tensor")
    op = ember.ops.cppns.thing.default
    assert op.name() == "cppns::thing"
    assert str(op._schema) == "cppns::thing(Tensor self, int k) -> Tensor"
    with pytest.raises(NotImplementedError, match="declared in C\\+\\+"):
        op(ember.ones(1), 1)


def test_ops_seen_by_function_modes():
    seen = []

    class Mode(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    a = ember.ones(2)
    with Mode():
        out = ember.ops.aten.mul.Tensor(a, a)
    assert seen == [ember.ops.aten.mul.Tensor]
    np.testing.assert_allclose(out.numpy(), [1.0, 1.0])
