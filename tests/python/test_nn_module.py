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


@pytest.mark.parametrize("flag", ["default", "overwrite", "swap"])
def test_future_flags_decide_how_conversion_replaces_parameters(flag):
    # Identity of the parameter after .double() and whether the old parameter and gradient were
    # converted, as torch.__future__ says.
    setters = (
        ember.__future__.set_overwrite_module_params_on_conversion,
        ember.__future__.set_swap_module_params_on_conversion,
    )
    setters[0](flag == "overwrite")
    setters[1](flag == "swap")
    try:
        m = nn.Linear(2, 2)
        w = m.weight
        m(ember.ones(1, 2)).sum().backward()
        g = w.grad
        m.double()
        same = m.weight is w
        assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
        assert m.weight.dtype == m.weight.grad.dtype == ember.float64
        assert ember.__future__.get_overwrite_module_params_on_conversion() == (flag == "overwrite")
        assert ember.__future__.get_swap_module_params_on_conversion() == (flag == "swap")
    finally:
        setters[0](False)
        setters[1](False)
    # torch 2.13: only overwrite makes new objects; the old ones keep their float32 values.
    assert same == (flag != "overwrite")
    assert (w.dtype == g.dtype == ember.float32) == (flag == "overwrite")
