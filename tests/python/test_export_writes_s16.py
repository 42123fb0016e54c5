"""Writes into intermediates inside an exported forward as torch 2.13's export records them
(issue 13): ``y[idx] = v`` / ``y[mask] = v`` as ``aten.index_put_.default`` (a number lifted to a
``c_lifted_tensor_k`` constant read through ``lift_fresh_copy``), ``y.fill_(v)`` /
``y.zero_()`` as ``fill_.Scalar``/``fill_.Tensor``/``zero_.default``, later reads reading the
write's result. The programs run, decompose onto the runtime's ops, save, load and run in C++
with eager's results, for other index values than the example's too."""

import pytest
from test_export import _runtime_op
from test_export_aten_names import _close, _flatten
from test_export_aten_s16 import _calls

import ember


def _cases(lib):
    nn = lib.nn

    class PutNumber(nn.Module):
        def forward(self, x, idx):
            y = x.clone()
            y[idx] = 0.0
            return y

    class PutMask(nn.Module):
        def forward(self, x, m):
            y = x * 2
            y[m] = 1.5
            z = x + 1
            z[m[:, 0]] = 7
            return y, z

    class PutTensor(nn.Module):
        def forward(self, x, idx, v, row):
            y = x + 1
            y[:, idx] = v
            z = x - 1
            z[idx] = row
            w = x * 3
            w[..., idx] = v[0, 0]
            return y.relu(), z, w

    class PutMaskValues(nn.Module):
        def forward(self, x, m):
            y = x.clone()
            y[m] = x[m] * 10
            z = x.clone()
            z[:, m[0]] = x[:, m[0]] + 1
            return y, z

    class Fill(nn.Module):
        def forward(self, x):
            y = x + 1
            y.fill_(2.0)
            z = x * 3
            z.zero_()
            w = x - 1
            w.fill_(x.sum())
            return y + z + w

    class PutViews(nn.Module):
        def forward(self, x, v):
            y = x + 1
            y[:, 1] = v
            y[0] = 3.0
            y[1:, 2:] = 0
            y[-1, 1:3] = v[:2] * 2
            y[2, 0] = v[2]  # a 0-d view: copy_, as torch's
            y[2, 3] = 1.5
            y[1, 1:] = v[0]  # a 0-d value into a 1-d view: fill_.Tensor
            z = y.relu()  # reads y after its writes
            z[1] = 9
            return y, z

    x = lib.linspace(-1, 1, 12).reshape(3, 4)
    m = lib.tensor([[True, False, True, False], [False, False, True, True], [True] * 4])
    return {
        "put_number": (PutNumber(), (x, lib.tensor([0, 2]))),
        "put_mask": (PutMask(), (x, m)),
        "put_tensor": (
            PutTensor(),
            (x, lib.tensor([1, -1]), lib.tensor([[5.0, 6], [7, 8], [9, 10]]), lib.arange(4.0)),
        ),
        "put_mask_values": (PutMaskValues(), (x, m)),
        "fill": (Fill(), (x,)),
        "put_views": (PutViews(), (x, lib.tensor([4.0, 5, 6]))),
    }


_CASES = ["put_number", "put_mask", "put_tensor", "put_mask_values", "fill", "put_views"]


@pytest.mark.parametrize("case", _CASES)
def test_graphs_name_what_torch_names(case):
    torch = pytest.importorskip("torch")
    tm, targs = _cases(torch)[case]
    em, eargs = _cases(ember)[case]
    tep, eep = torch.export.export(tm, targs), ember.export.export(em, eargs)
    got, want = str(_calls(eep)).replace("ember.", ""), str(_calls(tep)).replace("torch.", "")
    assert got == want
    assert str(eep.graph_signature) == str(tep.graph_signature)
    assert sorted(eep.constants) == sorted(tep.constants)
    for k, v in tep.constants.items():
        assert eep.constants[k].tolist() == v.tolist()
        assert str(eep.constants[k].dtype) == str(v.dtype)


