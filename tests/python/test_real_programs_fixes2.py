"""The ember fixes that the second batch of real programs (tests/python/torch_scripts/, listed in
test_real_programs.py) led to, each checked on its own, against torch where it is installed."""

import pytest

import ember
from ember import nn


def _torch():
    return pytest.importorskip("torch")


def test_mark_dirty_returns_the_input_itself():
    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    c = Double.apply(b)
    assert c is b and b.tolist() == [2.0, 4.0]
    assert type(b.grad_fn).__name__ == "DoubleBackward"
    (c * ember.tensor([1.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [2.0, 6.0]  # through Double's backward, then the clone's
    plain = ember.ones(2)
    assert Double.apply(plain) is plain and not plain.requires_grad
    leaf = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used"):
        Double.apply(leaf)


def test_einsum_sublist_form():
    a = ember.arange(6.0).view(2, 3)
    b = ember.ones(2, 3)
    assert ember.einsum(a, [0, 1], b, [0, 1], [0]).tolist() == [3.0, 12.0]
    assert ember.einsum(a, [0, 1], b, [2, 1]).tolist() == [[3.0, 3.0], [12.0, 12.0]]
    assert ember.einsum(a, [Ellipsis, 1], [1]).tolist() == [3.0, 5.0, 7.0]
    assert ember.einsum(a, [27, 30], [30, 27]).tolist() == a.t().tolist()  # upper-case letters
    assert ember.einsum("ij,kj", [a, b]).tolist() == [[3.0, 3.0], [12.0, 12.0]]
    with pytest.raises(ValueError, match=r"range \[0, 52\)"):
        ember.einsum(a, [0, 52])
    torch = _torch()
    ta, tb = torch.tensor(a.tolist()), torch.tensor(b.tolist())
    want = torch.einsum(ta, [0, 1], tb, [2, 1], [2, 0])
    assert ember.einsum(a, [0, 1], b, [2, 1], [2, 0]).tolist() == want.tolist()


def _det_linear(out_f, in_f):
    m = nn.Linear(in_f, out_f)
    with ember.no_grad():
        k = ember.arange(out_f * in_f, dtype=ember.float32)
        m.weight.copy_(ember.sin(k * 0.83 + 0.05 * k * k).view(out_f, in_f))
    return m


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
def test_orthogonal_parametrization(shape, orthogonal_map):
    from ember.nn.utils.parametrizations import orthogonal

    for triv in (True, False):
        m = _det_linear(*shape)
        orthogonal(m, orthogonal_map=orthogonal_map, use_trivialization=triv)
        w = m.weight
        n, k = w.shape
        gram = w @ w.t() if n < k else w.t() @ w
        assert ember.allclose(gram, ember.eye(min(n, k)), atol=1e-5)
        assert "parametrizations.weight.original" in dict(m.named_parameters())
        opt = ember.optim.SGD(m.parameters(), lr=0.1)
        m(ember.linspace(-1, 1, 2 * shape[1]).view(2, shape[1])).pow(2).sum().backward()
        opt.step()
        w = m.weight
        gram = w @ w.t() if n < k else w.t() @ w
        assert ember.allclose(gram, ember.eye(min(n, k)), atol=1e-5)  # stays orthogonal


def test_orthogonal_matches_torch_where_deterministic():
    torch = _torch()
    from ember.nn.utils.parametrizations import orthogonal

    for shape, omap, triv in [
        ((4, 4), None, True),
        ((4, 4), "cayley", False),
        ((5, 3), "householder", False),
        ((3, 5), None, False),
    ]:
        m = _det_linear(*shape)
        t = torch.nn.Linear(shape[1], shape[0])
        with torch.no_grad():
            t.weight.copy_(torch.tensor(m.weight.tolist()))
        orthogonal(m, orthogonal_map=omap, use_trivialization=triv)
        torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=omap, use_trivialization=triv)
        got = m.parametrizations.weight.original.flatten().tolist()
        want = t.parametrizations.weight.original.flatten().tolist()
        assert got == pytest.approx(want, abs=1e-5)
        assert m.weight.flatten().tolist() == pytest.approx(t.weight.flatten().tolist(), abs=1e-5)


def test_orthogonal_errors_and_no_inverse():
    from ember.nn.utils.parametrizations import orthogonal

    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="Expected a matrix"):
        orthogonal(nn.Linear(3, 3), name="bias")
    # Without a trivialization the exponential map has no inverse: the original stays as given.
    m = _det_linear(3, 3)
    before = m.weight.detach().clone()
    orthogonal(m, orthogonal_map="matrix_exp", use_trivialization=False)
    assert ember.equal(m.parametrizations.weight.original, before)
    with pytest.raises(NotImplementedError):
        m.weight = ember.eye(3)


def test_parametrize_cached_computes_once():
    import ember.nn.utils.parametrize as P

    calls = []

    class Sym(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x.triu() + x.triu(1).t()

    layer = nn.Linear(3, 3)
    P.register_parametrization(layer, "weight", Sym())
    calls.clear()
    assert layer.weight is not layer.weight and len(calls) == 2
    with P.cached():
        a = layer.weight
        with P.cached():
            assert layer.weight is a
        assert layer.weight is a
    assert len(calls) == 3
    assert layer.weight is not a  # the cache empties when the block exits


def _det(*shape):
    n = 1
    for s in shape:
        n *= s
    k = ember.arange(n, dtype=ember.float32)
    return ember.sin(k * 0.7 + 0.03 * k * k).view(*shape)


def test_grid_sample_bicubic():
    import ember.nn.functional as F

    img = _det(1, 2, 4, 5)
    # align_corners=True: the grid's corners are the corner pixels' centres, where the cubic
    # kernel's weights are (0, 1, 0, 0): the pixels come back exactly.
    ys, xs = ember.meshgrid(ember.linspace(-1, 1, 4), ember.linspace(-1, 1, 5), indexing="ij")
    grid = ember.stack([xs, ys], -1).unsqueeze(0)
    out = F.grid_sample(img, grid, mode="bicubic", align_corners=True)
    assert ember.allclose(out, img, atol=1e-6)
    # Outside the image with zeros padding, the result is +0.0 (not -0.0), as torch's.
    far = F.grid_sample(img, ember.full((1, 1, 2, 2), 5.0), mode="bilinear")
    assert str(far) == str(ember.zeros(1, 2, 1, 2))
    torch = _torch()
    x = _det(2, 3, 6, 7)
    g = _det(2, 5, 4, 2) * 1.3
    for padding in ("zeros", "border", "reflection"):
        for align in (False, True):
            xe, ge = x.clone().requires_grad_(), g.clone().requires_grad_()
            out = F.grid_sample(xe, ge, mode="bicubic", padding_mode=padding, align_corners=align)
            (out * _det(*out.shape)).sum().backward()
            xt = torch.tensor(x.tolist(), requires_grad=True)
            gt = torch.tensor(g.tolist(), requires_grad=True)
            ref = torch.nn.functional.grid_sample(
                xt, gt, mode="bicubic", padding_mode=padding, align_corners=align
            )
            (ref * torch.tensor(_det(*out.shape).tolist())).sum().backward()
            assert out.flatten().tolist() == pytest.approx(ref.flatten().tolist(), abs=1e-5)
            assert xe.grad.flatten().tolist() == pytest.approx(xt.grad.flatten().tolist(), abs=1e-5)
            assert ge.grad.flatten().tolist() == pytest.approx(gt.grad.flatten().tolist(), abs=1e-4)


def test_iinfo_repr_prints_limits_as_torch():
    assert repr(ember.iinfo(ember.int8)) == "iinfo(min=-128, max=127, dtype=int8)"
    assert repr(ember.iinfo(ember.int64)) == "iinfo(min=-9.22337e+18, max=9.22337e+18, dtype=int64)"
    assert ember.iinfo(ember.int64).max == 2**63 - 1  # the attribute stays exact


def test_stack_dataset():
    from ember.utils.data import DataLoader, StackDataset, TensorDataset

    ds = TensorDataset(ember.arange(4.0))
    labels = ember.arange(4)
    pair = StackDataset(ds, labels)
    assert len(pair) == 4 and pair[2][1].item() == 2 and pair[2][0][0].item() == 2.0
    named = StackDataset(x=ds, y=labels)
    assert sorted(named[1]) == ["x", "y"]
    batch = next(iter(DataLoader(named, batch_size=2)))
    assert batch["y"].tolist() == [0, 1] and batch["x"][0].tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset(ds, ember.arange(3))
    with pytest.raises(ValueError, match="both types are given"):
        StackDataset(ds, y=labels)


def test_optimizer_repr_separates_groups_with_a_blank_line():
    p, q = nn.Parameter(ember.ones(1)), nn.Parameter(ember.ones(1))
    text = str(ember.optim.SGD([{"params": [p]}, {"params": [q], "lr": 1.0}], lr=0.1))
    assert "    weight_decay: 0\n\nParameter Group 1\n" in text
    assert text.startswith("SGD (\nParameter Group 0\n") and text.endswith("    weight_decay: 0\n)")
    torch = _torch()
    tp, tq = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    assert text == str(torch.optim.SGD([{"params": [tp]}, {"params": [tq], "lr": 1.0}], lr=0.1))


def test_dropin_run_sets_file_as_python_does(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "show.py"
    script.write_text("import sys\nprint(__file__, sys.argv[0], __name__)\n")
    out = subprocess.run(
        [sys.executable, "-m", "ember.run", "show.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(script), "show.py", "__main__"]


def test_narrow_copy_and_unsafe_forms():
    x = _det(4, 5)
    c = x.narrow_copy(1, 1, 2)
    assert c.is_contiguous() and ember.equal(c, x[:, 1:3])
    c[0, 0] = 100.0
    assert x[0, 1].item() != 100.0  # a copy, not a view
    assert ember.equal(ember.narrow_copy(x, 0, 1, 2), x[1:3])
    assert [t.shape[1] for t in ember.unsafe_chunk(x, 3, 1)] == [2, 2, 1]
    assert [t.shape[0] for t in x.unsafe_split(3)] == [3, 1]


def test_gradient_as_numpy():
    import numpy as np

    x = _det(4, 5)
    coords = ember.tensor([0.0, 1.0, 3.0, 4.0])
    for kwargs, np_args, np_kwargs in [
        ({}, (), {}),
        ({"spacing": 0.5}, (0.5,), {}),
        ({"dim": 1, "edge_order": 2}, (), {"axis": 1, "edge_order": 2}),
        ({"spacing": (coords,), "dim": 0}, (coords.numpy(),), {"axis": 0}),
        (
            {"spacing": (coords,), "dim": 0, "edge_order": 2},
            (coords.numpy(),),
            {"axis": 0, "edge_order": 2},
        ),
    ]:
        got = ember.gradient(x, **kwargs)
        want = np.gradient(x.numpy().astype(np.float64), *np_args, **np_kwargs)
        want = want if isinstance(want, (list, tuple)) else [want]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.flatten().tolist() == pytest.approx(w.flatten().tolist(), abs=1e-5)
    assert ember.gradient(ember.tensor([1, 4, 9, 16]))[0].tolist() == [3.0, 4.0, 6.0, 7.0]
    with pytest.raises(RuntimeError, match="edge_order"):
        ember.gradient(x, edge_order=3)


def test_index_reduce():
    src = ember.arange(1.0, 7.0).view(3, 2)
    idx = ember.tensor([0, 2, 0])
    expected = {
        ("prod", True): [[5.0, 12.0], [1.0, 1.0], [3.0, 4.0], [1.0, 1.0]],
        ("prod", False): [[5.0, 12.0], [1.0, 1.0], [3.0, 4.0], [1.0, 1.0]],
        ("mean", True): [[7 / 3, 3.0], [1.0, 1.0], [2.0, 2.5], [1.0, 1.0]],
        ("mean", False): [[3.0, 4.0], [1.0, 1.0], [3.0, 4.0], [1.0, 1.0]],
        ("amax", True): [[5.0, 6.0], [1.0, 1.0], [3.0, 4.0], [1.0, 1.0]],
        ("amin", False): [[1.0, 2.0], [1.0, 1.0], [3.0, 4.0], [1.0, 1.0]],
    }
    for (reduce, include_self), want in expected.items():
        got = ember.ones(4, 2).index_reduce(0, idx, src, reduce, include_self=include_self)
        assert got.flatten().tolist() == pytest.approx([v for row in want for v in row])
    t = ember.full((2, 4), 2.0)
    t.index_reduce_(1, ember.tensor([3, 0]), ember.tensor([[1.0, 5.0], [7.0, 0.5]]), "amax")
    assert t.tolist() == [[5.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 7.0]]


def test_low_rank_factorizations_recover_a_low_rank_matrix():
    left = ember.sin(ember.arange(30.0)).view(6, 5)
    right = ember.cos(ember.arange(25.0)).view(5, 5)
    a = left @ ember.diag(ember.tensor([5.0, 3.0, 1.0, 0.0, 0.0])) @ right
    u, s, v = ember.svd_lowrank(a, q=3)
    assert u.shape == (6, 3) and s.shape == (3,) and v.shape == (5, 3)
    assert ember.allclose(u @ ember.diag(s) @ v.T, a, atol=1e-4)
    assert ember.allclose(s, ember.linalg.svdvals(a)[:3], atol=1e-4)
    u, s, v = ember.pca_lowrank(a, q=3)
    centered = a - a.mean(0, keepdim=True)
    assert ember.allclose(s, ember.linalg.svdvals(centered)[:3], atol=1e-4)


def test_linalg_householder_product_tensorinv_tensorsolve():
    a = ember.sin(ember.arange(12.0) * 1.3).view(4, 3)
    tau = ember.tensor([1.2, 0.5, 1.9])
    q = ember.linalg.householder_product(a, tau)
    # Each reflection by hand: H_i = I - tau_i v_i v_i^T.
    ref = ember.eye(4)
    for i in range(3):
        v = a[:, i].clone()
        v[:i] = 0
        v[i] = 1
        ref = ref @ (ember.eye(4) - tau[i] * ember.outer(v, v))
    assert ember.allclose(q, ref[:, :3], atol=1e-5)
    b = ember.sin(ember.arange(16.0) * 0.9).view(4, 2, 2) + ember.eye(4).view(4, 2, 2)
    inv = ember.linalg.tensorinv(b, ind=1)
    assert inv.shape == (2, 2, 4)
    assert ember.allclose(ember.tensordot(inv, b, 1), ember.eye(4).view(2, 2, 2, 2), atol=1e-5)
    c = ember.sin(ember.arange(36.0) * 0.9).view(2, 3, 6) + ember.eye(6).view(2, 3, 6)
    rhs = ember.arange(6.0).view(2, 3)
    x = ember.linalg.tensorsolve(c, rhs)
    assert ember.allclose(ember.tensordot(c, x, 1), rhs, atol=1e-4)


def test_as_subclass_and_multithreading_switch():
    class Marked(ember.Tensor):
        pass

    a = ember.ones(2, requires_grad=True)
    s = (a * 2).as_subclass(Marked)
    assert type(s) is Marked and s.grad_fn is not None
    (s * 3).sum().backward()
    assert a.grad.tolist() == [6.0, 6.0]
    with pytest.raises(TypeError):
        a.as_subclass(int)
    assert ember.autograd.is_multithreading_enabled()
    with ember.autograd.set_multithreading_enabled(False):
        assert not ember.autograd.is_multithreading_enabled()
    assert ember.autograd.is_multithreading_enabled()


def test_adaptive_log_softmax_with_loss():
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 14, cutoffs=[4, 10], div_value=2.0)
    x = _det(4, 8)
    target = ember.tensor([0, 5, 9, 12])
    out, loss = m(x, target)
    full = m.log_prob(x)
    assert full.shape == (4, 14)
    assert ember.allclose(full.exp().sum(1), ember.ones(4), atol=1e-5)  # a distribution
    assert ember.allclose(out, full.gather(1, target.unsqueeze(1)).squeeze(1), atol=1e-5)
    assert loss.item() == pytest.approx(-out.mean().item(), rel=1e-6)
    assert ember.equal(m.predict(x), full.argmax(1))
    loss.backward()
    assert all(p.grad is not None for p in m.parameters())
    assert m(x[1], ember.tensor(5)).output.shape == ()
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 14, cutoffs=[4, 4])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 13\]"):
        m(x, ember.tensor([0, 5, 9, 14]))
    torch = _torch()
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 14, cutoffs=[4, 10], div_value=2.0, head_bias=True)
    e = nn.AdaptiveLogSoftmaxWithLoss(8, 14, cutoffs=[4, 10], div_value=2.0, head_bias=True)
    e.load_state_dict({k: ember.tensor(v.tolist()) for k, v in t.state_dict().items()})
    want = t(torch.tensor(x.tolist()), torch.tensor(target.tolist()))
    got = e(x, target)
    assert got.output.tolist() == pytest.approx(want.output.tolist(), abs=1e-5)
    assert got.loss.item() == pytest.approx(want.loss.item(), abs=1e-5)


def test_distributions_with_scalar_parameters_sample():
    import ember.distributions as D

    ember.manual_seed(0)
    for d in [
        D.Normal(0.0, 1.0),
        D.Normal(ember.tensor(0.0), ember.tensor(1.0)),
        D.Uniform(0.0, 1.0),
        D.Laplace(0.0, 1.0),
        D.Cauchy(0.0, 1.0),
        D.Gamma(2.0, 1.0),
        D.Beta(2.0, 3.0),
        D.StudentT(3.0),
        D.Poisson(2.0),
        D.Binomial(5, 0.3),
        D.VonMises(0.0, 1.0),
        D.ContinuousBernoulli(0.3),
        D.Kumaraswamy(2.0, 3.0),
        D.MixtureSameFamily(
            D.Categorical(ember.tensor([0.3, 0.7])), D.Poisson(ember.tensor([1.0, 4.0]))
        ),
    ]:
        s = d.sample()
        assert s.shape == () and d.sample((2,)).shape == (2,)
        assert d.log_prob(s).shape == ()
        if d.has_rsample:
            assert d.rsample().shape == ()
    mu = ember.tensor(0.0, requires_grad=True)
    D.Normal(mu, 1.0).rsample().backward()
    assert mu.grad.item() == 1.0


def test_lp_pool3d_and_max_unpool3d():
    import ember.nn.functional as F

    x = ember.sin(ember.arange(2 * 2 * 4 * 4 * 4.0) * 0.37).view(2, 2, 4, 4, 4)
    out = F.lp_pool3d(x.abs(), 2, 2)
    # Each output is the 2-norm of its 2x2x2 window.
    window = x.abs()[0, 0, :2, :2, :2]
    assert out[0, 0, 0, 0, 0].item() == pytest.approx(window.pow(2).sum().sqrt().item(), rel=1e-5)
    assert nn.LPPool3d(3, (2, 1, 2), stride=1)(x.abs()).shape == (2, 2, 3, 4, 3)
    pooled, idx = F.max_pool3d(x.abs() + 0.1, 2, return_indices=True)  # positive maxima
    back = F.max_unpool3d(pooled, idx, 2)
    assert back.shape == x.shape and int((back != 0).sum()) == pooled.numel()
    assert ember.equal(F.max_pool3d(back, 2), pooled)
    assert nn.MaxUnpool3d(2)(pooled, idx, output_size=x.shape).shape == x.shape


def test_func_transforms_of_ember_functions_passed_directly():
    from ember.func import grad, jacrev, jvp, vjp, vmap

    x = ember.sin(ember.arange(24.0)).view(4, 6)
    jac = jacrev(ember.sin)(x[0])
    assert ember.allclose(jac, ember.diag(ember.cos(x[0])), atol=1e-6)
    batched = vmap(jacrev(ember.tanh))(x)
    assert batched.shape == (4, 6, 6)
    assert ember.allclose(batched[2], ember.diag(1 - ember.tanh(x[2]) ** 2), atol=1e-6)
    assert ember.equal(vmap(grad(ember.sum))(x), ember.ones(4, 6))
    _, tangent = jvp(ember.sin, (x[0],), (ember.ones(6),))
    assert ember.allclose(tangent, ember.cos(x[0]), atol=1e-6)
    _, back = vjp(ember.exp, x[0])
    assert ember.allclose(back(ember.ones(6))[0], ember.exp(x[0]), atol=1e-6)


def test_dropin_imports_of_torch_submodules_programs_use(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "imports.py"
    script.write_text(
        "import torch\n"
        "import torch.backends.cudnn as cudnn\n"
        "from torch.cuda.amp import GradScaler, autocast\n"
        "from torch.hub import load_state_dict_from_url\n"
        "from torch.utils.model_zoo import load_url\n"
        "from torch.utils.hooks import RemovableHandle\n"
        "from torch.utils.data._utils.collate import default_collate\n"
        "from torch.nn.common_types import _size_2_t\n"
        "import torch.types\n"
        "cudnn.benchmark = True\n"
        "cudnn.deterministic = True\n"
        "print(torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)\n"
        "print(GradScaler(enabled=False).is_enabled(), default_collate([1, 2]).tolist())\n"
        "print(torch.hub.get_dir() is not None, load_url is load_state_dict_from_url)\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "ember.run", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["True True", "False [1, 2]", "True True"]


def test_hub_loads_a_cached_checkpoint(tmp_path):
    old = ember.hub.get_dir()
    ember.hub.set_dir(str(tmp_path))
    try:
        (tmp_path / "checkpoints").mkdir()
        ember.save({"w": ember.ones(2)}, str(tmp_path / "checkpoints" / "net-1234.pth"))
        sd = ember.hub.load_state_dict_from_url("https://example.org/models/net-1234.pth")
        assert sd["w"].tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError, match="not supported"):
            ember.hub.load("owner/repo", "model")
    finally:
        ember.hub.set_dir(old)


def test_pytree_flatten_unflatten_map():
    from collections import OrderedDict, namedtuple

    import ember.utils._pytree as pytree

    point = namedtuple("point", "a b")
    tree = {"x": [ember.ones(2), (1, 2.5)], "y": point(ember.zeros(1), None), "z": OrderedDict(k=3)}
    leaves, spec = pytree.tree_flatten(tree)
    assert [type(v).__name__ for v in leaves] == [
        "Tensor",
        "int",
        "float",
        "Tensor",
        "NoneType",
        "int",
    ]
    assert spec.num_leaves == 6
    back = pytree.tree_unflatten(leaves, spec)
    assert type(back["y"]) is point and back["y"].b is None and type(back["z"]) is OrderedDict
    doubled = pytree.tree_map(lambda v: v if v is None else v * 2, tree)
    assert doubled["x"][1] == (2, 5.0) and doubled["x"][0].tolist() == [2.0, 2.0]
    assert pytree.tree_map_only(ember.Tensor, lambda t: t + 1, tree)["x"][1] == (1, 2.5)
    assert pytree.tree_structure((1, 2)) == pytree.tree_structure((3, 4))
    assert pytree.tree_structure((1, 2)) != pytree.tree_structure([3, 4])
    assert pytree.tree_flatten([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))[0] == [
        1,
        (2, 3),
    ]
    with pytest.raises(ValueError):
        pytree.tree_unflatten([1], spec)
