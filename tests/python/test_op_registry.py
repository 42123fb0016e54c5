"""The operator registry: every dispatcher op declared once with a schema in torch's grammar."""

import re

import pytest

import ember

try:
    import torch
except ImportError:  # the torch comparisons below skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference for schemas")


def _ops():
    # ember's own operators; namespaced entries ("mylib::foo") are custom ops that other tests
    # define at run time in the same registry (test_library.py checks those).
    return {op["name"]: op for op in ember._C._op_schemas() if "::" not in op["name"]}


def test_every_op_has_a_schema_named_like_it():
    ops = _ops()
    assert len(ops) > 200
    assert sorted(ops) == [n for n in ember._C._registered_ops() if "::" not in n]
    for name, op in ops.items():
        schema = op["schema"]
        assert schema.split("(", 1)[0] == name
        assert re.fullmatch(r"[A-Za-z_][\w]*(\.\w+)?\(.*\) -> .+", schema), schema
        assert "CPU" in op["kernels"], f"{name} has no CPU kernel"
        assert op["has_autograd"] == ("Autograd" in op["kernels"])


def test_derivatives_are_registered_where_torch_has_them():
    ops = _ops()
    for name in [
        "add.Tensor",
        "mul.Tensor",
        "exp",
        "tanh",
        "mm",
        "addmm",
        "sum.dim_IntList",
        "gather",
        "_softmax.ember",
        "native_layer_norm",
        "conv2d_forward",
        "gelu.ember",
    ]:
        assert ops[name]["has_autograd"], name
    for name in ["eq.Tensor", "isnan", "bitwise_and.Tensor", "nonzero", "_unique.ember"]:
        assert not ops[name]["has_autograd"], name


@needs_torch
def test_schemas_parse_with_torchs_parser():
    for op in ember._C._op_schemas():
        parsed = torch._C.parse_schema(op["schema"])
        assert parsed.name == op["name"].split(".")[0]
        assert parsed.overload_name == (op["name"].split(".") + [""])[1]


def _kind(arg):
    """An argument's type for comparing ember's schema with torch's: SymInt is int, a Scalar
    (number) takes what ember's float takes, list sizes and optionality are ignored (ember's int[]
    takes what torch's int[1]? takes, minus None)."""
    t = str(arg.type).replace("SymInt", "int").replace("number", "float")
    t = t.replace("Optional[", "").rstrip("]?")
    return re.sub(r"\[\d*\]", "[]", t.replace("List[", "").replace("]", "[]"))


@needs_torch
def test_schemas_that_reuse_a_torch_name_agree_with_torch():
    """An op named like a torch overload takes torch's arguments in torch's order; arguments
    only one side has must have defaults, so a call valid for ember is valid for torch. Ember's
    own variants of torch's ops take the overload name `ember` (Note [Op schemas])."""
    checked = 0
    for op in ember._C._op_schemas():
        base, _, overload = op["name"].partition(".")
        theirs = [
            s
            for s in torch._C._jit_get_schemas_for_operator("aten::" + base)
            if s.overload_name == overload
        ]
        if not theirs:
            continue
        ours, theirs = torch._C.parse_schema(op["schema"]), theirs[0]
        for a, b in zip(ours.arguments, theirs.arguments):
            assert _kind(a) == _kind(b), (op["schema"], str(theirs))
        longer = ours.arguments if len(ours.arguments) > len(theirs.arguments) else theirs.arguments
        for extra in longer[min(len(ours.arguments), len(theirs.arguments)) :]:
            assert (
                extra.default_value is not None
                or extra.kwarg_only
                or str(extra.type).startswith("Optional")
            ), (op["schema"], str(theirs))
        assert len(ours.returns) == len(theirs.returns), (op["schema"], str(theirs))
        checked += 1
    assert checked > 100
