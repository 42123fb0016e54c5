"""nn.Module machinery: Parameter, registration, traversal, state_dict, hooks, conversions, repr,
containers, init and utils. Forwards use tensor ops only, so nothing here needs the F kernels."""

import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import init


class Affine(nn.Module):
    """y = x @ weight + bias, written with tensor ops."""

    def __init__(self, n_in, n_out, bias=True):
        super().__init__()
        self.weight = nn.Parameter(ember.randn(n_in, n_out))
        self.bias = nn.Parameter(ember.zeros(n_out)) if bias else None
        self.register_buffer("calls", ember.zeros(()))
        self.register_buffer("scratch", ember.ones(2), persistent=False)

    def forward(self, x):
        y = x @ self.weight
        return y + self.bias if self.bias is not None else y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Affine(3, 4)
        self.b = Affine(4, 2)
        self.head = nn.Parameter(ember.ones(2))

    def forward(self, x):
        return self.b(self.a(x).tanh()) * self.head


# ---- Parameter ---------------------------------------------------------------------------------


def test_parameter_is_tensor_leaf_sharing_storage():
    data = ember.randn(3, 2)
    p = nn.Parameter(data)
    assert isinstance(p, ember.Tensor) and isinstance(p, nn.Parameter)
    assert p.is_leaf and p.requires_grad and not data.requires_grad
    assert p.data_ptr() == data.data_ptr()
    with ember.no_grad():
        p.add_(1)
    np.testing.assert_allclose(data.numpy(), p.detach().numpy())
    (p * 2).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), np.full((3, 2), 2.0))


def test_parameter_repr_and_flags():
    p = nn.Parameter(ember.ones(2))
    assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    q = nn.Parameter(ember.ones(2), requires_grad=False)
    assert not q.requires_grad and repr(q) == "Parameter containing:\ntensor([1., 1.])"
    assert nn.Parameter().shape == (0,)
    # Ops on parameters give plain tensors, as in torch.
    assert type(p + 1) is ember.Tensor


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c.requires_grad and c.data_ptr() != p.data_ptr()
    np.testing.assert_array_equal(c.detach().numpy(), [1.0, 2.0])
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.requires_grad
    np.testing.assert_array_equal(r.detach().numpy(), [1.0, 2.0])


def test_buffer_marker():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Buffer(ember.ones(2))
            self.b = nn.Buffer(ember.zeros(1), persistent=False)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert list(m.state_dict()) == ["a"]


# ---- registration ------------------------------------------------------------------------------


def test_setattr_registers_and_getattr_finds():
    net = Net()
    assert list(net._modules) == ["a", "b"]
    assert list(net._parameters) == ["head"]
    assert net.a.weight is net.a._parameters["weight"]
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        net.nope
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'head'"):
        net.head = ember.ones(2)
    net.head = None
    assert net.head is None and "head" in net._parameters
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'a'"):
        net.a = 3
    # A buffer slot accepts plain tensors.
    net.a.calls = ember.ones(())
    assert net.a._buffers["calls"].item() == 1.0


