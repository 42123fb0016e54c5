"""The ember fixes that the session-14 real programs (tests/python/torch_scripts/, listed in
test_real_programs.py) led to, each checked on its own, against torch where it is installed."""

import io
import pickle
import warnings

import pytest

import ember
from ember import nn
from ember.nn import functional as F

_INFERENCE_MSG = "Setting requires_grad=True on inference tensor outside InferenceMode"


def test_requires_grad_on_inference_tensors_is_refused_on_every_path():
    with ember.inference_mode():
        t = ember.ones(2)
        made = ember.ones(2, requires_grad=True)  # inside the mode: allowed
    assert made.requires_grad and made.is_inference()
    for turn_on in (
        lambda: t.requires_grad_(),
        lambda: setattr(t, "requires_grad", True),
        lambda: nn.Parameter(t),
        lambda: t.detach().requires_grad_(),  # a detached inference tensor is one too
    ):
        with pytest.raises(RuntimeError, match=_INFERENCE_MSG):
            turn_on()
    assert not t.requires_grad
    t.requires_grad_(False)
    copy = ember.tensor(t, requires_grad=True)  # a copy is a normal tensor
    assert copy.requires_grad and not copy.is_inference()
    with ember.inference_mode():
        assert nn.Parameter(t).requires_grad


def test_requires_grad_on_inference_tensors_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ember):
        with lib.inference_mode():
            t = lib.ones(2)
        with pytest.raises(RuntimeError, match=_INFERENCE_MSG):
            lib.nn.Parameter(t)


def test_tensor_class_is_seen_in_the_package():
    assert repr(type(ember.ones(1))) == "<class 'ember.Tensor'>"
    assert ember.Tensor.__module__ == "ember"
    assert pickle.loads(pickle.dumps(ember.Tensor)) is ember.Tensor
    p = nn.Parameter(ember.ones(2))
    assert isinstance(p, ember.Tensor) and type(p).__module__.startswith("ember.nn")
    back = pickle.loads(pickle.dumps(p))
    assert type(back) is nn.Parameter and back.tolist() == [1.0, 1.0]

    class Sub(ember.Tensor):
        pass

    s = ember.ones(2).as_subclass(Sub)
    assert isinstance(s, ember.Tensor) and type(s) is Sub
    assert repr(s) == "Sub([1., 1.])"


def test_tensor_class_name_in_messages_matches_torch():
    torch = pytest.importorskip("torch")
    assert repr(type(ember.ones(1))).replace("ember", "torch") == repr(type(torch.ones(1)))


