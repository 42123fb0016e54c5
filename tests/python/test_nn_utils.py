"""ember.nn.utils: clip_grad_norm_/clip_grad_value_, parameters_to_vector, weight_norm,
spectral_norm and parametrize, as PyTorch's.
"""

import copy
import math
import pickle

import numpy as np
import pytest
from test_nn_module import Affine, Net

import ember
import ember.nn as nn

# ---- utils -------------------------------------------------------------------------------------


def _params_with_grads(values):
    ps = []
    for v in values:
        p = nn.Parameter(ember.zeros(len(v)))
        p.grad = ember.tensor(v)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm(norm_type):
    vals = [[3.0, -4.0], [12.0]]
    ps = _params_with_grads(vals)
    flat = np.array([3.0, -4.0, 12.0])
    total = (
        np.abs(flat).max()
        if norm_type == math.inf
        else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    )
    out = nn.utils.clip_grad_norm_(ps, max_norm=1.0, norm_type=norm_type)
    assert abs(out.item() - total) < 1e-4
    coef = min(1.0, 1.0 / (total + 1e-6))
    np.testing.assert_allclose(ps[0].grad.numpy(), np.array([3.0, -4.0]) * coef, rtol=1e-5)
    # Below the limit nothing changes.
    ps = _params_with_grads(vals)
    nn.utils.clip_grad_norm_(ps, max_norm=100.0, norm_type=norm_type)
    np.testing.assert_allclose(ps[1].grad.numpy(), [12.0])


def test_clip_grad_norm_edge_cases():
    assert nn.utils.clip_grad_norm_([nn.Parameter(ember.ones(2))], 1.0).item() == 0.0
    p = _params_with_grads([[float("inf"), 1.0]])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    single = _params_with_grads([[6.0, 8.0]])[0]
    assert nn.utils.clip_grad_norm_(single, 5.0).item() == pytest.approx(10.0)
    np.testing.assert_allclose(single.grad.numpy(), [3.0, 4.0], rtol=1e-5)


def test_clip_grad_value_and_vector_conversion():
    ps = _params_with_grads([[3.0, -4.0], [0.5]])
    nn.utils.clip_grad_value_(ps, 1.0)
    np.testing.assert_array_equal(ps[0].grad.numpy(), [1.0, -1.0])
    a = nn.Parameter(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    b = nn.Parameter(ember.tensor([5.0]))
    v = nn.utils.parameters_to_vector([a, b])
    np.testing.assert_array_equal(v.detach().numpy(), [1, 2, 3, 4, 5])
    nn.utils.vector_to_parameters(ember.tensor([9.0, 8, 7, 6, 5]), [a, b])
    np.testing.assert_array_equal(a.detach().numpy(), [[9, 8], [7, 6]])
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters([1.0], [a])


def test_pad_and_pack_sequences():
    from ember.nn.utils import rnn as rnn_utils

    seqs = [ember.tensor([1.0, 2.0, 3.0]), ember.tensor([4.0]), ember.tensor([5.0, 6.0])]
    padded = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1)
    np.testing.assert_array_equal(padded.numpy(), [[1, 2, 3], [4, -1, -1], [5, 6, -1]])
    assert rnn_utils.pad_sequence(seqs).shape == (3, 3)
    left = rnn_utils.pad_sequence(seqs, batch_first=True, padding_side="left")
    np.testing.assert_array_equal(left.numpy()[1], [0, 0, 4])
    packed = rnn_utils.pack_padded_sequence(
        padded, [3, 1, 2], batch_first=True, enforce_sorted=False
    )
    np.testing.assert_array_equal(packed.data.numpy(), [1, 5, 4, 2, 6, 3])
    np.testing.assert_array_equal(packed.batch_sizes.numpy(), [3, 2, 1])
    out, lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True)
    np.testing.assert_array_equal(out.numpy(), [[1, 2, 3], [4, 0, 0], [5, 6, 0]])
    np.testing.assert_array_equal(lengths.numpy(), [3, 1, 2])
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(padded, [1, 3, 2], batch_first=True)
    back = rnn_utils.unpack_sequence(rnn_utils.pack_sequence(seqs, enforce_sorted=False))
    assert [b.tolist() for b in back] == [s.tolist() for s in seqs]