def test_register_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", None)
    with pytest.raises(
        TypeError, match="cannot assign 'torch.FloatTensor' object to parameter 'w'"
    ):
        m.register_parameter("w", ember.ones(1))
    m.x = 1
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        m.register_buffer("x", ember.ones(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("c", 3)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()


def test_delattr_and_reassign_moves_between_tables():
    m = Affine(2, 2)
    del m.calls
    assert "calls" not in m._buffers
    del m.scratch
    assert "scratch" not in m._non_persistent_buffers_set
    m.weight = nn.Parameter(ember.ones(1))
    del m.weight
    assert "weight" not in m._parameters
    m.sub = nn.Identity()
    m.sub = nn.Parameter(ember.ones(1))
    assert "sub" not in m._modules and "sub" in m._parameters


def test_get_submodule_parameter_buffer():
    net = Net()
    assert net.get_submodule("a") is net.a
    assert net.get_submodule("") is net
    assert net.get_parameter("b.weight") is net.b.weight
    assert net.get_buffer("a.calls") is net.a.calls
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        net.get_submodule("a.zz")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        net.get_submodule("a.weight")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        net.get_parameter("a.calls")


# ---- traversal ---------------------------------------------------------------------------------


def test_named_parameters_order_and_dedup():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "head",
        "a.weight",
        "a.bias",
        "b.weight",
        "b.bias",
    ]
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["head"]
    assert [n for n, _ in net.named_parameters(prefix="m")][0] == "m.head"
    net.b.weight = net.a.weight  # shared
    assert len(list(net.parameters())) == 4
    assert len(list(net.named_parameters(remove_duplicate=False))) == 5
    assert [n for n, _ in net.named_buffers()] == ["a.calls", "a.scratch", "b.calls", "b.scratch"]


def test_modules_children_shared_submodule():
    shared = nn.Identity()
    seq = nn.Sequential(shared, nn.Sequential(shared, nn.Identity()))
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1", "1.1"]
    assert len(list(seq.named_modules(remove_duplicate=False))) == 5
    assert [n for n, _ in seq.named_children()] == ["0", "1"]
    assert list(seq.modules())[0] is seq


def test_dir_lists_registered_names():
    d = dir(Net())
    assert "a" in d and "head" in d and "forward" in d


# ---- state_dict --------------------------------------------------------------------------------


def test_state_dict_keys_and_detach():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["head", "a.weight", "a.bias", "a.calls", "b.weight", "b.bias", "b.calls"]
    assert not sd["a.weight"].requires_grad and type(sd["a.weight"]) is ember.Tensor
    assert sd["a.weight"].data_ptr() == net.a.weight.data_ptr()
    kv = net.state_dict(keep_vars=True)
    assert kv["a.weight"] is net.a.weight
    assert sd._metadata[""]["version"] == 1 and "a" in sd._metadata
    assert list(net.a.state_dict(prefix="x.")) == ["x.weight", "x.bias", "x.calls"]


def test_load_state_dict_roundtrip_and_errors():
    src, dst = Net(), Net()
    res = dst.load_state_dict(src.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    np.testing.assert_array_equal(dst.a.weight.detach().numpy(), src.a.weight.detach().numpy())
    assert dst.a.weight.data_ptr() != src.a.weight.data_ptr()

    sd = src.state_dict()
    del sd["a.bias"]
    sd["extra"] = ember.ones(1)
    with pytest.raises(RuntimeError) as e:
        dst.load_state_dict(sd)
    assert str(e.value) == (
        'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "a.bias". '
        '\n\tUnexpected key(s) in state_dict: "extra". '
    )
    res = dst.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["a.bias"] and res.unexpected_keys == ["extra"]

    sd = src.state_dict()
    sd["b.bias"] = ember.ones(3)
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for b.bias: copying a param with shape "
        r"torch.Size\(\[3\]\) from checkpoint, the shape in current model "
        r"is torch.Size\(\[2\]\).",
    ):
        dst.load_state_dict(sd)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        dst.load_state_dict([1, 2])


def test_load_state_dict_assign_and_nonpersistent():
    src, dst = Affine(2, 3), Affine(2, 3)
    dst.load_state_dict(src.state_dict(), assign=True)
    assert isinstance(dst.weight, nn.Parameter) and dst.weight.requires_grad
    assert dst.weight.data_ptr() == src.weight.data_ptr()
    assert "scratch" not in src.state_dict()


def test_state_dict_hooks_and_extra_state():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 0

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 7
    sd = a.state_dict()
    assert list(sd) == ["_extra_state"]
    b.load_state_dict(sd)
    assert b.value == 7
    seen = []
    h = b.register_load_state_dict_post_hook(lambda m, keys: seen.append(tuple(keys.missing_keys)))
    b.load_state_dict(sd)
    h.remove()
    b.load_state_dict(sd)
    assert seen == [()]


# ---- modes, conversions ------------------------------------------------------------------------


def test_train_eval_zero_grad_requires_grad():
    net = Net()
    assert net.training and net.a.training
    net.eval()
    assert not net.training and not net.b.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(1)
    net.train()
    net(ember.randn(5, 3)).sum().backward()
    assert net.a.weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert float(net.a.weight.grad.abs().sum()) == 0.0
    net.zero_grad()
    assert net.a.weight.grad is None
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_order_and_to_dtype_keeps_identity():
    net = Net()
    order = []
    net.apply(lambda m: order.append(type(m).__name__))
    assert order == ["Affine", "Affine", "Net"]
    w = net.a.weight
    net.double()
    assert net.a.weight is w and w.dtype == ember.float64 and net.a.calls.dtype == ember.float64
    net.to(ember.float32)
    assert w.dtype == ember.float32
    net.to("cpu").float().cpu()
    ref = ember.zeros(1, dtype=ember.float64)
    net.to(ref)
    assert w.dtype == ember.float64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        net.to(ember.int64)
    m = nn.Module()
    m.register_buffer("idx", ember.arange(3))
    m.half()
    assert m.idx.dtype == ember.int64


def test_grad_converted_with_param():
    a = Affine(2, 2)
    a(ember.randn(3, 2)).sum().backward()
    a.double()
    assert a.weight.grad.dtype == ember.float64


def test_deepcopy_module():
    net = Net()
    c = copy.deepcopy(net)
    assert isinstance(c.a.weight, nn.Parameter)
    assert c.a.weight.data_ptr() != net.a.weight.data_ptr()
    np.testing.assert_array_equal(c.a.weight.detach().numpy(), net.a.weight.detach().numpy())


def test_unexpected_init_kwargs_and_missing_forward():
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        nn.Module(foo=1)
    with pytest.raises(
        NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'
    ):
        nn.Module()(1)


# ---- hooks -------------------------------------------------------------------------------------


def test_forward_pre_and_post_hooks():
    a = Affine(2, 2, bias=False)
    calls = []

    def pre(mod, args):
        calls.append("pre")
        return (args[0] * 2,)

    def post(mod, args, out):
        calls.append("post")
        return out + 1

    h1 = a.register_forward_pre_hook(pre)
    h2 = a.register_forward_hook(post)
    x = ember.ones(1, 2)
    expected = (x * 2) @ a.weight + 1
    np.testing.assert_allclose(a(x).detach().numpy(), expected.detach().numpy())
    assert calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    h2.remove()
    np.testing.assert_allclose(a(x).detach().numpy(), (x @ a.weight).detach().numpy())
    assert calls == ["pre", "post"]


def test_hooks_with_kwargs_prepend_and_context():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    m = Scale()
    order = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}), with_kwargs=True)
    m.register_forward_hook(
        lambda mod, args, kwargs, out: order.append(("kw", kwargs["factor"])), with_kwargs=True
    )
    m.register_forward_hook(lambda mod, args, out: order.append("first"), prepend=True)
    assert m(ember.ones(1)).item() == 3.0
    assert order == ["first", ("kw", 3.0)]
    with m.register_forward_hook(lambda mod, args, out: out * 0) as _:
        assert m(ember.ones(1)).item() == 0.0
    assert m(ember.ones(1)).item() == 3.0