def _other_inputs(case, args):
    """Inputs other than the example's (other indices, other masks with as many Trues)."""
    if case == "put_number":
        return (args[0] * 2, ember.tensor([-1, 1]))
    if case == "put_tensor":
        return (args[0] + 3, ember.tensor([0, 2]), args[2] * -1, args[3] + 1)
    if case in ("put_mask", "put_mask_values"):
        return (args[0] - 2, args[1].flip(1))
    if case == "put_views":
        return (args[0] * 2, args[1] - 1)
    return (args[0] * -3,)


@pytest.mark.parametrize("case", _CASES)
def test_programs_compute_what_eager_does(case, tmp_path):
    m, args = _cases(ember)[case]
    ep = ember.export.export(m, args)
    path = str(tmp_path / "p.ember")
    ember.export.save(ep, path)
    loaded = ember.export.load(path)
    dec = ep.run_decompositions()
    calls = [n for n in dec.graph.nodes if n.op == "call_function"]
    assert all(_runtime_op(n) for n in calls)  # the runtime's ops only (ATen names printed)
    for inputs in (args, _other_inputs(case, args)):
        want = m(*inputs)
        _close(ep.module()(*inputs), want)
        _close(dec.module()(*inputs), want)
        _close(loaded.module()(*inputs), want)
        _close(list(ember._C._export_run(path, list(inputs))), _flatten(want))


def test_targets_are_the_overload_objects_and_run_as_torchs():
    aten = ember.ops.aten
    m, args = _cases(ember)["put_number"]
    targets = [n.target for n in ember.export.export(m, args).graph.nodes]
    assert aten.index_put_.default in targets and aten.lift_fresh_copy.default in targets
    x = ember.zeros(2, 3)
    out = aten.index_put_.default(x, [None, ember.tensor([2])], ember.tensor(4.0))
    assert out is x and x.tolist() == [[0, 0, 4], [0, 0, 4]]
    assert aten.fill_.Scalar(x, 1).tolist() == [[1, 1, 1]] * 2
    assert aten.zero_.default(x).tolist() == [[0, 0, 0]] * 2 and x.sum().item() == 0


def test_a_view_read_after_a_write_through_another_is_not_saved():
    """``s = y[0]`` read after ``y[0] = 5`` sees the write in eager; ember's functional lowering
    would not, so such a program runs in Python and save refuses it by name."""

    class M(ember.nn.Module):
        def forward(self, x):
            y = x + 1
            s = y[0]
            y[0] = 5.0
            return s * 2

    x = ember.ones(2, 3)
    ep = ember.export.export(M(), (x,))
    _close(ep.module()(x), M()(x))
    assert M()(x).tolist() == [10.0] * 3
    with pytest.raises(RuntimeError, match="node 'fill_' calls"):
        ember.export.save(ep, "/nonexistent/never-written.ember")


def _view_writes(lib, into_input=True, copies=False):
    """Writes torch records through a view (session 17): an index after a view step, a stepped
    slice, None in the subscript, a write into an input (``copies``: tensors written through
    views too)."""

    class M(lib.nn.Module):
        def forward(self, x, idx):
            y = x * 2
            y[0, idx] = 5.0  # select, then index_put_ on the view
            z = x + 1
            z[::2] = 0.0  # a stepped slice, fill_
            if copies:  # slices of slices, copy_ of a tensor
                z[1:, 1::2] = lib.arange(4.0).reshape(2, 2)
            w = x - 1
            w[None, 1] = 3.0  # unsqueeze + select, fill_
            if copies:
                w[:, None, 2] = lib.tensor([7.0, 8.0, 9.0]).reshape(3, 1)
            if into_input:
                x[0] = 1.0  # into the input: select + fill_ on x, later reads read x
            return y, z, w, x + 1

    return M(), (lib.arange(12.0).reshape(3, 4), lib.tensor([1, 3]))


