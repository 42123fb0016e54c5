"""ember.export against torch.export's documentation: each documented use runs, with torch's
results where torch is installed (the same program exported by both, the same errors).

Covered: export(mod, args, kwargs=, dynamic_shapes=, strict=), Dim(name, min, max), dims(),
Dim.AUTO / DYNAMIC / STATIC, derived dims (d + 1, 2 * d), dynamic_shapes as dict, tuple and
nested, ShapesCollection, constraint violations (UserError, ConstraintViolationError), module()
input checks, graph / graph_module / graph_signature / state_dict / constants /
range_constraints, run_decompositions with a table, save/load, unflatten, register_dataclass,
cond / _check / _check_is_size, printing, validate / dialect / module_call_graph / draft_export."""

import dataclasses
import io
import re

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.export import Dim, export


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.detach()), np.asarray(b.detach()), rtol=1e-5, atol=1e-6)


def _torch():
    return pytest.importorskip("torch")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.lin = nn.Linear(4, 2)
        self.register_buffer("scale", ember.ones(2))

    def forward(self, x, *, y=None):
        out = self.lin(self.bn(self.conv(x)).relu().mean((2, 3))) * self.scale
        return out if y is None else out + y


@pytest.fixture
def net():
    ember.manual_seed(0)
    return Net().eval()


# -- export(mod, args, kwargs=, dynamic_shapes=, strict=) -------------------------------------


def test_export_args_kwargs_strict(net):
    x, y = ember.randn(2, 3, 8, 8), ember.randn(2, 2)
    _close(export(net, (x,)).module()(x), net(x))
    ep = export(net, (x,), kwargs={"y": y}, strict=True)
    _close(ep.module()(x, y=y), net(x, y=y))


@pytest.mark.parametrize(
    "spec",
    [
        lambda b: {"x": {0: b}},
        lambda b: ({0: b},),
        lambda b: {"x": (b, None, None, None)},
        lambda b: {"x": {0: Dim.AUTO, 1: Dim.STATIC}},
        lambda b: {"x": {0: Dim.DYNAMIC}},
    ],
)
def test_dynamic_shapes_forms(net, spec):
    ep = export(net, (ember.randn(2, 3, 8, 8),), dynamic_shapes=spec(Dim("batch", min=1, max=16)))
    x = ember.randn(5, 3, 8, 8)
    _close(ep.module()(x), net(x))
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ember.randn(5, 3, 8, 7))  # a static dim


def test_dims_and_shapes_collection():
    a, b = ember.export.dims("a", "b", min=1, max=20)

    class MatMul(nn.Module):
        def forward(self, p, q):
            return p @ q

    ep = export(
        MatMul(), (ember.randn(3, 4), ember.randn(4, 5)), dynamic_shapes={"p": {0: a}, "q": {1: b}}
    )
    # keyed by torch's symbols (the dims' sources hashed), no longer by the Dims' names
    assert ep.range_constraints == {"s7": (1, 20), "s34": (1, 20)}
    assert tuple(ep.module()(ember.randn(6, 4), ember.randn(4, 7)).shape) == (6, 7)
    p = ember.randn(3, 4)
    sc = ember.export.ShapesCollection()
    sc[p] = {0: Dim("rows")}
    ep = export(MatMul(), (p, ember.randn(4, 5)), dynamic_shapes=sc)
    assert list(ep.range_constraints) == ["s7"]
    assert (
        repr(Dim.AUTO) == "DimHint(AUTO)"
        and repr(Dim("b", min=1, max=8)) == "Dim('b', min=1, max=8)"
    )


class _Shifted(nn.Module):
    def forward(self, p, q):
        return p + q[1:]


class _Doubled(nn.Module):
    def forward(self, p, q):
        return p.repeat(2) + q


def test_derived_dims():
    d = Dim("d", min=2, max=32)
    ep = export(
        _Shifted(), (ember.randn(4), ember.randn(5)), dynamic_shapes={"p": {0: d}, "q": {0: d + 1}}
    )
    assert ep.range_constraints == {"s7": (2, 32), "s7 + 1": (3, 33)}
    p, q = ember.randn(7), ember.randn(8)
    _close(ep.module()(p, q), p + q[1:])
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ember.randn(4), ember.randn(6))  # q is not d + 1
    ep = export(
        _Doubled(), (ember.randn(4), ember.randn(8)), dynamic_shapes={"p": {0: d}, "q": {0: 2 * d}}
    )
    p, q = ember.randn(5), ember.randn(10)
    _close(ep.module()(p, q), p.repeat(2) + q)
    with pytest.raises(ember.export.ConstraintViolationError, match="2\\*d"):
        export(
            _Doubled(),
            (ember.randn(4), ember.randn(7)),
            dynamic_shapes={"p": {0: d}, "q": {0: 2 * d}},
        )