def test_forward_hook_always_call_on_error():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(ember.ones(1))
    assert seen == [None]


def test_global_forward_hook():
    seen = []
    h = nn.modules.module.register_module_forward_hook(
        lambda m, a, o: seen.append(type(m).__name__)
    )
    try:
        Net()(ember.randn(1, 3))
    finally:
        h.remove()
    assert seen == ["Affine", "Affine", "Net"]


def test_full_backward_hooks():
    a = Affine(3, 2)
    x = ember.randn(4, 3, requires_grad=True)
    record = {}

    def pre(mod, grad_output):
        record["pre"] = grad_output[0].clone()
        return (grad_output[0] * 2,)

    def hook(mod, grad_input, grad_output):
        record["gin"] = grad_input[0].clone()
        record["gout"] = grad_output[0].clone()

    a.register_full_backward_pre_hook(pre)
    h = a.register_full_backward_hook(hook)
    a(x).sum().backward()
    np.testing.assert_allclose(record["pre"].numpy(), np.ones((4, 2)))
    np.testing.assert_allclose(record["gout"].numpy(), np.full((4, 2), 2.0))
    expected_gin = 2 * np.ones((4, 2)) @ a.weight.detach().numpy().T
    np.testing.assert_allclose(record["gin"].numpy(), expected_gin, rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), expected_gin, rtol=1e-5)
    # Parameter grads see the modified grad_output too.
    np.testing.assert_allclose(a.bias.grad.numpy(), np.full(2, 8.0))
    h.remove()