def test_state_dict_pre_post_hooks_and_load_pre_hook():
    a = Affine(2, 2)
    seen = []
    a.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(("pre", prefix)))
    a.register_state_dict_post_hook(lambda m, sd, prefix, meta: seen.append(("post", list(sd))))
    sd = a.state_dict(prefix="p.")
    assert seen == [("pre", "p."), ("post", ["p.weight", "p.bias", "p.calls"])]

    def rename(module, state_dict, prefix, *rest):
        if prefix + "w" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

    b = Affine(2, 2)
    b.register_load_state_dict_pre_hook(rename)
    sd = {"w": ember.ones(2, 2), "bias": ember.zeros(2), "calls": ember.zeros(())}
    b.load_state_dict(sd)
    np.testing.assert_array_equal(b.weight.detach().numpy(), np.ones((2, 2)))


def test_pickle_module_roundtrip():
    net = Net()
    net.register_forward_hook(print)
    back = pickle.loads(pickle.dumps(nn.Sequential(Affine(2, 3), nn.Flatten())))
    assert isinstance(back[0].weight, nn.Parameter) and back[0].weight.requires_grad
    assert list(back.state_dict()) == ["0.weight", "0.bias", "0.calls"]
    assert back[0]._non_persistent_buffers_set == {"scratch"}


def test_sequential_arithmetic_and_pop():
    s = nn.Sequential(nn.Identity(), nn.Flatten())
    assert len(s * 2) == 4 and len(2 * s) == 4
    with pytest.raises(ValueError, match="Non-positive multiplication factor"):
        s * 0
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        s + nn.Identity()
    s += nn.Sequential(nn.Identity())
    assert len(s) == 3
    assert isinstance(s.pop(1), nn.Flatten) and len(s) == 2
    ml = nn.ModuleList([nn.Identity()]) + nn.ModuleList([nn.Flatten()])
    assert [type(m) for m in ml] == [nn.Identity, nn.Flatten]


def test_pack_padded_sequence_matches_torch():
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 3, 2)
    for lengths, enforce in (([4, 3, 1], True), ([2, 4, 3], False)):
        t = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce)
        e = nn.utils.rnn.pack_padded_sequence(
            ember.tensor(x.numpy()), lengths, enforce_sorted=enforce
        )
        np.testing.assert_array_equal(e.data.numpy(), t.data.numpy())
        np.testing.assert_array_equal(e.batch_sizes.numpy(), t.batch_sizes.numpy())
        if t.sorted_indices is None:
            assert e.sorted_indices is None and e.unsorted_indices is None
        else:
            np.testing.assert_array_equal(e.sorted_indices.numpy(), t.sorted_indices.numpy())
            np.testing.assert_array_equal(e.unsorted_indices.numpy(), t.unsorted_indices.numpy())
        tp, tl = torch.nn.utils.rnn.pad_packed_sequence(t, batch_first=True, total_length=5)
        ep, el = nn.utils.rnn.pad_packed_sequence(e, batch_first=True, total_length=5)
        np.testing.assert_array_equal(ep.numpy(), tp.numpy())
        np.testing.assert_array_equal(el.numpy(), tl.numpy())


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(dim):
    a = Affine(3, 4)
    w = a.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.weight_norm(a, dim=dim)
    assert [n for n, _ in a.named_parameters()] == ["bias", "weight_g", "weight_v"]
    if dim is None:
        g = np.sqrt((w**2).sum())
        assert a.weight_g.shape == ()
    else:
        g = np.sqrt((w**2).sum(axis=1 - dim, keepdims=True))
        assert a.weight_g.shape == g.shape
    np.testing.assert_allclose(a.weight_g.detach().numpy(), g, rtol=1e-5)
    with ember.no_grad():
        a.weight_g.mul_(2)
    x = ember.randn(5, 3)
    np.testing.assert_allclose(a(x).detach().numpy(), x.numpy() @ (2 * w), rtol=1e-4, atol=1e-5)
    a(x).sum().backward()
    assert a.weight_g.grad is not None and a.weight_v.grad is not None
    with (
        pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"),
        pytest.warns(FutureWarning),
    ):
        nn.utils.weight_norm(a, dim=dim)
    nn.utils.remove_weight_norm(a)
    assert isinstance(a.weight, nn.Parameter)
    np.testing.assert_allclose(a.weight.detach().numpy(), 2 * w, rtol=1e-5)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(a)


