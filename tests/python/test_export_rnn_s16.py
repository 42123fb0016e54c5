"""LSTM/GRU layers in exported programs as torch 2.13's export records them (issue 13):
``aten.zeros.default`` initial states (none when the caller passes them) and one
``aten.lstm.input``/``aten.gru.input`` over the flat weight list, read by getitem. The programs
run, decompose onto the runtime's ``rnn_layer``, save, load and run in C++ with eager's
results."""

import pytest
from test_export import _runtime_op
from test_export_aten_names import _close, _flatten
from test_export_aten_s16 import _calls

import ember


def _cases(lib):
    nn = lib.nn

    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 6, batch_first=True)
            self.fc = nn.Linear(6, 2)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.fc(out[:, -1]), h, c

    class DeepBidirectional(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 5, num_layers=2, bidirectional=True)
            self.gru = nn.GRU(10, 3, num_layers=2, bias=False, batch_first=True)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.gru(out.transpose(0, 1))

    class GivenStates(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 6)
            self.gru = nn.GRU(4, 6)

        def forward(self, x, h, c):
            a, (h1, c1) = self.lstm(x, (h, c))
            b, h2 = self.gru(x, h)
            return a + b, h1 + h2, c1

    lib.manual_seed(0)
    x = lib.linspace(-1, 1, 24).reshape(2, 3, 4)
    h = lib.linspace(0, 1, 18).reshape(1, 3, 6)
    return {
        "lstm": (Lstm().eval(), (x,)),
        "deep": (DeepBidirectional().eval(), (x,)),
        "given": (GivenStates().eval(), (x, h, h * -1)),
    }


def _pair(case):
    torch = pytest.importorskip("torch")
    tmod, targs = _cases(torch)[case]
    emod, _ = _cases(ember)[case]
    emod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tmod.state_dict().items()})
    eargs = tuple(ember.tensor(a.numpy()) for a in targs)
    return (tmod, targs, torch.export.export(tmod, targs)), (emod, eargs)


@pytest.mark.parametrize("case", ["lstm", "deep", "given"])
def test_graphs_name_what_torch_names_and_compute_torchs_values(case):
    (tmod, targs, tep), (emod, eargs) = _pair(case)
    eep = ember.export.export(emod, eargs)
    got, want = str(_calls(eep)).replace("ember.", ""), str(_calls(tep)).replace("torch.", "")
    assert got == want
    assert str(eep.graph_signature) == str(tep.graph_signature)
    want_values = [ember.tensor(t.detach().numpy()) for t in _flatten(tep.module()(*targs))]
    _close(eep.module()(*eargs), want_values)


@pytest.mark.parametrize("case", ["lstm", "deep", "given"])
def test_programs_compute_what_eager_does(case, tmp_path):
    m, args = _cases(ember)[case]
    ep = ember.export.export(m, args)
    path = str(tmp_path / "p.ember")
    ember.export.save(ep, path)
    dec = ep.run_decompositions()
    calls = [n for n in dec.graph.nodes if n.op == "call_function"]
    assert all(_runtime_op(n) for n in calls)  # the runtime's ops only (ATen names printed)
    other = tuple(a * 0.5 + 0.1 for a in args)
    for inputs in (args, other):
        want = m(*inputs)
        _close(ep.module()(*inputs), want)
        _close(dec.module()(*inputs), want)
        _close(ember.export.load(path).module()(*inputs), want)
        _close(list(ember._C._export_run(path, list(inputs))), _flatten(want))


def test_unbatched_and_projected_layers_still_export():
    """Inputs and layers torch's fused call does not cover here (an unbatched sequence, LSTM
    projections) are traced through the layer's forward, as before."""
    lstm = ember.nn.LSTM(4, 6, proj_size=3).eval()
    gru = ember.nn.GRU(4, 5).eval()
    for m, x in ((lstm, ember.ones(2, 3, 4)), (gru, ember.ones(3, 4))):
        ep = ember.export.export(m, (x,))
        assert all(
            str(n.target) not in ("aten.lstm.input", "aten.gru.input") for n in ep.graph.nodes
        )
        _close(ep.module()(x), m(x))