def test_full_backward_hook_replaces_grad_input_and_no_input_grad():
    a = Affine(3, 2)
    x = ember.randn(4, 3, requires_grad=True)
    a.register_full_backward_hook(lambda m, gin, gout: (gin[0] * 0,))
    a(x).sum().backward()
    assert float(x.grad.abs().sum()) == 0.0
    seen = []
    b = Affine(3, 2)
    b.register_full_backward_hook(lambda m, gin, gout: seen.append((gin, gout[0].shape)))
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        b(ember.randn(4, 3)).sum().backward()
    assert seen == [((None,), (4, 2))]


# ---- repr --------------------------------------------------------------------------------------


def test_repr_nested_indentation():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Sequential(nn.Identity(), nn.Identity())

        def extra_repr(self):
            return "k=1"

    assert repr(Block()) == (
        "Block(\n  k=1\n  (inner): Sequential(\n    (0): Identity()\n    (1): Identity()\n  )\n)"
    )
    assert repr(nn.Module()) == "Module()"
    ml = nn.ModuleList([nn.Identity(), nn.Identity(), nn.Identity(), nn.Flatten()])
    assert repr(ml) == (
        "ModuleList(\n  (0-2): 3 x Identity()\n  (3): Flatten(start_dim=1, end_dim=-1)\n)"
    )
    assert repr(nn.ModuleList()) == "ModuleList()"


# ---- containers --------------------------------------------------------------------------------


