"""The meta device: tensors with shape, dtype and strides but no data, as torch's; ops on them
give meta results with torch's geometry (compared with torch's meta results where it is
installed), autograd runs through them, and data access raises as torch's."""

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


def geometry(t):
    return (t.device.type, tuple(t.shape), repr(t.dtype).split(".")[-1], tuple(t.stride()))


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_basic_properties():
    t = ember.empty(3, 4, device="meta")
    assert t.is_meta and t.device == ember.device("meta") and t.device.type == "meta"
    assert tuple(t.shape) == (3, 4) and t.stride() == (4, 1) and t.dtype == ember.float32
    assert t.data_ptr() == 0
    assert not ember.empty(3).is_meta
    assert ember.zeros(2, dtype=ember.int32, device="meta").dtype == ember.int32
    assert ember.full((2,), 1.5, device="meta").dtype == ember.float32
    assert ember.full((2,), 1, device="meta").dtype == ember.int64


def test_no_memory_for_data():
    before = _rss_kib()
    big = [ember.empty(100_000, 100_000, device="meta") for _ in range(3)]  # 3 x 40 GB
    ones = ember.ones(100_000, 100_000, device="meta")
    grown = _rss_kib() - before
    assert grown < 50_000, f"meta tensors took {grown} KiB"
    assert all(tuple(b.shape) == (100_000, 100_000) for b in big)
    assert ones.is_meta
    # ops on them cost nothing either while they only change geometry
    v = big[0].t().reshape(-1)[::2].unsqueeze(0)
    assert tuple(v.shape) == (1, 5_000_000_000) and v.is_meta


def test_printing():
    assert repr(ember.empty(3, 4, device="meta")) == "tensor(..., device='meta', size=(3, 4))"
    assert (
        repr(ember.empty(2, dtype=ember.int64, device="meta"))
        == "tensor(..., device='meta', size=(2,), dtype=torch.int64)"
    )
    r = repr(ember.empty(2, device="meta", requires_grad=True))
    assert r == "tensor(..., device='meta', size=(2,), requires_grad=True)"
    assert repr(ember.empty((), device="meta")) == "tensor(..., device='meta', size=())"


def test_data_access_raises_as_torch():
    t = ember.ones(2, 3, device="meta")
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        t[0, 0].item()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        float(t[0, 0])
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        t.tolist()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        t.numpy()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        t.to("cpu")
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        t.cpu()
    with pytest.raises(NotImplementedError, match="depends on the data"):
        t.nonzero()
    with pytest.raises(NotImplementedError, match="depends on the data"):
        ember.unique(t)


def test_mixing_with_cpu():
    m = ember.ones(2, 3, device="meta")
    c = ember.ones(2, 3)
    with pytest.raises(RuntimeError, match="is not on the expected device meta"):
        m + c
    with pytest.raises(RuntimeError, match="is not on the expected device meta"):
        c * m
    assert (m + ember.tensor(1.0)).is_meta  # a 0-d cpu tensor mixes, as in torch
    assert (m * 2).is_meta
    m.copy_(c)  # copying into meta: a check of the shapes only
    with pytest.raises(RuntimeError):
        m.copy_(ember.ones(4))
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        c.copy_(m)


def test_to_meta_and_like():
    x = ember.randn(3, 4).t()
    m = x.to("meta")
    assert geometry(m) == ("meta", (4, 3), "float32", (1, 4))
    assert geometry(x.to(device="meta", dtype=ember.float64)) == ("meta", (4, 3), "float64", (1, 4))
    assert ember.empty_like(m).is_meta and ember.empty_like(m).stride() == (1, 4)
    assert geometry(ember.zeros_like(m)) == geometry(m)
    assert geometry(ember.ones_like(m, dtype=ember.int64)) == ("meta", (4, 3), "int64", (1, 4))
    assert m.to("meta") is m
    assert m.clone().is_meta and m.contiguous().stride() == (3, 1)