def test_as_subclass_of_a_tensor_requiring_grad_is_an_alias():
    class Sub(ember.Tensor):
        pass

    x = ember.ones(3, requires_grad=True)
    s = x.as_subclass(Sub)
    assert type(s) is Sub and s.grad_fn.name() == "AliasBackward0"
    assert s._base is not None and s._base.data_ptr() == x.data_ptr() and not s.is_leaf
    (s * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    plain = ember.ones(2).as_subclass(Sub)
    assert plain.grad_fn is None and plain._base is None


def test_as_subclass_node_matches_torch():
    torch = pytest.importorskip("torch")

    class TSub(torch.Tensor):
        pass

    t = torch.ones(2, requires_grad=True).as_subclass(TSub)
    e = ember.ones(2, requires_grad=True).as_subclass(type("ESub", (ember.Tensor,), {}))
    assert t.grad_fn.name() == e.grad_fn.name()


def _lists():
    return [ember.tensor([1.0, -2.0]), ember.tensor([[0.5, 4.0], [9.0, 1.0]])]


def test_foreach_binary_forms():
    a = _lists()
    assert [t.tolist() for t in ember._foreach_add(a, 1)] == [
        [2.0, -1.0],
        [[1.5, 5.0], [10.0, 2.0]],
    ]
    out = ember._foreach_add(a, a, alpha=2)
    assert isinstance(out, tuple) and out[0].tolist() == [3.0, -6.0]
    assert ember._foreach_mul(a, [2, 3])[1].tolist() == [[1.5, 12.0], [27.0, 3.0]]
    assert ember._foreach_div(a, ember.tensor(2.0))[0].tolist() == [0.5, -1.0]
    assert ember._foreach_sub(a, a)[1].abs().sum().item() == 0.0
    assert ember._foreach_maximum(a, 0.0)[0].tolist() == [1.0, 0.0]
    assert ember._foreach_pow(2.0, a)[0].tolist() == [2.0, 0.25]
    same = ember._foreach_mul_(a, 2)
    assert same is a and a[0].tolist() == [2.0, -4.0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        ember._foreach_mul(a, 2, alpha=3)


def test_foreach_ema_update_and_norms():
    ema, new = _lists(), [t * 3 for t in _lists()]
    ember._foreach_mul_(ema, 0.9)
    ember._foreach_add_(ema, new, alpha=0.1)
    for e, n, o in zip(ema, new, _lists()):
        assert ember.allclose(e, 0.9 * o + 0.1 * n)
    norms = ember._foreach_norm(_lists())
    assert [round(n.item(), 5) for n in norms] == [round(5**0.5, 5), round(98.25**0.5, 5)]
    lerped = ember._foreach_lerp(_lists(), new, 0.5)
    assert lerped[0].tolist() == [2.0, -4.0]
    acc = ember._foreach_addcmul(_lists(), _lists(), _lists(), [1, 2])
    assert acc[0].tolist() == [2.0, 2.0]
    zeroed = ember._foreach_zero_(_lists())
    assert all(t.abs().sum().item() == 0 for t in zeroed)
    sq = ember._foreach_sqrt([ember.tensor([4.0, 9.0])])
    assert sq[0].tolist() == [2.0, 3.0]


def test_foreach_errors():
    a = _lists()
    with pytest.raises(RuntimeError, match="Tensor list must have at least one tensor."):
        ember._foreach_add([], 1)
    with pytest.raises(RuntimeError, match="got 2 and 1"):
        ember._foreach_add(a, [ember.ones(2)])
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        ember._foreach_mul(a, [1.0])


def test_foreach_matches_torch():
    torch = pytest.importorskip("torch")

    def run(lib):
        a = [lib.tensor([1.0, -2.0, 0.5]), lib.tensor([[3.0, 4.0]])]
        b = [lib.tensor([0.5, 0.25, 2.0]), lib.tensor([[1.0, -1.0]])]
        rows = [
            lib._foreach_add(a, b, alpha=0.5),
            lib._foreach_addcdiv(a, a, b, 0.1),
            lib._foreach_clamp_min(a, 0.0),
            lib._foreach_exp(a),
            lib._foreach_norm(a, 1),
            lib._foreach_max(a),
            lib._foreach_lerp(a, b, [0.2, 0.8]),
        ]
        lib._foreach_sub_(a, b)
        return [[t.tolist() for t in r] for r in rows] + [[t.tolist() for t in a]]

    got, want = run(ember), run(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert _flat(g) == pytest.approx(_flat(w), rel=1e-6)


def _flat(rows):
    out = []
    for r in rows:
        if isinstance(r, list):
            out.extend(_flat(r))
        else:
            out.append(r)
    return out


def _encoder(norm_first=False):
    layer = nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first
    )
    with ember.no_grad():
        for i, p in enumerate(layer.parameters()):
            p.copy_(ember.sin(ember.arange(p.numel(), dtype=ember.float32) + i).view_as(p) * 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)


def _batch(lib):
    src = lib.cos(lib.arange(2 * 4 * 8, dtype=lib.float32)).view(2, 4, 8)
    pad = lib.tensor([[False] * 4, [False, False, True, True]])
    return src, pad


def test_encoder_fast_path_zeroes_padded_positions():
    enc = _encoder().eval()
    src, pad = _batch(ember)
    with ember.inference_mode():
        out = enc(src, src_key_padding_mask=pad)
        alone = enc(src[1:, :2])
    assert out[1, 2:].abs().sum().item() == 0.0
    assert ember.allclose(out[1, :2], alone[0], atol=1e-5)
    enc.train()  # training, or a right-aligned mask, keeps the padded rows' values
    with ember.no_grad():
        assert enc(src, src_key_padding_mask=pad)[1, 2:].abs().sum().item() > 0
    enc.eval()
    with ember.no_grad():
        assert enc(src, src_key_padding_mask=pad.flip(1))[1, :2].abs().sum().item() > 0
    ember.backends.mha.set_fastpath_enabled(False)
    try:
        with ember.no_grad():
            assert enc(src, src_key_padding_mask=pad)[1, 2:].abs().sum().item() > 0
    finally:
        ember.backends.mha.set_fastpath_enabled(True)
    assert ember.backends.mha.get_fastpath_enabled()


def test_encoder_says_why_it_has_no_fast_path():
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True)
    with pytest.warns(
        UserWarning, match="use_nested_tensor is False because encoder_layer.norm_first"
    ):
        enc = nn.TransformerEncoder(layer, 1)
    assert enc.use_nested_tensor is False
    assert nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).use_nested_tensor is False


