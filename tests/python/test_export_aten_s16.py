"""Exported graphs as torch 2.13's export shows them, beyond session 15's table (issue 13):
tensor indexing as ``aten.index.Tensor``, ``max.dim``/``min.dim`` read by getitem, var/std by
the overload the call picks, the ``*_like`` factories, and factory calls inside forward
(``torch.zeros(n, 4)``) recorded as nodes; the graphs still run, decompose, save and run in C++
(factories become constant inputs there); ``.to()`` calls as torch's aten.to overloads after
``_assert_tensor_metadata`` nodes."""

import operator
import re

import pytest
from test_export_aten_names import _close, _flatten

import ember


def _cases(lib):
    nn = lib.nn

    class Index(nn.Module):
        def forward(self, x, idx, m1):
            return (
                x[idx], x[:, idx], x[0, idx], x[1:, idx], x[idx, 1:], x[..., idx], x[None, idx],
                x[idx, idx], x[:, :, idx], x[idx][:, 0], x[idx, None], x[m1, :, 1], x[m1],
            )  # fmt: skip

    class Reductions(nn.Module):
        def forward(self, x):
            v, i = x.max(dim=1)
            return (
                v + lib.min(x, 1).values + i.float() + x.min(dim=1).indices,
                x.var(), x.var(0), x.var(unbiased=False), x.var(1, False),
                x.std(dim=1, unbiased=False, keepdim=True), lib.std(x, correction=2),
                x.std([0, 1]), lib.var(x, dim=None, correction=1), lib.max(x, 1, True)[0],
                lib.zeros_like(x, dtype=lib.int64), lib.ones_like(x), lib.full_like(x, 7),
                lib.empty_like(x) * 0,
            )  # fmt: skip

    class Factories(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x):
            a = lib.zeros(x.shape[0], 4) + lib.zeros((3, 4), dtype=lib.float64).float()
            b = lib.arange(4) + lib.arange(1, 5) + lib.arange(0, 8, 2) + lib.ones([3, 4])
            c = lib.full((3, 4), 2.0) + lib.eye(4)[0] + lib.linspace(0, 1, 4)
            d = lib.ones(4, dtype=lib.int32) + lib.arange(4.0).long()
            return self.l(x) + a + b + c + d

    class Logic(nn.Module):
        def forward(self, x, y):
            m = (x > 0) & (y <= x) | ~(x == 1)
            n = lib.logical_and(x != y, x < 0.5) ^ (x >= y)
            return lib.where(m, x, y), n.logical_not(), lib.gt(x, y), lib.bitwise_and(m, n)

    class InPlace(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x):
            y = self.l(x)
            y.add_(1)
            y = lib.relu(y).mul_(2)
            return lib.nn.functional.relu(y, inplace=True) + y.sigmoid_()

    class To(nn.Module):
        def forward(self, x, y):
            z = x.float()  # x itself: later reads of x read this node (torch's aliasing)
            a = x.to("cpu") * 2
            return z + 1, a, x.to(y), x.half().float(), x.type(lib.float64), x.to(dtype=lib.int32)

    g = lib.Generator().manual_seed(0)
    x3 = lib.randn(5, 4, 6, generator=g)
    idx, m1 = lib.tensor([0, 2]), lib.tensor([True, False, True, True, False])
    return {
        "index": (Index(), (x3, idx, m1)),
        "reductions": (Reductions(), (lib.randn(3, 4, generator=g),)),
        "factories": (Factories(), (lib.randn(3, 4, generator=g),)),
        "logic": (Logic(), (lib.randn(3, 4, generator=g), lib.randn(3, 4, generator=g))),
        "in_place": (InPlace(), (lib.randn(3, 4, generator=g),)),
        "to": (To(), (lib.randn(3, 4, generator=g), lib.randn(2, dtype=lib.float64))),
    }