def test_derived_dims_match_torch():
    torch = _torch()
    td = torch.export.Dim("d", min=2, max=32)
    tep = torch.export.export(
        _torch_shifted(torch)(),
        (torch.randn(4), torch.randn(5)),
        dynamic_shapes={"p": {0: td}, "q": {0: td + 1}},
    )
    d = Dim("d", min=2, max=32)
    ep = export(
        _Shifted(), (ember.randn(4), ember.randn(5)), dynamic_shapes={"p": {0: d}, "q": {0: d + 1}}
    )
    # the same ranges (torch keys them by symbol, ember by the Dim's name)
    assert sorted((v.lower, v.upper) for v in tep.range_constraints.values()) == sorted(
        ep.range_constraints.values()
    )
    for mod, lib in ((tep.module(), torch), (ep.module(), ember)):
        with pytest.raises(AssertionError, match="Guard failed"):
            mod(lib.randn(4), lib.randn(6))


def _torch_shifted(torch):
    class Shifted(torch.nn.Module):
        def forward(self, p, q):
            return p + q[1:]

    return Shifted


# -- nested inputs, register_dataclass ---------------------------------------------------------


class _Nested(nn.Module):
    def forward(self, inp, k):
        return inp["a"] + inp["b"][0] * k


def test_nested_inputs_and_dynamic_shapes():
    d = Dim("d")
    example = ({"a": ember.randn(3, 2), "b": [ember.randn(3, 2)]}, ember.randn(2))
    ep = export(_Nested(), example, dynamic_shapes={"inp": {"a": {0: d}, "b": [{0: d}]}, "k": None})
    assert ep.graph_signature.user_inputs == ("inp_a", "inp_b_0", "k") or list(
        ep.graph_signature.user_inputs
    ) == ["inp_a", "inp_b_0", "k"]
    inp, k = {"a": ember.randn(5, 2), "b": [ember.randn(5, 2)]}, ember.randn(2)
    _close(ep.module()(inp, k), inp["a"] + inp["b"][0] * k)
    with pytest.raises(ValueError, match="tree spec"):
        ep.module()({"a": ember.randn(5, 2)}, k)
    torch = pytest.importorskip("torch")

    class Nested(torch.nn.Module):
        def forward(self, inp, k):
            return inp["a"] + inp["b"][0] * k

    tep = torch.export.export(
        Nested(), ({"a": torch.randn(3, 2), "b": [torch.randn(3, 2)]}, torch.randn(2))
    )
    assert list(tep.graph_signature.user_inputs) == list(ep.graph_signature.user_inputs)


@dataclasses.dataclass
class _Pair:
    a: object
    b: object


def test_register_dataclass():
    ember.export.register_dataclass(_Pair)

    class Sum(nn.Module):
        def forward(self, pair):
            return pair.a + 2 * pair.b

    ep = export(Sum(), (_Pair(ember.ones(2), ember.ones(2)),))
    got = ep.module()(_Pair(ember.ones(2), 3 * ember.ones(2)))
    _close(got, ember.full((2,), 7.0))
    with pytest.raises(TypeError, match="dataclass"):
        ember.export.register_dataclass(int)


# -- constraint violations -------------------------------------------------------------------------


class _Branchy(nn.Module):
    def forward(self, p):
        if p.shape[0] == 4:
            return p + 1
        return p - 1


def test_specialized_dynamic_dim_is_a_user_error():
    with pytest.raises(ember._dynamo.exc.UserError, match=r"Constraints violated \(n\)!") as info:
        export(_Branchy(), (ember.randn(4),), dynamic_shapes={"p": {0: Dim("n")}})
    assert "p.shape[0]" in str(info.value) and "(4)" in str(info.value)
    # Dim.AUTO lets export make it static instead, as torch does
    ep = export(_Branchy(), (ember.randn(4),), dynamic_shapes={"p": {0: Dim.AUTO}})
    assert ep.range_constraints == {}
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ember.randn(5))
    # a branch on tensor data is not a constraint violation
    with pytest.raises(RuntimeError, match="data-dependent control flow"):

        class Data(nn.Module):
            def forward(self, p):
                return p + 1 if p.sum() > 0 else p

        export(Data(), (ember.randn(4),), dynamic_shapes={"p": {0: Dim("n")}})


def test_constraint_errors_match_torch():
    torch = _torch()

    class Branchy(torch.nn.Module):
        def forward(self, p):
            if p.shape[0] == 4:
                return p + 1
            return p - 1

    with pytest.raises(torch._dynamo.exc.UserError, match=r"Constraints violated \(n\)!"):
        torch.export.export(
            Branchy(), (torch.randn(4),), dynamic_shapes={"p": {0: torch.export.Dim("n")}}
        )
    with pytest.raises(ember._dynamo.exc.UserError, match=r"Constraints violated \(n\)!"):
        export(_Branchy(), (ember.randn(4),), dynamic_shapes={"p": {0: Dim("n")}})
    # an example outside its Dim's range
    with pytest.raises(RuntimeError, match="not in range"):
        torch.export.export(
            Branchy(), (torch.randn(2),), dynamic_shapes={"p": {0: torch.export.Dim("n", min=3)}}
        )
    with pytest.raises(RuntimeError, match="not in range"):
        export(_Branchy(), (ember.randn(2),), dynamic_shapes={"p": {0: Dim("n", min=3)}})