def test_sdpa_kernel_context():
    from ember.nn.attention import SDPBackend, sdpa_kernel

    assert SDPBackend.FLASH_ATTENTION == 1 and SDPBackend.MATH == 0
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]) as state:
        assert state == {}
    with sdpa_kernel(SDPBackend.MATH):
        pass
    with pytest.raises(AssertionError, match="got str"):
        with sdpa_kernel("math"):
            pass


def test_spectral_norm_converges_to_largest_singular_value():
    ember.manual_seed(0)
    a = Affine(6, 4)
    w = a.weight.detach().numpy().copy()
    nn.utils.spectral_norm(a, n_power_iterations=50)
    assert [n for n, _ in a.named_parameters()] == ["bias", "weight_orig"]
    assert list(a.state_dict()) == ["bias", "weight_orig", "calls", "weight_u", "weight_v"]
    x = ember.randn(3, 6)
    out = a(x)
    sigma = np.linalg.svd(w, compute_uv=False)[0]
    np.testing.assert_allclose(a.weight.detach().numpy(), w / sigma, rtol=1e-4)
    out.sum().backward()
    assert a.weight_orig.grad is not None
    a.eval()
    u = a.weight_u.clone()
    a(x)
    np.testing.assert_array_equal(a.weight_u.numpy(), u.numpy())
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(a)
    nn.utils.remove_spectral_norm(a)
    assert isinstance(a.weight, nn.Parameter) and "weight_u" not in a._buffers
    np.testing.assert_allclose(a.weight.detach().numpy(), w / sigma, rtol=1e-4)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.spectral_norm(Affine(2, 2), n_power_iterations=0)


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)


class Scale(nn.Module):
    def forward(self, x):
        return x * 2

    def right_inverse(self, x):
        return x / 2


class Double(nn.Module):
    def forward(self, x):
        return x * 2


def test_register_parametrization_and_remove():
    P = nn.utils.parametrize
    a = Affine(3, 3)
    w = a.weight.detach().numpy().copy()
    P.register_parametrization(a, "weight", Symmetric())
    assert type(a).__name__ == "ParametrizedAffine" and P.is_parametrized(a, "weight")
    assert P.type_before_parametrizations(a) is Affine
    sym = np.triu(w) + np.triu(w, 1).T
    np.testing.assert_allclose(a.weight.detach().numpy(), sym)
    assert [n for n, _ in a.named_parameters()] == ["bias", "parametrizations.weight.original"]
    a(ember.randn(2, 3)).sum().backward()
    g = a.parametrizations.weight.original.grad.numpy()
    assert g.shape == (3, 3) and np.allclose(np.tril(g, -1), 0)
    P.register_parametrization(a, "weight", Scale())
    np.testing.assert_allclose(a.weight.detach().numpy(), 2 * sym)
    c = copy.deepcopy(a)
    assert (
        type(c) is type(a)
        and c.parametrizations.weight.original is not a.parametrizations.weight.original
    )
    np.testing.assert_allclose(c.weight.detach().numpy(), 2 * sym)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(a)
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        a.weight = ember.zeros(3, 3)
    P.remove_parametrizations(a, "weight")
    assert type(a) is Affine and isinstance(a.weight, nn.Parameter)
    np.testing.assert_allclose(a.weight.detach().numpy(), 2 * sym)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(a, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(a, "nope", Scale())


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda: nn.Linear(3, 4), (2, 3)),
        (lambda: nn.Conv2d(2, 3, 3), (1, 2, 5, 5)),
        (lambda: nn.LayerNorm(4), (2, 4)),
    ],
)
@pytest.mark.parametrize("how", ["parametrize", "weight_norm"])
def test_builtin_layers_read_a_weight_moved_out_of_parameters(make, shape, how):
    # Linear, Conv and LayerNorm read _parameters directly while weight and bias are there
    # (Note [Parameter fast path]); parametrize and weight_norm move the weight out, and the
    # forward must then see the tensor they compute.
    m = make()
    doubled = copy.deepcopy(m)
    with ember.no_grad():
        doubled.weight.mul_(2)
    if how == "parametrize":
        # Double has no right_inverse: the original keeps the weight, the layer sees it doubled.
        nn.utils.parametrize.register_parametrization(m, "weight", Double())
    else:
        with pytest.warns(FutureWarning):
            nn.utils.weight_norm(m, dim=None)
        with ember.no_grad():
            m.weight_g.mul_(2)
    assert "weight" not in m._parameters
    x = ember.randn(*shape)
    np.testing.assert_allclose(
        m(x).detach().numpy(), doubled(x).detach().numpy(), rtol=1e-5, atol=1e-5
    )


