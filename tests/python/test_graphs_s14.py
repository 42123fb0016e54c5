"""Session 14 graph-stack work, each checked against eager ember (and torch 2.13 where it is
installed): the C++ runtime's math ops (sin, cos, *_like, clamp, max over a dim ...), torch's
symbols as range_constraints keys, buffer updates kept in place until
run_decompositions, ep.module()'s refused mode switches, export of a plain function refused,
make_fx of ops that return named tuples."""

import copy

import numpy as np
import pytest

import ember

nn = ember.nn


def _close(a, b, tol=1e-5):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


# ---- 1. the C++ runtime's elementwise math, *_like factories, clamp, max/min over a dim -------

_UNARY = (
    "sin cos tan asin acos atan sinh cosh asinh atanh exp2 expm1 log2 log10 log1p erfc "
    "reciprocal sign floor ceil trunc frac square sigmoid tanh exp sqrt"
).split()


class _Unary(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.name = name

    def forward(self, x):
        return getattr(x, self.name)() + getattr(ember, self.name)(x * 0.5)


@pytest.mark.parametrize("name", _UNARY)
def test_unary_math_runs_in_cpp(tmp_path, name):
    m = _Unary(name)
    x = ember.rand(3, 5) * 0.8 + 0.1  # inside every op's domain
    ep = ember.export.export(m, (x,))
    path = str(tmp_path / "u.ember")
    ember.export.save(ep, path)
    y = ember.rand(3, 5) * 0.8 + 0.1
    _close(ember._C._export_run(path, [y])[0], m(y))


class _Docs(nn.Module):
    """What torch's export documentation models call beyond layers."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        h = self.lin(x)
        wave = h.sin() + ember.cos(h) + ember.zeros_like(h) * ember.ones_like(h)
        full = ember.full_like(h, 2, dtype=ember.float64)
        values, indices = wave.max(1)
        lo = ember.min(h, 1, True)[0]
        return (
            wave,
            full,
            values,
            indices,
            h.clamp(-0.2, 0.3),
            h.clamp(min=ember.zeros(6)),
            h.clamp_min(0.1) + h.clamp_max(0.2),
            ember.maximum(h, lo) - ember.minimum(h, lo) + ember.atan2(h, lo - 1),
            h.argmax(1) + h.argmin(dim=1, keepdim=True),
            h.amin(1) + h.max() + h.min(),
            h.std(1, keepdim=True) + h.std(),
            h.cumsum(1).tril(1).triu(-1) + h.round(decimals=1),
            ember.nn.functional.logsigmoid(h) + ember.nn.functional.selu(h),
        )


def test_docs_ops_run_in_cpp_at_another_batch(tmp_path):
    ember.manual_seed(0)
    m = _Docs().eval()
    batch = ember.export.Dim("batch", min=2, max=64)
    ep = ember.export.export(m, (ember.randn(4, 6),), dynamic_shapes={"x": {0: batch}})
    path = str(tmp_path / "d.ember")
    ember.export.save(ep, path)
    x = ember.randn(7, 6)
    with ember.no_grad():
        want = list(m(x))
    got = ember._C._export_run(path, [x])
    assert [g.dtype for g in got] == [w.dtype for w in want]
    _close(got, want)
    _close(list(ember.export.load(path).module()(x)), want)


def test_runtime_lists_the_new_ops():
    names = set(ember.export.runtime_ops())
    assert {"sin", "cos", "zeros_like", "ones_like", "full_like", "clamp", "max_dim"} <= names
    # one op set: every Python executor is a runtime op and the reverse
    assert set(vars(ember.export.ops)) == names


def test_a_wrong_dtype_literal_is_rejected_on_load(tmp_path):
    class Like(nn.Module):
        def forward(self, x):
            return ember.zeros_like(x, dtype=ember.int64)

    ep = ember.export.export(Like(), (ember.randn(2, 3),))
    path = tmp_path / "l.ember"
    ember.export.save(ep, str(path))
    data = path.read_bytes()
    size = int.from_bytes(data[16:24], "little")
    header = data[24 : 24 + size]
    bad = header.replace(b'{"dict":[["dtype","int64"]]}', b'"int64"')  # a dtype as a string
    assert bad != header
    blob = data[:16] + len(bad).to_bytes(8, "little") + bad  # the program holds no tensors
    path.write_bytes(blob + b"\0" * (-len(blob) % 64))
    with pytest.raises(RuntimeError, match="zeros_like.*argument 1 is a str literal"):
        ember.export.load(str(path))


# ---- 2. range_constraints keyed by torch's symbols --------------------------------------------


class _Shift(nn.Module):
    def forward(self, x, y):
        return x.sin() + y[1:]


class _Two(nn.Module):
    def forward(self, x, y):
        return x.sin(), y.cos() @ x.t()


def _constraints(ep):
    return {str(k): (v.lower, str(v.upper)) for k, v in ep.range_constraints.items()}


@pytest.mark.parametrize("case", ["derived", "two"])
def test_range_constraints_keys_are_torchs_symbols(case):
    torch = pytest.importorskip("torch")

    def run(lib, export_mod):
        Dim = export_mod.Dim
        if case == "derived":
            b = Dim("batch", min=2, max=1024)
            model = _Shift() if lib is ember else _torch_twin(torch, _Shift)
            shapes = {"x": {0: b}, "y": {0: b + 1}}
            args = (lib.randn(4, 3), lib.randn(5, 3))
        else:
            model = _Two() if lib is ember else _torch_twin(torch, _Two)
            shapes = {"x": {0: Dim("a")}, "y": {0: Dim("c")}}
            args = (lib.randn(4, 3), lib.randn(5, 3))
        return export_mod.export(model, args, dynamic_shapes=shapes)

    ours, theirs = run(ember, ember.export), run(torch, torch.export)
    assert [str(k) for k in ours.range_constraints] == [str(k) for k in theirs.range_constraints]
    assert [repr(v) for v in ours.range_constraints.values()] == [
        str(v) for v in theirs.range_constraints.values()
    ]
    # the printed program annotates the inputs with the same symbols
    for line in str(theirs).splitlines():
        if line.strip().startswith("def forward("):
            assert line.strip() in str(ours)


def test_range_constraints_without_torch():
    d = ember.export.Dim("d", min=2, max=32)
    ep = ember.export.export(
        _Shift(),
        (ember.randn(4, 3), ember.randn(5, 3)),
        dynamic_shapes={"x": {0: d}, "y": {0: d + 1}},
    )
    # sha256("L['x'].size()[0]") % 100 == 77, torch's name for the first input's dim
    assert ep.range_constraints == {"s77": (2, 32), "s77 + 1": (3, 33)}
    assert repr(ep.range_constraints) == "{s77: VR[2, 32], s77 + 1: VR[3, 33]}"
    x, y = ember.randn(6, 3), ember.randn(7, 3)
    _close(ep.module()(x, y), x.sin() + y[1:])  # module()'s checks still read the Dims


def _torch_twin(torch, cls):
    """The same module written against torch (the forward's body is the same text)."""

    class Twin(torch.nn.Module):
        forward = cls.forward

    # the forward reads ``ember``'s functions only through Tensor methods: no global to swap
    return Twin()


# ---- 3. buffer updates: in place until run_decompositions, as torch's training IR ------------


def _BN(lib):
    """A model updating buffers (its own counter and a train-mode BatchNorm's statistics),
    built on ember's or torch's nn."""

    class BN(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 3)
            self.bn = lib.nn.BatchNorm1d(3)
            self.register_buffer("seen", lib.zeros(3))

        def forward(self, x):
            self.seen.add_(x.sum(0)[:3])
            return self.bn(self.lin(x).relu())

    return BN()


def _signature(ep):
    outs = ep.graph_signature.output_specs
    return [(s.kind.name, s.target) for s in outs], dict(ep.graph_signature.buffers_to_mutate)


def test_buffer_updates_listed_only_after_run_decompositions():
    ember.manual_seed(0)
    m = _BN(ember).train()
    eager = copy.deepcopy(m)
    x = ember.randn(5, 4)
    ep = ember.export.export(m, (x,))
    assert ep.graph_signature.buffers_to_mutate == {}
    code = ep.graph_module.code
    assert "aten.add_.Tensor(b_seen" in code  # the in-place overload, as torch's code
    assert "aten.add_.Tensor(b_bn_num_batches_tracked, 1)" in code
    for name, b in m.named_buffers():  # exporting changed no buffer
        _close(b.float(), dict(eager.named_buffers())[name].float())
    decomposed = ep.run_decompositions()
    kinds, mutated = _signature(decomposed)
    assert kinds == [
        ("BUFFER_MUTATION", "seen"),
        ("BUFFER_MUTATION", "bn.running_mean"),
        ("BUFFER_MUTATION", "bn.running_var"),
        ("BUFFER_MUTATION", "bn.num_batches_tracked"),
        ("USER_OUTPUT", None),
    ]
    # both forms update the buffers as eager does, twice in a row
    for decompose in (False, True):
        program = ember.export.export(copy.deepcopy(eager), (x,))
        mod = (program.run_decompositions() if decompose else program).module()
        ref = copy.deepcopy(eager)
        for _ in range(2):
            y = ember.randn(5, 4)
            with ember.no_grad():
                _close(mod(y), ref(y))
        for name, b in ref.named_buffers():
            _close(dict(mod.named_buffers())[name].float(), b.float())


def test_buffer_update_signatures_match_torch():
    torch = pytest.importorskip("torch")
    ours = ember.export.export(_BN(ember).train(), (ember.randn(5, 4),))
    theirs = torch.export.export(_BN(torch).train(), (torch.randn(5, 4),))
    assert _signature(ours) == _signature(theirs)
    ours_d, theirs_d = ours.run_decompositions(), theirs.run_decompositions()
    assert _signature(ours_d)[0] == _signature(theirs_d)[0]  # kinds and targets, in order


def test_saved_program_with_in_place_updates_runs_in_cpp(tmp_path):
    ember.manual_seed(0)
    m = _BN(ember).train()
    eager = copy.deepcopy(m)
    ep = ember.export.export(m, (ember.randn(5, 4),))
    path = str(tmp_path / "bn.ember")
    ember.export.save(ep, path)
    steps = [[ember.randn(5, 4)], [ember.randn(5, 4)]]
    outs, state = ember._C._export_run_steps(path, steps)
    for (x,), got in zip(steps, outs):
        _close(got[0], eager(x))
    for name, b in eager.named_buffers():
        _close(state[name].to(b.dtype), b)


class _Counter(nn.Module):
    def __init__(self, from_input):
        super().__init__()
        self.from_input = from_input
        self.register_buffer("n", ember.zeros(()))

    def forward(self, x):
        self.n.add_(x.new_ones(()) if self.from_input else 1)
        return x + self.n


def test_unrecorded_buffer_update_is_refused_not_dropped():
    # the tracer reads buffers as tensors: add_(1) has no graph value and ran once while
    # tracing; the program would skip it (torch records it), so export refuses it by name
    m = _Counter(from_input=False)
    with pytest.raises(RuntimeError, match="updates the buffer 'n' in place"):
        ember.export.export(m, (ember.randn(2),))
    assert m.n.item() == 0  # the trace's own update was undone
    # the same update from a graph value is recorded and runs each call
    mod = ember.export.export(_Counter(from_input=True), (ember.randn(2),)).module()
    mod(ember.zeros(2))
    assert mod(ember.zeros(2)).tolist() == [2.0, 2.0]


class _Max(nn.Module):
    def forward(self, x):
        return x.max(1)


def test_multi_output_ops_return_their_items():
    ep = ember.export.export(_Max(), (ember.randn(3, 4),))
    names = [s.arg.name for s in ep.graph_signature.output_specs]
    assert names == ["getitem", "getitem_1"]
    x = ember.randn(3, 4)
    values, indices = ep.module()(x)
    _close([values, indices], list(x.max(1)))
    torch = pytest.importorskip("torch")

    class TMax(torch.nn.Module):
        def forward(self, x):
            return x.max(1)

    theirs = torch.export.export(TMax(), (torch.randn(3, 4),))
    assert names == [s.arg.name for s in theirs.graph_signature.output_specs]


# ---- 4. what torch 2.13 refuses: mode switches of ep.module(), exporting a function ---------


def test_module_refuses_mode_switches_as_torch():
    ep = ember.export.export(_Max(), (ember.randn(3, 4),))
    mod = ep.module()
    with pytest.raises(NotImplementedError, match=r"^Calling train\(\) is not supported yet.$"):
        mod.train()
    with pytest.raises(NotImplementedError, match=r"^Calling eval\(\) is not supported yet.$"):
        mod.eval()
    # unflatten's modules and traced modules switch modes, as torch's do
    assert ember.export.unflatten(ep).eval().training is False
    traced = ember.jit.trace(nn.Linear(2, 2), ember.ones(1, 2))
    assert traced.eval().training is False and traced.train().training is True


def test_module_mode_switch_errors_match_torch():
    torch = pytest.importorskip("torch")

    class TMax(torch.nn.Module):
        def forward(self, x):
            return x.max(1)

    theirs = torch.export.export(TMax(), (torch.randn(3, 4),)).module()
    ours = ember.export.export(_Max(), (ember.randn(3, 4),)).module()
    for call in ("train", "eval"):
        with pytest.raises(NotImplementedError) as t:
            getattr(theirs, call)()
        with pytest.raises(NotImplementedError) as e:
            getattr(ours, call)()
        assert str(e.value) == str(t.value)


def test_exporting_a_function_raises_as_torch():
    def fn(x):
        return x + 1

    with pytest.raises(ValueError) as e:
        ember.export.export(fn, (ember.randn(2),))
    assert str(e.value) == (
        "Expected `mod` to be an instance of `torch.nn.Module`, got <class 'function'>."
    )
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as t:
        torch.export.export(fn, (torch.randn(2),))
    assert str(t.value) == str(e.value)
    # ember.jit still traces functions (through the same capture)
    traced = ember.jit.trace(fn, ember.randn(2))
    _close(traced(ember.ones(2)), ember.ones(2) + 1)


# ---- 5. make_fx of ops returning named tuples ------------------------------------------------


@pytest.mark.parametrize("op", ["max", "sort"])
def test_make_fx_returns_named_tuple_items(op):
    from ember.fx.experimental.proxy_tensor import make_fx

    def f(x):
        return x.max(1) if op == "max" else ember.sort(x)

    x = ember.randn(3, 4)
    gm = make_fx(f)(x)
    assert gm.code.rstrip().endswith("return (getitem, getitem_1)")
    out = gm(x)
    assert type(out) is tuple
    _close(list(out), list(f(x)))
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    def g(x):
        return x.max(1) if op == "max" else torch.sort(x)

    theirs = torch_make_fx(g)(torch.randn(3, 4))
    assert theirs.code.rstrip().endswith("return (getitem, getitem_1)")