def test_sequential_ops():
    mods = [nn.Identity(), nn.Flatten(), nn.Identity()]
    s = nn.Sequential(*mods)
    assert len(s) == 3 and s[1] is mods[1] and s[-1] is mods[2]
    sl = s[1:]
    assert isinstance(sl, nn.Sequential) and list(sl._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s.append(nn.Identity())
    s.insert(0, nn.Flatten(0))
    assert list(s._modules) == ["0", "1", "2", "3", "4"] and isinstance(s[0], nn.Flatten)
    del s[0]
    assert list(s._modules) == ["0", "1", "2", "3"] and s[1] is mods[1]
    s.extend(nn.Sequential(nn.Identity()))
    assert len(s) == 5 and len(s + s) == 10
    s[0] = nn.Flatten()
    assert isinstance(s[0], nn.Flatten)
    od = nn.Sequential(OrderedDict([("first", nn.Flatten()), ("second", nn.Identity())]))
    assert list(od._modules) == ["first", "second"] and od.first is od[0]
    assert od(ember.ones(2, 3, 4)).shape == (2, 12)
    assert [type(m) for m in od] == [nn.Flatten, nn.Identity]


def test_modulelist_and_moduledict():
    ml = nn.ModuleList([nn.Identity()])
    ml.append(nn.Flatten())
    ml.extend([nn.Identity()])
    ml.insert(1, nn.Flatten(0))
    assert [type(m).__name__ for m in ml] == ["Identity", "Flatten", "Flatten", "Identity"]
    assert ml[-1] is ml[3] and len(ml[1:3]) == 2
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2"]
    with pytest.raises(IndexError):
        ml[5]
    md = nn.ModuleDict({"b": nn.Identity(), "a": nn.Flatten()})
    md["c"] = nn.Identity()
    assert list(md.keys()) == ["b", "a", "c"] and "a" in md and len(md) == 3
    assert md.pop("a").__class__ is nn.Flatten and list(md) == ["b", "c"]
    md.update([("z", nn.Identity())])
    assert list(md) == ["b", "c", "z"]
    assert [n for n, _ in nn.ModuleDict({"x": Affine(1, 1)}).named_parameters()] == [
        "x.weight",
        "x.bias",
    ]


def test_parameterlist_and_dict():
    pl = nn.ParameterList([ember.ones(2), nn.Parameter(ember.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(ember.ones(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert repr(pl).startswith(
        "ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2]\n"
    )
    pd = nn.ParameterDict({"w": ember.ones(2)})
    pd["b"] = nn.Parameter(ember.zeros(1))
    assert list(pd.keys()) == ["w", "b"] and isinstance(pd["w"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["w", "b"]
    del pd["w"]
    assert list(pd) == ["b"] and "w" not in pd


# ---- call fast path ----------------------------------------------------------------------------


def test_call_without_hooks_is_forward():
    a = Affine(2, 2)
    x = ember.randn(3, 2)
    np.testing.assert_array_equal(a(x).detach().numpy(), a.forward(x).detach().numpy())


# ---- init --------------------------------------------------------------------------------------


def test_calculate_gain_and_fans():
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("conv2d") == 1 and init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    assert init._calculate_fan_in_and_fan_out(ember.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))


def _stats(t):
    a = t.detach().numpy().ravel()
    return a.mean(), a.std(), a.min(), a.max()


def test_init_distributions():
    ember.manual_seed(0)
    w = ember.empty(200, 300)
    mean, std, lo, hi = _stats(init.kaiming_uniform_(w, a=math.sqrt(5)))
    bound = 1 / math.sqrt(300)
    assert -bound <= lo and hi <= bound and abs(std - bound / math.sqrt(3)) < 0.02 * bound
    _, std, _, _ = _stats(init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"))
    assert abs(std - math.sqrt(2 / 200)) < 0.03 * math.sqrt(2 / 200)
    _, std, lo, hi = _stats(init.xavier_uniform_(w, gain=2.0))
    a = 2.0 * math.sqrt(6 / 500)
    assert -a <= lo and hi <= a and abs(std - a / math.sqrt(3)) < 0.02 * a
    _, std, _, _ = _stats(init.xavier_normal_(w))
    assert abs(std - math.sqrt(2 / 500)) < 0.03 * math.sqrt(2 / 500)
    mean, std, lo, hi = _stats(init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=3.0))
    assert lo >= -1.0 and hi <= 3.0 and abs(mean - 1.0) < 0.05
    mean, std, _, _ = _stats(init.normal_(w, 3.0, 0.5))
    assert abs(mean - 3.0) < 0.01 and abs(std - 0.5) < 0.01
    _, _, lo, hi = _stats(init.uniform_(w, -2, -1))
    assert -2 <= lo and hi <= -1


def test_init_deterministic_fills():
    p = nn.Parameter(ember.empty(3, 4))
    init.constant_(p, 0.5)
    assert p.requires_grad and p.is_leaf
    np.testing.assert_array_equal(p.detach().numpy(), np.full((3, 4), 0.5))
    np.testing.assert_array_equal(init.eye_(ember.empty(3, 4)).numpy(), np.eye(3, 4))
    np.testing.assert_array_equal(init.ones_(ember.empty(2)).numpy(), [1, 1])
    np.testing.assert_array_equal(init.zeros_(ember.ones(2)).numpy(), [0, 0])
    d = init.dirac_(ember.empty(2, 2, 3)).numpy()
    expected = np.zeros((2, 2, 3))
    expected[0, 0, 1] = expected[1, 1, 1] = 1
    np.testing.assert_array_equal(d, expected)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ember.empty(3))


def test_init_generator_reproducible():
    g1, g2 = ember.Generator(), ember.Generator()
    g1.manual_seed(5)
    g2.manual_seed(5)
    a = init.kaiming_uniform_(ember.empty(4, 4), generator=g1)
    b = init.kaiming_uniform_(ember.empty(4, 4), generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 2)])
def test_orthogonal(shape):
    w = init.orthogonal_(ember.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
    rows, cols = w.shape
    gram = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(rows, cols)), atol=1e-5)


def test_sparse_init():
    w = init.sparse_(ember.empty(10, 5), sparsity=0.3)
    assert ((w.numpy() == 0).sum(axis=0) >= 3).all()


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