def test_writes_through_views_save_load_and_run_in_cpp(tmp_path):
    # each is lowered onto the runtime's ops from the base's value (a write into an input is
    # not: see below)
    m, (x, idx) = _view_writes(ember, into_input=False, copies=True)
    ep = ember.export.export(m, (x, idx))
    path = str(tmp_path / "p.ember")
    ember.export.save(ep, path)
    loaded = ember.export.load(path)
    for i in (idx, ember.tensor([0, -1])):
        want = m(x, i)
        _close(loaded.module()(x, i), want)
        _close(list(ember._C._export_run(path, [x, i])), _flatten(want))


def test_writes_through_views_are_torchs_ops():
    m, (x, idx) = _view_writes(ember)
    ep = ember.export.export(m, (x.clone(), idx))
    assert "setitem" not in ep.graph_module.code
    for i in (idx, ember.tensor([0, -1])):
        got_in, want_in = x.clone(), x.clone()
        got = ep.module()(got_in, i)
        _close(got, m(want_in, i))
        _close(got_in, want_in)  # the input is written as eager writes it
    # a write into an input is refused by save (the runtime writes back buffers only)
    with pytest.raises(RuntimeError, match="node 'fill_\\w*' calls"):
        ember.export.save(ep, "/nonexistent/never-written.ember")
    torch = pytest.importorskip("torch")
    tm, (tx, tidx) = _view_writes(torch)
    tep = torch.export.export(tm, (tx, tidx))
    got, want = str(_calls(ep)).replace("ember.", ""), str(_calls(tep)).replace("torch.", "")
    assert got == want
    assert str(ep.graph_signature) == str(tep.graph_signature)


def _random_model(lib):
    class Noise(lib.nn.Module):
        def forward(self, x):
            return (
                x + lib.rand_like(x) + lib.randint(0, 5, (3, 4)) + lib.randint(5, (3, 4))
                + lib.randn(3, 4, dtype=lib.float64) + lib.randn((3, 4)) + lib.rand([3, 4])
                + lib.randn_like(x, dtype=lib.float64)
            )  # fmt: skip

    return Noise()


def test_random_factories_are_nodes_as_torchs():
    torch = pytest.importorskip("torch")
    tep = torch.export.export(_random_model(torch), (torch.zeros(3, 4),))
    eep = ember.export.export(_random_model(ember), (ember.zeros(3, 4),))
    got, want = str(_calls(eep)).replace("ember.", ""), str(_calls(tep)).replace("torch.", "")
    assert got == want
    assert str(eep.graph_signature) == str(tep.graph_signature)


def test_random_factories_draw_anew_and_are_not_saved(tmp_path):
    ep = ember.export.export(_random_model(ember), (ember.zeros(3, 4),))
    assert not ep.constants  # not folded into a constant
    x = ember.zeros(3, 4)
    for m in (ep.module(), ep.run_decompositions().module()):
        a, b = m(x), m(x)
        assert a.dtype == ember.float64 and a.shape == (3, 4) and bool((a != b).any())
    with pytest.raises(RuntimeError, match="node 'rand_like'.*random numbers"):
        ember.export.save(ep, str(tmp_path / "p.ember"))
    # the draws follow the global generator, as eager's
    m = ep.module()
    ember.manual_seed(3)
    first = m(x)
    ember.manual_seed(3)
    assert ember.equal(m(x), first)


def test_onnx_export_of_a_program_writing_intermediates(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    for case in ("put_number", "put_mask", "put_views", "fill"):
        m, args = _cases(ember)[case]
        ep = ember.export.export(m, args)
        path = str(tmp_path / f"{case}.onnx")
        ember.onnx.export(ep, args, path)
        sess = ort.InferenceSession(path)
        feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)}
        got = [ember.tensor(v) for v in sess.run(None, feeds)]
        _close(got, _flatten(m(*args)))