def _calls(ep, skip=("_assert", "sym_size", "built-in function ge", "built-in function le")):
    """(name, target, args, kwargs) of each call; torch's metadata and range asserts (of a
    mask's data-dependent size, which ember's graphs keep static) left out by default."""

    def show(a):
        if hasattr(a, "op") and hasattr(a, "name"):
            return a.name
        if isinstance(a, (list, tuple)):
            return type(a)(show(v) for v in a)
        kind = type(a).__name__
        return str(a).split(".")[-1] if "dtype" in kind or "layout" in kind else str(a)

    return [
        (n.name, str(n.target), show(n.args), {k: show(v) for k, v in n.kwargs.items()})
        for n in ep.graph.nodes
        if n.op == "call_function" and not any(s in str(n.target) for s in skip)
    ]


def _metas(ep):
    out = []
    for n in ep.graph.nodes:
        v = n.meta.get("val")
        if hasattr(v, "dtype") and n.op != "output":
            out.append((n.name, [int(s) for s in v.shape], str(v.dtype).split(".")[-1]))
    return out


def _pair(case):
    torch = pytest.importorskip("torch")
    tmod, targs = _cases(torch)[case]
    emod, _ = _cases(ember)[case]
    emod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmod.state_dict().items()})
    eargs = tuple(ember.tensor(a.numpy()) for a in targs)
    return torch.export.export(tmod, targs), ember.export.export(emod, eargs)


@pytest.mark.parametrize("case", ["index", "reductions", "factories", "logic", "in_place"])
def test_graphs_name_what_torch_names(case):
    tep, eep = _pair(case)
    got, want = str(_calls(eep)).replace("ember.", ""), str(_calls(tep)).replace("torch.", "")
    assert got == want
    assert str(eep.graph_signature) == str(tep.graph_signature)


def test_conversions_follow_torchs_metadata_asserts_and_aliasing(tmp_path):
    # torch 2.13 records each .to() as an aten.to overload after an _assert_tensor_metadata
    # node, and reads a tensor a no-op .to() returned through that node from then on
    tep, eep = _pair("to")
    got = str(_calls(eep, skip=())).replace("ember.", "")
    assert got == str(_calls(tep, skip=())).replace("torch.", "")
    assert str(eep.graph_signature) == str(tep.graph_signature)
    names = [n.name for n in eep.run_decompositions().graph.nodes]
    assert names.count("_assert_tensor_metadata") == 1 and "_assert_tensor_metadata_6" in names
    # the assert runs: a program fed another dtype than it was exported with stops at it
    m, (x, y) = _cases(ember)["to"]
    with pytest.raises(RuntimeError, match=r"Tensor dtype mismatch! Expected: Float, Got: double"):
        eep.module()(x.double(), y)
    check = ember.ops.aten._assert_tensor_metadata.default
    assert check(x, dtype=ember.float32, device=ember.device("cpu"), layout=ember.strided) is None
    with pytest.raises(RuntimeError, match=r"sizes mismatch! Expected: \[4\], Got: \[3, 4\]"):
        check(x, [4])


@pytest.mark.parametrize("case", ["reductions", "factories"])
def test_example_values_are_torchs(case):
    tep, eep = _pair(case)
    assert _metas(eep) == _metas(tep)


def test_targets_are_the_overload_objects():
    aten = ember.ops.aten
    m, args = _cases(ember)["index"]
    targets = {n.target for n in ember.export.export(m, args).graph.nodes}
    assert aten.index.Tensor in targets and operator.getitem not in targets
    m, args = _cases(ember)["factories"]
    targets = {n.target for n in ember.export.export(m, args).graph.nodes}
    assert {aten.zeros.default, aten.arange.start_step, aten.full.default} <= targets
    # the overloads run as torch's do
    _close(aten.index.Tensor(args[0], [None, ember.tensor([1, 0])]), args[0][:, [1, 0]])
    _close(
        aten.zeros.default([2, 3], device=ember.device("cpu"), pin_memory=False), ember.zeros(2, 3)
    )
    assert aten.arange.start_step(0, 8, 2).tolist() == [0, 2, 4, 6]
    m, args = _cases(ember)["logic"]
    code = ember.export.export(m, args).graph_module.code
    assert "and_1 = ember.ops.aten.__and__.Tensor(gt, le)" in code  # a & b, runnable
    assert ember.ops.aten.__and__.Tensor(args[0] > 0, args[1] > 0).dtype == ember.bool