CASES = {
    "add_broadcast": lambda L, a, b: a + b[0],
    "mul_promote": lambda L, a, b: a.to(L.int32) * b.to(L.float64),
    "scalar": lambda L, a, b: a * 2.5 + 1,
    "compare": lambda L, a, b: a < b,
    "where": lambda L, a, b: L.where(a > 0, a, b),
    "exp_t": lambda L, a, b: a.transpose(0, 2).exp(),
    "sum": lambda L, a, b: a.sum(),
    "sum_dim": lambda L, a, b: a.sum(1, keepdim=True),
    "mean_dims": lambda L, a, b: a.mean((0, 2)),
    "max_dim": lambda L, a, b: a.max(1)[1],
    "argmax": lambda L, a, b: a.argmax(),
    "var": lambda L, a, b: a.var(0),
    "view": lambda L, a, b: a.view(4, 15),
    "reshape_t": lambda L, a, b: a.transpose(0, 1).reshape(-1),
    "permute": lambda L, a, b: a.permute(2, 0, 1),
    "permute_exp": lambda L, a, b: a.permute(2, 0, 1).exp(),
    "slice": lambda L, a, b: a[:, 1:3, ::2],
    "index_int": lambda L, a, b: a[L.tensor([0, 1, 1])],
    "index_select": lambda L, a, b: a.index_select(2, L.tensor([0, 4])),
    "gather": lambda L, a, b: a.gather(2, L.zeros(3, 4, 2, dtype=L.int64)),
    "cat": lambda L, a, b: L.cat([a, b], 1),
    "stack": lambda L, a, b: L.stack([a, b]),
    "split": lambda L, a, b: a.split(2, 1)[1],
    "expand": lambda L, a, b: a[:, :1].expand(3, 7, 5),
    "flatten": lambda L, a, b: a.flatten(1),
    "matmul": lambda L, a, b: a @ b.transpose(1, 2),
    "bmm": lambda L, a, b: L.bmm(a, b.transpose(1, 2)),
    "mm": lambda L, a, b: a[0].mm(b[0].t()),
    "linear": lambda L, a, b: L.nn.functional.linear(a, L.ones(6, 5, device=a.device)),
    "softmax": lambda L, a, b: a.softmax(-1),
    "log_softmax": lambda L, a, b: L.nn.functional.log_softmax(a, 1),
    "layer_norm": lambda L, a, b: L.nn.functional.layer_norm(a, (5,)),
    "cumsum": lambda L, a, b: a.cumsum(1),
    "sort": lambda L, a, b: a.sort(-1)[1],
    "topk": lambda L, a, b: a.topk(2)[0],
    "tril": lambda L, a, b: a[0].tril(),
    "masked_fill": lambda L, a, b: a.masked_fill(a > 0, 1.0),
    "pad": lambda L, a, b: L.nn.functional.pad(a, (1, 2)),
    "to_half": lambda L, a, b: a.half(),
    "int_div": lambda L, a, b: a.long() // 2,
    "true_div_int": lambda L, a, b: a.long() / 2,
    "clamp": lambda L, a, b: a.clamp(min=0),
    "norm": lambda L, a, b: a.norm(dim=1),
    "gelu": lambda L, a, b: L.nn.functional.gelu(a),
}


def _inputs(lib, device):
    a = lib.zeros(3, 4, 5, device=device)
    b = lib.zeros(3, 4, 5, device=device)
    return a, b


def _index_cases():
    return sorted(CASES)


@pytest.mark.parametrize("name", _index_cases())
def test_ops_as_torch(name):
    fn = CASES[name]
    a, b = _inputs(ember, "meta")
    got = fn(ember, a, b)
    ref = fn(ember, *_inputs(ember, "cpu"))
    assert got.is_meta
    # shape, dtype and strides as the cpu computation's ...
    assert geometry(got)[1:] == geometry(ref)[1:]
    torch = pytest.importorskip("torch")
    want = fn(torch, *_inputs(torch, "meta"))
    # ... and as torch's meta result's
    assert geometry(got) == (
        want.device.type,
        tuple(want.shape),
        repr(want.dtype).split(".")[-1],
        tuple(want.stride()),
    )