def test_module_input_checks(net):
    ep = export(net, (ember.randn(2, 3, 8, 8),))
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 2"):
        ep.module()(ember.randn(3, 3, 8, 8))
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ember.randn(3, 8, 8))
    with pytest.raises(RuntimeError, match="module()"):
        ep(ember.randn(2, 3, 8, 8))


class _Twice(nn.Module):
    def forward(self, x):
        return x * 2


@pytest.mark.parametrize("bounds", [{"min": 2, "max": 64}, {"min": 4}, {}])
def test_module_dim_range_guards_as_torch(bounds):
    """A lower bound of 2 or less guards nothing (sizes 0 and 1 run), a higher one and an upper
    bound raise torch's one-line messages."""
    torch = _torch()

    def outcome(module, lib, n):
        try:
            return tuple(module(lib.randn(n, 4)).shape)
        except AssertionError as e:
            return str(e)

    ep = export(_Twice(), (ember.randn(5, 4),), dynamic_shapes={"x": {0: Dim("b", **bounds)}})
    theirs = torch.export.export(
        _torch_twice(torch)(),
        (torch.randn(5, 4),),
        dynamic_shapes={"x": {0: torch.export.Dim("b", **bounds)}},
    )
    for n in (0, 1, 3, 65):
        assert outcome(ep.module(), ember, n) == outcome(theirs.module(), torch, n)


def _torch_twice(torch):
    class Twice(torch.nn.Module):
        def forward(self, x):
            return x * 2

    return Twice


# -- the program's parts ---------------------------------------------------------------------------


def test_graph_signature_state_constants(net):
    ep = export(net, (ember.randn(2, 3, 8, 8),))
    sig = ep.graph_signature
    assert [n.op for n in ep.graph.nodes][0] == "placeholder" and ep.graph is ep.graph_module.graph
    assert sig.parameters[:2] == ["conv.weight", "conv.bias"] or list(sig.parameters[:2]) == [
        "conv.weight",
        "conv.bias",
    ]
    assert "scale" in sig.buffers and list(sig.user_inputs) == ["x"]
    assert set(ep.state_dict) >= {"conv.weight", "bn.running_mean", "scale"}

    class WithConstant(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = ember.tensor([1.0, 2.0])

        def forward(self, p):
            return p + self.c

    ep = export(WithConstant(), (ember.randn(2),))
    assert list(ep.constants) == ["c"]
    assert [s.kind.name for s in ep.graph_signature.input_specs] == [
        "CONSTANT_TENSOR",
        "USER_INPUT",
    ]
    ep.validate()
    assert ep.dialect == "TRAINING" and ep.run_decompositions().dialect == "ATEN"


def test_signature_names_match_torch(net):
    torch = _torch()

    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(4)
            self.lin = torch.nn.Linear(4, 2)
            self.register_buffer("scale", torch.ones(2))

        def forward(self, x, *, y=None):
            out = self.lin(self.bn(self.conv(x)).relu().mean((2, 3))) * self.scale
            return out if y is None else out + y

    tep = torch.export.export(TNet().eval(), (torch.randn(2, 3, 8, 8),))
    ep = export(net, (ember.randn(2, 3, 8, 8),))
    spec = lambda s: (s.kind.name, s.arg.name, s.target)  # noqa: E731
    assert [spec(s) for s in ep.graph_signature.input_specs] == [
        spec(s) for s in tep.graph_signature.input_specs
    ]
    assert sorted(ep.state_dict) == sorted(tep.state_dict)
    assert [e.fqn for e in ep.module_call_graph] == [e.fqn for e in tep.module_call_graph]
    text, ttext = str(ep), str(tep)
    for section in (
        "ExportedProgram:",
        "Graph signature:",
        "# inputs",
        "p_conv_weight: PARAMETER target='conv.weight'",
        "Range constraints",
    ):
        assert section in text and section in ttext


def test_run_decompositions_with_a_table():
    class Act(nn.Module):
        def forward(self, x):
            return nn.functional.gelu(x) + x.add(1)

    x = ember.randn(5)
    ep = export(Act(), (x,))
    table = ember.export.default_decompositions()
    assert table.pop(ember.ops.aten.gelu) is None  # not there: no error, as torch's table
    table[ember.ops.aten.gelu] = lambda x, approximate="none": x * ember.sigmoid(1.702 * x)
    dep = ep.run_decompositions(table)
    names = [str(n.target) for n in dep.graph.nodes if n.op == "call_function"]
    assert not any("gelu" in n for n in names) and any("sigmoid" in n for n in names)
    _close(dep.module()(x), x * ember.sigmoid(1.702 * x) + x + 1)
    _close(ep.run_decompositions().module()(x), Act()(x))  # the default: gelu kept


def test_save_load_unflatten_draft(net, tmp_path):
    x = ember.randn(2, 3, 8, 8)
    ep = export(net, (x,), dynamic_shapes={"x": {0: Dim("batch", min=1, max=8)}})
    buf = io.BytesIO()
    ember.export.save(ep, buf)
    buf.seek(0)
    loaded = ember.export.load(buf)
    x3 = ember.randn(3, 3, 8, 8)
    _close(loaded.module()(x3), net(x3))
    assert loaded.range_constraints == ep.range_constraints
    flat = ember.export.unflatten(ep)
    _close(flat(x3), net(x3))
    assert flat.conv.weight.shape == net.conv.weight.shape
    draft = ember.export.draft_export(net, (x,))
    assert draft._report.successful()


# -- cond, _check, _check_is_size ------------------------------------------------------------------


class _Cond(nn.Module):
    def forward(self, p):
        return ember.cond(p.sum() > 0, lambda p: p.cos(), lambda p: p.sin(), (p,))


def test_cond_eager_and_exported(tmp_path):
    q = ember.tensor([-1.0, -2.0, 0.5])
    _close(_Cond()(q), q.sin())
    _close(_Cond()(-q), (-q).cos())
    ep = export(_Cond(), (ember.randn(3),))
    _close(ep.module()(q), q.sin())
    _close(ep.module()(-q), (-q).cos())
    # saved and run by the C++ runtime (save refused it while the runtime lacked sin and cos)
    ember.export.save(ep, tmp_path / "cond.pt2")
    for v, want in ((q, q.sin()), (-q, (-q).cos())):
        _close(ember._C._export_run(str(tmp_path / "cond.pt2"), [v])[0], want)
    # as torch's: a lone tensor is a one-tuple of operands
    with pytest.raises(TypeError, match="positional argument"):
        ember.cond(True, lambda: 1, lambda: 2, operands=ember.ones(1))
    assert ember.cond(True, lambda x: x + 1, lambda x: x, operands=ember.ones(1)).tolist() == [2.0]


def test_cond_matches_torch():
    torch = _torch()

    class Cond(torch.nn.Module):
        def forward(self, p):
            return torch.cond(p.sum() > 0, lambda p: p.cos(), lambda p: p.sin(), (p,))

    qn = np.array([-1.0, -2.0, 0.5], dtype=np.float32)
    tep = torch.export.export(Cond(), (torch.randn(3),))
    ep = export(_Cond(), (ember.randn(3),))
    for v in (qn, -qn):
        want = tep.module()(torch.from_numpy(v.copy())).numpy()
        np.testing.assert_allclose(ep.module()(ember.from_numpy(v.copy())).numpy(), want, rtol=1e-6)


def test_check_and_check_is_size():
    class Checked(nn.Module):
        def forward(self, p):
            ember._check(p.shape[0] > 1)
            ember._check_is_size(p.shape[0])
            return p * 2

    ep = export(Checked(), (ember.randn(6),), dynamic_shapes={"p": {0: Dim("n")}})
    _close(ep.module()(ember.ones(4)), ember.full((4,), 2.0))
    ember._check(True)
    ember._check_is_size(3, max=4)
    with pytest.raises(RuntimeError, match="custom text"):
        ember._check(False, lambda: "custom text")
    with pytest.raises(RuntimeError):
        ember._check_is_size(-1)
    with pytest.raises(RuntimeError):
        ember._check_is_size(5, max=4)


class _Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)

    def forward(self, x):
        return self.lin(x).relu()