def test_encoder_fast_path_matches_torch():
    torch = pytest.importorskip("torch")
    enc = _encoder().eval()
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    t_enc = torch.nn.TransformerEncoder(t_layer, 2, enable_nested_tensor=True).eval()
    t_enc.load_state_dict({k: torch.tensor(v.tolist()) for k, v in enc.state_dict().items()})
    src, pad = _batch(ember)
    t_src, t_pad = _batch(torch)
    with ember.inference_mode(), torch.inference_mode():
        got = enc(src, src_key_padding_mask=pad)
        want = t_enc(t_src, src_key_padding_mask=t_pad)
    assert ember.allclose(got, ember.tensor(want.tolist()), atol=1e-5)


def test_weights_only_refusal_has_torchs_class_name():
    import argparse

    buf = io.BytesIO()
    ember.save({"args": argparse.Namespace(lr=0.1)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as info:
        ember.load(buf, weights_only=True)
    assert type(info.value).__name__ == "UnpicklingError"
    assert isinstance(info.value, RuntimeError)


def test_class_target_shape_is_checked_before_its_dtype():
    logits = ember.zeros(3, 5)
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.cross_entropy(logits, ember.rand(3, 4))
    with pytest.raises(RuntimeError, match="Expected target size \\[3, 2\\], got \\[3, 2, 2\\]"):
        F.cross_entropy(ember.zeros(3, 5, 2), ember.rand(3, 2, 2))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
        F.nll_loss(logits, ember.rand(3))


def test_topk_ties_pick_torchs_positions():
    ties = ember.tensor([1.0, 3.0, 3.0, 2.0, 3.0])
    assert ties.topk(2).indices.tolist() == [2, 4]
    scores = ember.tensor([[0.1, 0.5, 0.2, 0.05, 0.15], [0.3, 0.1, 0.1, 0.4, 0.1]])
    assert scores.topk(2, largest=False).indices.tolist() == [[3, 0], [2, 4]]
    # A long row takes the partial-sort path; values are the same either way.
    long = ember.cat([ember.zeros(200), ember.ones(3)])
    top = long.topk(2)
    assert top.values.tolist() == [1.0, 1.0] and set(top.indices.tolist()) <= {200, 201, 202}
    nan_first = ember.tensor([1.0, float("nan"), 2.0]).topk(1)
    assert nan_first.indices.tolist() == [1]


def test_topk_ties_match_torch():
    torch = pytest.importorskip("torch")
    rows = [
        [1.0, 3.0, 3.0, 2.0, 3.0],
        [0.3, 0.1, 0.1, 0.4, 0.1, 0.1, 0.4, 0.4],
        [float(i % 3) for i in range(40)],
        [float(i % 2) for i in range(300)],
    ]
    for row in rows:
        for k in (1, 2, 3):
            for largest in (True, False):
                for is_sorted in (True, False):
                    kw = {"largest": largest, "sorted": is_sorted}
                    got = ember.tensor(row).topk(k, **kw).indices.tolist()
                    want = torch.tensor(row).topk(k, **kw).indices.tolist()
                    assert got == want, (row[:8], k, kw)