@pytest.mark.parametrize("case", ["index", "reductions", "factories", "logic", "in_place", "to"])
def test_graphs_compute_what_eager_does(case, tmp_path):
    m, args = _cases(ember)[case]
    want = m(*args)
    ep = ember.export.export(m, args)
    _close(ep.module()(*args), want)
    dec = ep.run_decompositions()
    _close(dec.module()(*args), want)
    path = str(tmp_path / "p.ember")
    ember.export.save(ep, path)
    _close(ember.export.load(path).module()(*args), want)
    _close(list(ember._C._export_run(path, list(args))), _flatten(want))


def test_factories_become_constant_inputs_when_decomposed():
    m, args = _cases(ember)["factories"]
    ep = ember.export.export(m, args)
    kinds = [s.kind.name for s in ep.graph_signature.input_specs]
    assert kinds == ["PARAMETER", "PARAMETER", "USER_INPUT"]  # nodes, not constants
    dec = ep.run_decompositions()
    specs = dec.graph_signature.input_specs
    constants = [s for s in specs if s.kind.name == "CONSTANT_TENSOR"]
    assert [s.target for s in constants][:2] == ["lifted_tensor_0", "lifted_tensor_1"]
    assert specs[-1].kind.name == "USER_INPUT"
    _close(dec.tensor_constants["lifted_tensor_0"], ember.zeros(3, 4))
    assert not any("zeros" in str(n.target) for n in dec.graph.nodes)
    # the captured program is unchanged by decomposing it
    assert any(n.target is ember.ops.aten.zeros.default for n in ep.graph.nodes)


def test_symbolic_trace_keeps_factory_values_as_torch_fx_does():
    torch = pytest.importorskip("torch")

    def build(lib):
        class Shift(lib.nn.Module):
            def forward(self, x):
                return x + lib.arange(4) + lib.zeros(3, 4)

        return Shift()

    def targets(lib):
        gm = lib.fx.symbolic_trace(build(lib))
        return [str(n.target).split(" ")[-1] for n in gm.graph.nodes if n.op == "call_function"]

    assert targets(ember) == targets(torch) == ["add>", "add>"]
    x = ember.randn(3, 4)
    _close(ember.fx.symbolic_trace(build(ember))(x), build(ember)(x))


def _comments(ep):
    """print(ep)'s stack-trace comments, a layer's own file reduced to its name (ember's and
    torch's layers have their own paths and lines)."""
    out = []
    for line in str(ep).splitlines():
        line = line.strip()
        if line.startswith("# File:"):
            layer = re.search(r"nn/modules/(\w+\.py):\d+ in (\w+)", line)
            out.append(f"layer {layer.group(1)} {layer.group(2)}" if layer else line)
        elif line.startswith("#"):
            out.append(line)
    return out


@pytest.mark.parametrize("case", ["index", "factories"])
def test_printed_program_shows_torchs_stack_trace_comments(case):
    tep, eep = _pair(case)
    assert _comments(eep) == _comments(tep)
    assert any(c.startswith("layer linear.py") for c in _comments(eep)) == (case == "factories")
    # the innermost frame of each node is torch's (the same user line)
    torch_nodes = {n.name: n for n in tep.graph.nodes}
    for e in eep.graph.nodes:
        t = torch_nodes[e.name]
        if e.op == "call_function" and "nn/modules" not in (t.meta.get("stack_trace") or "/"):
            assert e.meta.get("stack_trace") == t.meta.get("stack_trace"), e.name


def test_onnx_export_of_a_program_updating_intermediates_in_place():
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    m, (x,) = _cases(ember)["in_place"]
    ep = ember.export.export(m, (x,))
    assert "aten.add_.Tensor" in [str(n.target) for n in ep.graph.nodes]
    program = ember.onnx.export(ep, (x,))
    onnx.checker.check_model(program.model_proto)
    (got,) = program(x)
    _close(got, m(x))