def test_printing():
    ep = export(_Lin(), (ember.randn(3, 4),), dynamic_shapes={"x": {0: Dim("b")}})
    text = str(ep)
    assert text.startswith("ExportedProgram:\n    class GraphModule(")
    assert (
        'def forward(self, p_lin_weight: "f32[2, 4]", p_lin_bias: "f32[2]", x: "f32[s77, 4]")'
        in text
    )
    assert "x: USER_INPUT" in text and "relu: USER_OUTPUT" in text
    assert "Range constraints: {s77: VR[0, int_oo]}" in text  # torch's symbol, not the Dim's name
    torch = _torch()

    class Lin(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.lin(x).relu()

    ttext = str(torch.export.export(Lin(), (torch.randn(3, 4),)))
    for part in (
        'p_lin_weight: "f32[2, 4]"',
        'p_lin_bias: "f32[2]"',
        "x: USER_INPUT",
        "relu: USER_OUTPUT",
    ):
        assert part in ttext and part in text


class _Item(nn.Module):
    def forward(self, p, k):
        n = k.item()
        ember._check_is_size(n)
        ember._check(n <= p.shape[0])
        return p[:n]


def test_item_with_checks_matches_torch(tmp_path):
    ep = export(_Item(), (ember.randn(6), ember.tensor(3)))
    p = ember.arange(6.0)
    _close(ep.module()(p, ember.tensor(2)), p[:2])  # the size read at run time
    # since session 13 the C++ runtime has an item op: the saved program reads the size too
    ember.export.save(ep, tmp_path / "item.pt2")
    _close(ember._C._export_run(str(tmp_path / "item.pt2"), [p, ember.tensor(5)])[0], p[:5])
    torch = _torch()

    class Item(torch.nn.Module):
        def forward(self, p, k):
            n = k.item()
            torch._check_is_size(n)
            torch._check(n <= p.shape[0])
            return p[:n]

    tep = torch.export.export(Item(), (torch.randn(6), torch.tensor(3)))
    want = tep.module()(torch.arange(6.0), torch.tensor(4)).numpy()
    np.testing.assert_array_equal(ep.module()(p, ember.tensor(4)).numpy(), want)


def _unbacked_modules(lib):
    class Prefix(lib.nn.Module):
        def forward(self, x, y):
            n = x.item()
            lib._check_is_size(n)
            lib._check(n <= y.shape[0])
            return y[:n] * 2

    class Below(lib.nn.Module):
        def forward(self, x, y):
            n = x.sum().item()
            lib._check(n < 4)
            return y + n

    class Free(lib.nn.Module):
        def forward(self, x):
            return x * x.item()

    return Prefix(), Below(), Free()


def _unbacked_programs(lib):
    args = (
        (lib.tensor(3), lib.randn(5)),
        (lib.tensor([1, 2]), lib.randn(5)),
        (lib.tensor(3),),
    )
    return [lib.export.export(m, a) for m, a in zip(_unbacked_modules(lib), args)]


def test_item_checks_are_torchs_runtime_assertions():
    # x.item() is torch's unbacked u0: _check/_check_is_size on it become aten._assert_scalar
    # nodes laid out as torch's runtime-assert pass does, with its names, messages and ranges
    prefix, below, free = _unbacked_programs(ember)
    assert 'item: "Sym(u0)" = ember.ops.aten.item.default(x)' in str(prefix)
    assert 'ge_1: "Sym(u0 >= 0)" = item >= 0' in str(prefix)
    assert [str(v) for v in prefix.range_constraints.values()] == ["VR[0, 5]"]
    m = prefix.module()
    _close(m(ember.tensor(2), ember.arange(5.0)), ember.arange(2.0) * 2)
    for n, expr in ((7, "u0 <= 5 on node 'le_1'"), (-1, "u0 >= 0 on node 'ge_1'")):
        with pytest.raises(RuntimeError, match=f"Runtime assertion failed for expression {expr}"):
            m(ember.tensor(n), ember.arange(5.0))
    with pytest.raises(RuntimeError, match="u0 <= 3 on node 'le'"):
        below.module()(ember.tensor([2, 2]), ember.ones(5))
    torch = _torch()
    for got, want in zip((prefix, below, free), _unbacked_programs(torch)):
        assert got.graph_module.code == want.graph_module.code.replace("torch.", "ember.")
        assert str(got.range_constraints) == str(want.range_constraints)


def _sized_by_data(lib):
    class Tail(lib.nn.Module):
        def forward(self, x, y):
            return y[x.nonzero().shape[0] :] * 2

    class Masked(lib.nn.Module):
        def forward(self, x):
            return x[x > 0] * 2, x.nonzero() * 2

    return (
        lib.export.export(Tail(), (lib.tensor([1, 0, 1]), lib.arange(6.0))),
        lib.export.export(Masked(), (lib.tensor([1.0, 0.0, 1.0]),)),
    )


def test_lengths_read_from_data_are_not_folded():
    # x.nonzero().shape[0] is read when the program runs (torch's sym_size.int, u0 in
    # [0, x.numel()]); before, the example's length was folded in: a wrong slice for other data
    tail, masked = _sized_by_data(ember)
    got = tail.module()(ember.tensor([1, 1, 1]), ember.arange(6.0))
    _close(got, ember.arange(3.0, 6.0) * 2)
    values, rows = masked.module()(ember.tensor([1.0, 2.0, 3.0]))  # the example had 2 of 3
    _close(values, ember.tensor([2.0, 4.0, 6.0]))
    assert rows.shape == (3, 1)
    assert [str(v) for v in masked.range_constraints.values()] == ["VR[0, 3]", "VR[0, 3]"]
    torch = _torch()
    want = _sized_by_data(torch)[0].graph_module.code.replace("torch.", "ember.")
    # torch numbers the length node it traced sym_size_int_1 (another, erased, took the name)
    assert tail.graph_module.code == want.replace("sym_size_int_1", "sym_size_int")
    assert str(tail.range_constraints) == "{u0: VR[0, 3]}"


def test_dynamic_shapes_tutorial_model_exports():
    # torch.export's tutorial model: assertions on Dim.AUTO sizes. ember makes the dims the code
    # compares static (torch keeps them symbolic with derived ranges) instead of failing
    class DynamicModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(5, 3)

        def forward(self, w, x, y, z):
            assert w.shape[0] <= 512
            ember._check(x.shape[0] >= 4)
            assert w.shape[0] == x.shape[0] + 2
            return self.l(w), (x + y).flatten() + z

    inps = (ember.randn(6, 5), ember.randn(4), ember.randn(32, 4), ember.randn(32 * 4))
    auto = Dim.AUTO
    ds = {"w": (auto, auto), "x": (auto,), "y": (auto, auto), "z": (auto,)}
    m = DynamicModel()
    ep = export(m, inps, dynamic_shapes=ds)
    for got, want in zip(ep.module()(*inps), m(*inps)):
        _close(got, want)


def test_branch_on_item_is_torchs_data_dependent_error():
    # torch.export's tutorial: a Python branch on x.item() raises torch's
    # GuardOnDataDependentSymNode (a RuntimeError) naming the expression
    class Foo(nn.Module):
        def forward(self, x, y):
            if x.item() // 2 >= 5:
                return y + 2
            return y * 5

    with pytest.raises(
        RuntimeError, match=r"Could not guard on data-dependent expression u0 // 2 >= 5"
    ):
        export(Foo(), (ember.tensor(32), ember.randn(4)))


def _symbolic_sizes_program(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = lib.nn.Linear(3, 4)

        def forward(self, x, n):
            k = n.item()
            lib._check(k >= 0)
            lib._check(k <= 5)
            y = lib.relu(self.l(x)) + 1
            return y.sum(-1, keepdim=True), x[x > 0].nonzero(), lib.ones(5)[:k] * 2

    lib.manual_seed(0)
    args = (lib.randn(4, 3), lib.tensor(2))
    return lib.export.export(M(), args, dynamic_shapes={"x": {0: lib.export.Dim("b")}, "n": None})


def _tensor_annotations(ep):
    """{node: "f32[s77, 4]"} of the printed program's tensor nodes."""
    text = ep.graph_module.print_readable(print_output=False)
    return dict(re.findall(r"(\w+): \"([a-z0-9]+\[[^\]]*\])\"", text))


def test_printed_sizes_are_symbolic_as_torchs():
    # torch prints each node's sizes in the input dims' symbols and the numbers read from data
    # (f32[s77, 4], f32[u0]); before, ember printed the example's sizes inside the graph
    got = _tensor_annotations(_symbolic_sizes_program(ember))
    assert got["add"] == "f32[s77, 4]" and got["sum_1"] == "f32[s77, 1]"
    assert got["index"] == "f32[u1]" and got["nonzero"] == "i64[u2, 1]"
    assert got["slice_1"] == "f32[u0]" and got["mul"] == "f32[u0]"
    torch = _torch()
    assert got == _tensor_annotations(_symbolic_sizes_program(torch))


def _count_of_dynamic(lib):
    class M(lib.nn.Module):
        def forward(self, x):
            return x.nonzero()

    dims = {"x": {0: lib.export.Dim("b")}}
    return lib.export.export(M(), (lib.ones(4, 3),), dynamic_shapes=dims)


def test_count_of_a_dynamic_input_is_not_bounded_by_the_example():
    # the count of a tensor with a dynamic dim has no fixed upper bound (torch: VR[0, int_oo],
    # no assertion); before, ember asserted u0 <= 12 (the example's numel) and a larger input
    # raised RuntimeError
    ep = _count_of_dynamic(ember)
    assert ep.module()(ember.ones(8, 3)).shape == (24, 2)
    got = {str(k): repr(v) for k, v in ep.range_constraints.items()}
    assert got == {"s77": "VR[0, int_oo]", "u0": "VR[0, 9223372036854775806]"}
    torch = _torch()
    want = _count_of_dynamic(torch)
    # torch lists u0 before s77
    assert got == {str(k): repr(v) for k, v in want.range_constraints.items()}
    # torch's length node is sym_size_int_1 (an erased node took the name), see above
    code = want.graph_module.code.replace("torch.", "ember.")
    assert ep.graph_module.code == code.replace("sym_size_int_1", "sym_size_int")


def test_dynamic_features_dim_of_a_linear_is_torchs_constraint_error():
    # Linear fixes its input's last dim to in_features: torch raises "Constraints violated"
    # for a Dim there; before, ember exported it dynamic and the program failed for other sizes
    def attempt(lib):
        m = lib.nn.Linear(3, 4)
        dims = {"input": {1: lib.export.Dim("b")}}
        with pytest.raises(Exception) as info:
            lib.export.export(m, (lib.randn(2, 3),), dynamic_shapes=dims)
        return info.value

    got = attempt(ember)
    assert isinstance(got, ember._dynamo.exc.UserError)
    assert str(got).endswith("Suggested fixes:\n  b = 3")
    # Dim.AUTO there becomes static, as torch's: only the batch stays dynamic
    dims = {"input": {0: Dim("b"), 1: Dim.AUTO}}
    ep = export(ember.nn.Linear(3, 4), (ember.randn(2, 3),), dynamic_shapes=dims)
    assert 'input: "f32[s31, 3]"' in str(ep)
    want = attempt(_torch())
    assert type(want).__name__ == "UserError"
    assert str(want).startswith(str(got))
    torch = _torch()
    tdims = {"input": {0: torch.export.Dim("b"), 1: torch.export.Dim.AUTO}}
    tep = torch.export.export(torch.nn.Linear(3, 4), (torch.randn(2, 3),), dynamic_shapes=tdims)
    assert str(ep.range_constraints) == str(tep.range_constraints) == "{s31: VR[0, int_oo]}"


def test_saved_program_keeps_the_item_checks(tmp_path):
    # torch keeps the aten._assert_scalar nodes through run_decompositions and save/load; before,
    # ember dropped them there, so a loaded program sliced silently for a number out of range
    prefix = _unbacked_programs(ember)[0]
    # torch 2.13's run_decompositions keeps both (not called here: its first call costs seconds)
    code = prefix.run_decompositions().graph_module.code
    assert code.count("Runtime assertion failed") == 2
    path = str(tmp_path / "prefix.pt2")
    ember.export.save(prefix, path)
    m = ember.export.load(path).module()
    _close(m(ember.tensor(2), ember.arange(5.0)), ember.arange(2.0) * 2)
    y = ember.arange(5.0)
    for n, expr in ((7, "u0 <= 5 on node 'le_1'"), (-1, "u0 >= 0 on node 'ge_1'")):
        message = f"Runtime assertion failed for expression {expr}"
        with pytest.raises(RuntimeError, match=message):
            m(ember.tensor(n), y)
        with pytest.raises(RuntimeError, match=message):  # the C++ runtime
            ember._C._export_run(path, [ember.tensor(n), y])
    _close(ember._C._export_run(path, [ember.tensor(3), y])[0], y[:3] * 2)
    with pytest.raises(RuntimeError, match="^checked$"):  # the overload, once export ran
        ember.ops.aten._assert_scalar.default(False, "checked")


def _fixed_by_an_op(lib):
    """(module, example, dim index, the size the op fixes it to) for ops that specialize a dim."""

    class Fn(lib.nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x)

    x = lib.ones(2, 3)
    return [
        (Fn(lambda x: x.view(6) * 2), x, 0, 2),
        (Fn(lambda x: x @ lib.ones(3, 4)), x, 1, 3),
        (Fn(lambda x: x + lib.ones(2, 3)), x, 0, 2),
        (Fn(lambda x: lib.cat([x, lib.ones(2, 5)], 1)), x, 0, 2),
        (lib.nn.Conv2d(3, 4, 1), lib.ones(1, 3, 4, 4), 1, 3),
    ]


def test_dims_fixed_by_ops_are_torchs_constraint_errors():
    # a view to a constant shape, a matmul with a static operand, broadcasting or cat against a
    # static tensor, conv's channels: torch raises "Constraints violated" for a Dim there and
    # makes a Dim.AUTO static; before, ember kept them dynamic (the program failed on other sizes)
    for m, x, d, size in _fixed_by_an_op(ember):
        name = "input" if isinstance(m, nn.Conv2d) else "x"
        with pytest.raises(ember._dynamo.exc.UserError) as info:
            export(m, (x,), dynamic_shapes={name: {d: Dim("b")}})
        assert str(info.value).startswith("Constraints violated (b)! For more information")
        assert str(info.value).endswith(f"Suggested fixes:\n  b = {size}")
        ep = export(m, (x,), dynamic_shapes={name: {d: Dim.AUTO}})
        assert ep.range_constraints == {}
        _close(ep.module()(x), m(x))
    torch = _torch()
    for k in (0, 4):  # the view and the conv, against torch's message
        m, x, d, _ = _fixed_by_an_op(torch)[k]
        name = "input" if k == 4 else "x"
        with pytest.raises(Exception) as want:
            torch.export.export(m, (x,), dynamic_shapes={name: {d: torch.export.Dim("b")}})
        em, ex, _, _ = _fixed_by_an_op(ember)[k]
        with pytest.raises(ember._dynamo.exc.UserError) as got:
            export(em, (ex,), dynamic_shapes={name: {d: Dim("b")}})
        assert str(want.value).startswith(str(got.value))


def _compared_sizes(lib):
    class Branch(lib.nn.Module):
        def forward(self, x, y):
            if x.shape[0] > 2:
                return x * 2 + y.sum()
            return x - 1

    class Checked(lib.nn.Module):
        def forward(self, x, y):
            lib._check(x.shape[0] >= 3)
            return x * 2, y + 1

    return Branch(), Checked()


def test_auto_dims_only_compared_stay_symbolic_as_torchs():
    # a branch or _check comparing a Dim.AUTO size with a number narrows its range, as torch's
    # export does; before, ember made such a dim static. Dim.AUTO ranges start at 2, and an
    # example of size 1 makes it static (torch's 0/1 specialization)
    auto = Dim.AUTO
    args = (ember.ones(4, 3), ember.ones(2))
    got = [
        export(m, args, dynamic_shapes={"x": {0: auto}, "y": {0: auto}})
        for m in _compared_sizes(ember)
    ]
    assert [str(ep.range_constraints) for ep in got] == [
        "{s77: VR[3, int_oo], s17: VR[2, int_oo]}"
    ] * 2
    assert 'x: "f32[s77, 3]"' in str(got[0])
    _close(got[0].module()(ember.ones(5, 3), ember.ones(3)), ember.full((5, 3), 5.0))
    one = export(_compared_sizes(ember)[1], (ember.ones(4, 3), ember.ones(1)),
                 dynamic_shapes={"x": {0: auto}, "y": {0: auto}})  # fmt: skip
    assert str(one.range_constraints) == "{s77: VR[3, int_oo]}"
    # a named Dim whose range is wider than the branch allows: torch's UserError and fix
    with pytest.raises(ember._dynamo.exc.UserError) as info:
        export(_compared_sizes(ember)[0], args, dynamic_shapes={"x": {0: Dim("b")}, "y": None})
    assert str(info.value).endswith("Suggested fixes:\n  b = Dim('b', min=3)")
    torch = _torch()
    targs = (torch.ones(4, 3), torch.ones(2))
    tauto = torch.export.Dim.AUTO
    for ep, m in zip(got, _compared_sizes(torch)):
        want = torch.export.export(m, targs, dynamic_shapes={"x": {0: tauto}, "y": {0: tauto}})
        assert str(ep.range_constraints) == str(want.range_constraints)
    with pytest.raises(Exception) as want:
        torch.export.export(
            _compared_sizes(torch)[0],
            targs,
            dynamic_shapes={"x": {0: torch.export.Dim("b")}, "y": None},
        )
    assert str(want.value).startswith(str(info.value))


def _tied(lib):
    class Tied(lib.nn.Module):
        def forward(self, x, y):
            return x + y

    class Branch(lib.nn.Module):  # a branch on two sizes found equal ties them too
        def forward(self, x, y):
            if x.shape[0] == y.shape[0]:
                return x * y
            return x - 1

    class Checked(lib.nn.Module):
        def forward(self, x, y):
            lib._check(x.shape[0] == y.shape[0])
            return x + 1, y * 2

    Dims = lib.export.Dim
    a, b = Dims("a"), Dims("b")
    return (
        [Tied(), Branch(), Checked()],
        [  # dynamic_shapes whose dims x + y ties into one
            {"x": {0: Dims.AUTO}, "y": {0: Dims.AUTO}},
            {"x": {0: Dims.DYNAMIC}, "y": {0: Dims.DYNAMIC}},
            {"x": {0: a}, "y": {0: Dims.AUTO}},
            {"x": {0: a}, "y": {0: a}},
        ],
        {"x": {0: a}, "y": {0: b}},
    )


def test_dims_tied_by_an_op_are_one_symbol_as_torchs():
    # x + y makes both batch dims one: torch keeps one symbol (the lowest name, s17 of y's dim
    # over s77 of x's), its module rejects unequal sizes, and two named Dims raise its UserError
    # with the fix "b = a". Before, ember kept two symbols and accepted the two named Dims, and
    # made the branch's two dims static and dropped the _check.
    (m, *compared), cases, named = _tied(ember)
    args = (ember.ones(4, 3), ember.ones(4, 3))
    got = [export(m, args, dynamic_shapes=ds) for ds in cases]
    got += [export(c, args, dynamic_shapes=cases[0]) for c in compared]
    assert [str(ep.range_constraints) for ep in got] == ["{s17: VR[2, int_oo]}"] * 3 + [
        "{s17: VR[0, int_oo]}",
        "{s17: VR[2, int_oo]}",
        "{s17: VR[2, int_oo]}",
    ]
    assert 'x: "f32[s17, 3]", y: "f32[s17, 3]"' in str(got[0])
    _close(got[1].module()(ember.ones(5, 3), ember.ones(5, 3)), ember.full((5, 3), 2.0))
    for ep in (got[0], got[-1]):  # the _check is kept as torch's guard, not dropped
        with pytest.raises(AssertionError) as unequal:
            ep.module()(ember.ones(5, 3), ember.ones(6, 3))
        assert str(unequal.value) == "Guard failed: y.size()[0] == x.size()[0]"
    with pytest.raises(ember._dynamo.exc.UserError) as info:
        export(m, args, dynamic_shapes=named)
    assert str(info.value).endswith("must always be equal.\nSuggested fixes:\n  b = a")
    torch = _torch()
    (tm, *tcompared), tcases, tnamed = _tied(torch)
    targs = (torch.ones(4, 3), torch.ones(4, 3))
    wanted = [(tm, ds) for ds in tcases] + [(c, tcases[0]) for c in tcompared]
    for ep, (module, ds) in zip(got, wanted, strict=True):
        want = torch.export.export(module, targs, dynamic_shapes=ds)
        assert str(ep.range_constraints) == str(want.range_constraints)
        assert ep.graph_module.code == want.graph_module.code.replace("torch.", "ember.")
    with pytest.raises(AssertionError) as want:
        want_ep = torch.export.export(tm, targs, dynamic_shapes=tcases[0])
        want_ep.module()(torch.ones(5, 3), torch.ones(6, 3))
    assert str(want.value) == str(unequal.value)
    with pytest.raises(Exception) as want:
        torch.export.export(tm, targs, dynamic_shapes=tnamed)
    assert str(want.value).startswith(str(info.value))