def _nn_cases(lib):
    F_ = lib.nn.functional
    x = lib.zeros(2, 3, 8, 8, device="meta")
    w = lib.zeros(4, 3, 3, 3, device="meta")
    return {
        "conv2d": lambda: F_.conv2d(x, w, padding=1, stride=2),
        "max_pool2d": lambda: F_.max_pool2d(x, 2),
        "avg_pool2d": lambda: F_.avg_pool2d(x, 3, stride=2),
        "adaptive": lambda: F_.adaptive_avg_pool2d(x, (1, 1)),
        "batch_norm": lambda: F_.batch_norm(
            x, lib.zeros(3, device="meta"), lib.ones(3, device="meta"), training=True
        ),
        "embedding": lambda: F_.embedding(
            lib.zeros(2, 7, dtype=lib.int64, device="meta"), lib.zeros(10, 4, device="meta")
        ),
        "cross_entropy": lambda: F_.cross_entropy(
            lib.zeros(4, 5, device="meta"), lib.zeros(4, dtype=lib.int64, device="meta")
        ),
        "mse_loss": lambda: F_.mse_loss(
            lib.zeros(4, 5, device="meta"), lib.zeros(4, 5, device="meta")
        ),
        "interpolate": lambda: F_.interpolate(x, scale_factor=2.0, mode="nearest"),
    }


@pytest.mark.parametrize("name", sorted(_nn_cases(ember)))
def test_nn_ops_as_torch(name):
    got = _nn_cases(ember)[name]()
    assert got.is_meta
    torch = pytest.importorskip("torch")
    want = _nn_cases(torch)[name]()
    assert geometry(got)[1:3] == (tuple(want.shape), repr(want.dtype).split(".")[-1])


def test_errors_as_cpu():
    a = ember.zeros(2, 3, device="meta")
    with pytest.raises(RuntimeError):
        a + ember.zeros(4, device="meta")
    with pytest.raises(RuntimeError):
        a @ ember.zeros(2, 3, device="meta")
    with pytest.raises(RuntimeError):
        a.add_(ember.zeros(2, 1, 3, device="meta"))  # cannot broadcast into self


def test_inplace_ops_keep_self():
    a = ember.zeros(2, 3, device="meta")
    assert a.add_(1) is a and a.mul_(ember.zeros(3, device="meta")) is a
    assert a.normal_() is a and a.uniform_(-1, 1) is a and a.fill_(2) is a and a.zero_() is a
    assert a.is_meta and tuple(a.shape) == (2, 3)
    big = ember.empty(50_000, 50_000, device="meta")
    before = _rss_kib()
    big.add_(1.0)
    big.exp_()
    nn.init.kaiming_uniform_(big)
    assert _rss_kib() - before < 50_000


def test_init_functions_on_meta():
    w = ember.empty(8, 4, device="meta")
    for init in (
        nn.init.xavier_uniform_,
        nn.init.xavier_normal_,
        nn.init.kaiming_normal_,
        nn.init.zeros_,
        nn.init.ones_,
        nn.init.eye_,
        nn.init.orthogonal_,
        nn.init.trunc_normal_,
        lambda t: nn.init.constant_(t, 0.5),
        lambda t: nn.init.normal_(t, 0, 0.02),
    ):
        assert init(w) is w and w.is_meta


def test_autograd_through_meta():
    w = ember.empty(4, 3, device="meta", requires_grad=True)
    x = ember.empty(5, 3, device="meta")
    loss = (x @ w.t()).relu().sum()
    assert loss.is_meta and loss.grad_fn is not None
    loss.backward()
    assert w.grad is not None and geometry(w.grad) == ("meta", (4, 3), "float32", (3, 1))
    lin = nn.Linear(3, 2, device="meta")
    out = F.cross_entropy(lin(x), ember.zeros(5, dtype=ember.int64, device="meta"))
    out.backward()
    assert lin.weight.grad.is_meta and tuple(lin.bias.grad.shape) == (2,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 6 * 6, 10)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).relu().flatten(1))


def test_meta_model_forward():
    with ember.device("meta"):
        net = Net()
        out = net(ember.empty(2, 1, 8, 8))
    assert geometry(out) == ("meta", (2, 10), "float32", (10, 1))


def test_to_empty_then_load_state_dict():
    ember.manual_seed(0)
    ref = Net()
    with ember.device("meta"):
        net = Net()
    net.to_empty(device="cpu")
    assert not any(p.is_meta for p in net.parameters())
    assert not any(b.is_meta for b in net.buffers())
    net.load_state_dict(ref.state_dict())
    x = ember.randn(2, 1, 8, 8)
    net.eval()
    ref.eval()
    assert ember.allclose(net(x), ref(x))
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())