def test_parametrization_right_inverse_and_leave_original():
    P = nn.utils.parametrize
    a = Affine(2, 2)
    w = a.weight.detach().numpy().copy()
    P.register_parametrization(a, "weight", Scale())
    # right_inverse runs at registration, so the parametrized value starts equal to the weight.
    np.testing.assert_allclose(a.weight.detach().numpy(), w, rtol=1e-6)
    a.weight = ember.ones(2, 2)
    np.testing.assert_allclose(
        a.parametrizations.weight.original.detach().numpy(), np.full((2, 2), 0.5)
    )
    P.remove_parametrizations(a, "weight", leave_parametrized=False)
    np.testing.assert_allclose(a.weight.detach().numpy(), np.full((2, 2), 0.5))


def test_parametrizations_weight_norm_and_old_checkpoint():
    a = Affine(3, 4)
    w = a.weight.detach().numpy().copy()
    nn.utils.parametrizations.weight_norm(a)
    pl = a.parametrizations.weight
    np.testing.assert_allclose(
        pl.original0.detach().numpy(), np.sqrt((w**2).sum(1, keepdims=True)), rtol=1e-5
    )
    np.testing.assert_allclose(a.weight.detach().numpy(), w, rtol=1e-5)
    old = Affine(3, 4)
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(old)
    b = Affine(3, 4)
    nn.utils.parametrizations.weight_norm(b)
    b.load_state_dict(old.state_dict())
    np.testing.assert_allclose(b.weight.detach().numpy(), old.weight.detach().numpy(), rtol=1e-5)


def test_spectral_norm_parametrization():
    P = ember.nn.utils.parametrizations
    conv = P.spectral_norm(ember.nn.ConvTranspose2d(3, 2, 3))  # dim 1 for transposed convs
    w = conv.weight.detach().numpy().transpose(1, 0, 2, 3).reshape(2, -1)
    np.testing.assert_allclose(np.linalg.svd(w, compute_uv=False)[0], 1.0, rtol=1e-3)
    assert sorted(conv.state_dict()) == [
        "bias",
        "parametrizations.weight.0._u",
        "parametrizations.weight.0._v",
        "parametrizations.weight.original",
    ]
    v1 = P.spectral_norm(ember.nn.Linear(1, 1), "bias").bias  # 1-d: normalized
    assert abs(abs(float(v1)) - 1) < 1e-6
    with pytest.raises(ValueError, match="no parameter or buffer with name 'nope'"):
        P.spectral_norm(ember.nn.Linear(2, 2), "nope")


def test_spectral_norm_matches_torch_given_the_same_vectors(torch):
    w = np.random.randn(4, 6).astype(np.float32)
    x = np.random.randn(3, 6).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        lin = lib.nn.Linear(6, 4, bias=False)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w))
        m = lib.nn.utils.parametrizations.spectral_norm(lin, n_power_iterations=2)
        with lib.no_grad():  # the random start of the power iteration differs between libraries
            m.parametrizations.weight[0]._u.copy_(lib.tensor(np.ones(4, np.float32) / 2))
            m.parametrizations.weight[0]._v.copy_(lib.tensor(np.ones(6, np.float32) / 6**0.5))
        y = m(lib.tensor(x))
        y.square().sum().backward()
        outs.append(
            (
                y.detach().numpy(),
                m.parametrizations.weight.original.grad.numpy(),
                m.parametrizations.weight[0]._u.numpy(),
            )
        )
    for e, t in zip(*outs):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)