def test_to_empty_then_reset_parameters():
    with ember.device("meta"):
        lin = nn.Linear(4, 3)
    lin.to_empty(device="cpu")
    lin.reset_parameters()
    assert not lin.weight.is_meta and float(lin.weight.abs().max()) <= 0.5


def test_load_state_dict_assign():
    ref = Net()
    with ember.device("meta"):
        net = Net()
    net.load_state_dict(ref.state_dict(), assign=True)
    for (name, p), (_, q) in zip(net.named_parameters(), ref.named_parameters()):
        assert isinstance(p, nn.Parameter) and p.requires_grad and not p.is_meta, name
        assert ember.equal(p.detach(), q.detach())
    assert not net.bn.running_mean.is_meta
    x = ember.randn(2, 1, 8, 8)
    assert ember.allclose(net.eval()(x), ref.eval()(x))
    net(x).sum().backward()
    assert net.fc.weight.grad is not None


def test_state_dict_geometry_as_torch():
    torch = pytest.importorskip("torch")

    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 4, 3)
            self.bn = torch.nn.BatchNorm2d(4)
            self.fc = torch.nn.Linear(4 * 6 * 6, 10)

    with torch.device("meta"):
        want = TNet().state_dict()
    with ember.device("meta"):
        got = Net().state_dict()
    assert {k: geometry(v) for k, v in got.items()} == {
        k: (v.device.type, tuple(v.shape), repr(v.dtype).split(".")[-1], tuple(v.stride()))
        for k, v in want.items()
    }


def test_autograd_through_views_and_indexing():
    x = ember.empty(4, 6, device="meta", requires_grad=True)
    y = x[1:3, ::2].sum() + x[ember.tensor([0, 2])].exp().sum() + x.narrow(1, 2, 3).pow(2).sum()
    y = y + ember.nn.functional.pad(x, (1, 1)).sum() + x.tril().sum() + x.select(0, 1).sum()
    y.backward()
    assert geometry(x.grad) == ("meta", (4, 6), "float32", (6, 1))


def test_copy_into_meta_model_warns():
    with ember.device("meta"):
        lin = nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="which is a no-op"):
        lin.load_state_dict(nn.Linear(2, 2).state_dict())
    assert lin.weight.is_meta


def test_skip_init_builds_on_meta_first():
    lin = nn.utils.skip_init(nn.Linear, 3, 4)
    assert not lin.weight.is_meta and tuple(lin.weight.shape) == (4, 3)
    assert isinstance(lin.weight, nn.Parameter)


def test_boolean_masks_raise_as_torch():
    m = ember.empty(3, 4, device="meta")
    mask = m > 0
    with pytest.raises(NotImplementedError, match="depends on"):
        m[mask]
    with pytest.raises(NotImplementedError, match="depends on"):
        m.masked_select(mask)
    # a cpu mask has its values: the result's shape is known
    cpu_mask = ember.tensor([True, False, True])
    assert geometry(m[cpu_mask]) == ("meta", (2, 4), "float32", (4, 1))
    assert m.masked_fill(mask, 0.0).is_meta  # same shape as self: fine


def test_attention_on_meta():
    with ember.device("meta"):
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1)
        out = layer(ember.empty(5, 3, 16), is_causal=True, src_mask=ember.empty(5, 5))
        sdpa = F.scaled_dot_product_attention(
            ember.empty(2, 4, 8), ember.empty(2, 6, 8), ember.empty(2, 6, 8), is_causal=True
        )
    assert geometry(out) == ("meta", (5, 3, 16), "float32", (48, 16, 1))
    assert tuple(sdpa.shape) == (2, 4, 8) and sdpa.is_meta


def test_linalg_on_meta_as_torch():
    a = ember.empty(2, 3, 3, device="meta")
    got = [ember.linalg.inv(a), ember.linalg.solve(a, ember.empty(2, 3, device="meta"))]
    assert all(g.is_meta for g in got)
    torch = pytest.importorskip("torch")
    t = torch.empty(2, 3, 3, device="meta")
    want = [torch.linalg.inv(t), torch.linalg.solve(t, torch.empty(2, 3, device="meta"))]
    assert tuple(got[0].stride()) == tuple(want[0].stride())
    for g, w in zip(got, want):  # (solve's strides are ember's cpu ones, which differ from torch's)
        assert tuple(g.shape) == tuple(w.shape)
