"""ember.optim optimizers: trajectories vs torch, state_dict, zero_grad, param groups, errors.

Gradients come from a quadratic-plus-quartic loss evaluated in numpy on the current parameter
values, so both frameworks see identical gradients whenever their parameters agree.
"""

import copy
import warnings

import numpy as np
import pytest

import ember

SHAPES = [(5, 4), (7,), (3, 2, 2)]


def init_arrays(dtype, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.randn(*s).astype(dtype) for s in SHAPES], [
        rng.randn(*s).astype(dtype) for s in SHAPES
    ]


def grad_of(value, target, i):
    """d/dp of (i + 1) * sum((p - t) ** 2) + 0.05 * sum(p ** 4), in float64."""
    v = value.astype(np.float64)
    return ((i + 1) * 2 * (v - target) + 0.2 * v**3).astype(value.dtype)


def trajectory(fw, cls, kw, dtype="float32", steps=100, groups=None, strided=False, skip_grad=None):
    """Parameters after each step; `groups` gives per-group options for params 0, 1 and 2."""
    inits, targets = init_arrays(dtype)
    params = []
    for a in inits:
        if strided and a.ndim == 2:
            p = fw.tensor(np.ascontiguousarray(a.T)).t().detach().requires_grad_(True)
        else:
            p = fw.tensor(a, requires_grad=True)
        params.append(p)
    if groups is None:
        opt = getattr(fw.optim, cls)(params, **kw)
    else:
        spec = [dict(g, params=[params[i] for i in g["params"]]) for g in groups]
        opt = getattr(fw.optim, cls)(spec, **kw)
    # maximize flips the gradient's sign so the trajectory stays bounded.
    sign = -1.0 if kw.get("maximize") or any(g.get("maximize") for g in groups or []) else 1.0
    out = []
    for step in range(steps):
        opt.zero_grad()
        for i, p in enumerate(params):
            if skip_grad is not None and i == skip_grad:
                continue
            p.grad = fw.tensor(sign * grad_of(p.detach().numpy(), targets[i].astype(np.float64), i))
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out


def assert_close(a, b, rtol):
    for step_a, step_b in zip(a, b):
        for x, y in zip(step_a, step_b):
            # Relative to each tensor's scale: entries near zero carry the others' rounding.
            assert np.abs(x - y).max() <= rtol * max(np.abs(y).max(), 1.0)


CASES = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, momentum=0.8, dampening=0.3, weight_decay=0.05, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, betas=(0.3, 0.9), amsgrad=True, weight_decay=0.2)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.7, alpha=0.9, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adagrad", dict(lr=0.1, eps=1e-6, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.05)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls,kw", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_trajectory_matches_torch(cls, kw, dtype):
    torch = pytest.importorskip("torch")
    rtol = 1e-6 if dtype == "float32" else 1e-12
    assert_close(trajectory(ember, cls, kw, dtype), trajectory(torch, cls, kw, dtype), rtol)


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("SGD", dict(lr=0.01, momentum=0.9)),
        ("Adam", dict(lr=0.01, amsgrad=True)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.3)),
        ("Adagrad", dict(lr=0.1)),
    ],
)
def test_strided_params_and_skipped_grads_match_torch(cls, kw):
    torch = pytest.importorskip("torch")
    a = trajectory(ember, cls, kw, steps=30, strided=True, skip_grad=1)
    b = trajectory(torch, cls, kw, steps=30, strided=True, skip_grad=1)
    assert_close(a, b, 1e-6)
    assert np.array_equal(a[-1][1], init_arrays("float32")[0][1])


GROUPS = {
    "SGD": [
        dict(params=[0], momentum=0.9, nesterov=True),
        dict(params=[1, 2], lr=0.05, weight_decay=0.1),
    ],
    "Adam": [dict(params=[0, 2], amsgrad=True), dict(params=[1], lr=0.003, betas=(0.5, 0.9))],
    "RMSprop": [dict(params=[0]), dict(params=[1], centered=True), dict(params=[2], momentum=0.9)],
    "Adagrad": [dict(params=[2, 0], lr_decay=0.1), dict(params=[1], lr=0.5)],
}


@pytest.mark.parametrize("cls", sorted(GROUPS))
def test_param_groups_match_torch(cls):
    torch = pytest.importorskip("torch")
    kw = {"lr": 0.01}
    a = trajectory(ember, cls, kw, groups=GROUPS[cls])
    b = trajectory(torch, cls, kw, groups=GROUPS[cls])
    assert_close(a, b, 1e-6)


def test_sgd_hand_computation():
    p = ember.tensor([1.0, -2.0], requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.5, nesterov=True)
    g = np.array([0.5, 1.0], dtype=np.float32)
    for step in range(2):
        p.grad = ember.tensor(g)
        opt.step()
    # Step 1: d = g + 0.5 p0; buf = d; p1 = p0 - 0.1 (d + 0.9 buf).
    p0 = np.array([1.0, -2.0])
    d = g + 0.5 * p0
    p1 = p0 - 0.1 * (d + 0.9 * d)
    d2 = g + 0.5 * p1
    buf = 0.9 * d + d2
    p2 = p1 - 0.1 * (d2 + 0.9 * buf)
    np.testing.assert_allclose(p.detach().numpy(), p2, rtol=1e-6)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), buf, rtol=1e-6)


def test_adam_hand_computation():
    p = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64, requires_grad=True)
    opt = ember.optim.Adam([p], lr=0.1, betas=(0.8, 0.9), eps=1e-8)
    grads = [np.array([0.3, -1.0, 2.0]), np.array([-0.2, 0.4, 1.0])]
    x, m, v = np.array([1.0, -2.0, 0.5]), 0.0, 0.0
    for t, g in enumerate(grads, 1):
        p.grad = ember.tensor(g, dtype=ember.float64)
        opt.step()
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        x = x - 0.1 / (1 - 0.8**t) * m / (np.sqrt(v) / np.sqrt(1 - 0.9**t) + 1e-8)
    np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12)
    state = opt.state[p]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq"]
    assert state["step"].dtype == ember.float32 and state["step"].item() == 2.0
    np.testing.assert_allclose(state["exp_avg"].numpy(), m, rtol=1e-12)


def test_rmsprop_and_adagrad_hand_computation():
    g = np.array([0.5, -1.5])
    p = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    q = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    rms = ember.optim.RMSprop([p], lr=0.1, alpha=0.9)
    ada = ember.optim.Adagrad([q], lr=0.1, lr_decay=0.5)
    x, sq, y, acc = np.array([1.0, 2.0]), 0.0, np.array([1.0, 2.0]), 0.0
    for t in range(1, 4):
        p.grad = ember.tensor(g, dtype=ember.float64)
        q.grad = ember.tensor(g, dtype=ember.float64)
        rms.step()
        ada.step()
        sq = 0.9 * sq + 0.1 * g * g
        x = x - 0.1 * g / (np.sqrt(sq) + 1e-8)
        acc = acc + g * g
        y = y - 0.1 / (1 + (t - 1) * 0.5) * g / (np.sqrt(acc) + 1e-10)
    np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12)
    np.testing.assert_allclose(q.detach().numpy(), y, rtol=1e-12)


def test_update_bumps_version_and_records_no_history():
    p = ember.ones(4, requires_grad=True)
    opt = ember.optim.Adam([p])
    p.grad = ember.ones(4)
    before = p._version
    opt.step()
    assert p._version > before
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_zero_size_and_half_params():
    p = ember.zeros(0, 3, requires_grad=True)
    h = ember.ones(4, dtype=ember.float16, requires_grad=True)
    opt = ember.optim.Adam([p, h], lr=0.1)
    p.grad = ember.zeros(0, 3)
    h.grad = ember.ones(4, dtype=ember.float16)
    opt.step()
    assert p.shape == (0, 3)
    np.testing.assert_allclose(h.detach().float().numpy(), 0.9, rtol=1e-3)


def test_closure_is_called_with_grad_enabled():
    p = ember.tensor([3.0], requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0
    assert p.item() == pytest.approx(3.0 - 0.1 * 6.0)


def test_zero_grad():
    p = ember.ones(3, requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.abs().sum().item() == 0
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no grads: nothing to do
    assert p.detach().numpy().tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("SGD", dict(lr=0.01, momentum=0.9)),
        ("Adam", dict(lr=0.01, amsgrad=True)),
        ("AdamW", dict(lr=0.01)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
        ("Adagrad", dict(lr=0.1)),
    ],
)
def test_state_dict_round_trip_continues_identically(cls, kw):
    inits, targets = init_arrays("float32")

    def make():
        params = [ember.tensor(a, requires_grad=True) for a in inits]
        return params, getattr(ember.optim, cls)(params, **kw)

    def steps(params, opt, n):
        for _ in range(n):
            for i, p in enumerate(params):
                p.grad = ember.tensor(grad_of(p.detach().numpy(), targets[i], i))
            opt.step()

    params, opt = make()
    steps(params, opt, 10)
    saved = copy.deepcopy(opt.state_dict())
    saved_params = [p.detach().clone() for p in params]
    assert sorted(saved["state"]) == [0, 1, 2]
    assert saved["param_groups"][0]["params"] == [0, 1, 2]
    steps(params, opt, 10)

    params2, opt2 = make()
    with ember.no_grad():
        for p, s in zip(params2, saved_params):
            p.copy_(s)
    opt2.load_state_dict(saved)
    steps(params2, opt2, 10)
    for a, b in zip(params, params2):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_state_dict_format_matches_torch_and_loads_torch_state():
    torch = pytest.importorskip("torch")
    kw = dict(lr=0.01, momentum=0.9)
    inits, targets = init_arrays("float32")
    tp = [torch.tensor(a, requires_grad=True) for a in inits]
    topt = torch.optim.SGD([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.1}], **kw)
    ep = [ember.tensor(a, requires_grad=True) for a in inits]
    eopt = ember.optim.SGD([{"params": ep[:2]}, {"params": ep[2:], "lr": 0.1}], **kw)
    for fw, ps, opt in ((torch, tp, topt), (ember, ep, eopt)):
        for i, p in enumerate(ps):
            p.grad = fw.tensor(grad_of(p.detach().numpy(), targets[i], i))
        opt.step()
    ts, es = topt.state_dict(), eopt.state_dict()
    assert ts["param_groups"] == es["param_groups"]
    assert ts["state"].keys() == es["state"].keys()
    # A state saved by torch (tensors converted) loads and continues like torch.
    converted = {
        "state": {
            k: {n: ember.tensor(v.numpy()) for n, v in s.items()} for k, s in ts["state"].items()
        },
        "param_groups": ts["param_groups"],
    }
    ep2 = [ember.tensor(p.detach().numpy(), requires_grad=True) for p in tp]
    eopt2 = ember.optim.SGD([{"params": ep2[:2]}, {"params": ep2[2:]}], lr=0.5)
    eopt2.load_state_dict(converted)
    assert eopt2.param_groups[1]["lr"] == 0.1
    for fw, ps, opt in ((torch, tp, topt), (ember, ep2, eopt2)):
        for i, p in enumerate(ps):
            p.grad = fw.tensor(grad_of(p.detach().numpy(), targets[i], i))
        opt.step()
    for a, b in zip(tp, ep2):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


def test_load_state_dict_casts_and_validates():
    p = ember.ones(3, dtype=ember.float64, requires_grad=True)
    opt = ember.optim.Adam([p])
    state = {
        "state": {
            0: {"step": ember.tensor(3.0), "exp_avg": ember.ones(3), "exp_avg_sq": ember.ones(3)}
        },
        "param_groups": [dict(opt.state_dict()["param_groups"][0])],
    }
    opt.load_state_dict(state)
    assert opt.state[p]["exp_avg"].dtype == ember.float64
    assert opt.state[p]["step"].dtype == ember.float32
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    bad = {"state": {}, "param_groups": [dict(state["param_groups"][0], params=[0, 1])]}
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(bad)


def test_param_group_api_and_repr():
    a, b = ember.ones(2, requires_grad=True), ember.ones(3, requires_grad=True)
    opt = ember.optim.SGD([("a", a)], lr=0.1, momentum=0.5)
    assert opt.param_groups[0]["param_names"] == ["a"]
    opt = ember.optim.SGD([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert opt.param_groups[1]["momentum"] == 0
    assert opt.defaults["lr"] == 0.1
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n    dampening: 0\n")
    assert "Parameter Group 1\n" in text and text.endswith(")")
    assert isinstance(opt, ember.optim.Optimizer)


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")
    for cls in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]:
        e = getattr(ember.optim, cls)([ember.ones(2, requires_grad=True)], lr=0.5)
        t = getattr(torch.optim, cls)([torch.ones(2, requires_grad=True)], lr=0.5)
        assert repr(e) == repr(t)
        assert e.defaults == t.defaults


def test_tensor_lr():
    p = ember.ones(2, requires_grad=True)
    opt = ember.optim.Adam([p], lr=ember.tensor(0.1))
    p.grad = ember.ones(2)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), 0.9, rtol=1e-6)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        ember.optim.SGD([p], lr=ember.ones(2))


def test_step_hooks():
    p = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    opt.step()
    h1.remove()
    opt.step()
    assert calls == ["pre", "post", "post"]


def test_errors():
    p = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        ember.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        ember.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        ember.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        ember.optim.SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        ember.optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        ember.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.optim.SGD([p, p], lr=0.1)
    assert any("duplicate parameters" in str(x.message) for x in w)
    messages = {
        "Invalid learning rate: -1.0": lambda: ember.optim.SGD([p], lr=-1.0),
        "Invalid momentum value: -0.5": lambda: ember.optim.SGD([p], momentum=-0.5),
        "Nesterov momentum requires a momentum and zero dampening": lambda: ember.optim.SGD(
            [p], nesterov=True
        ),
        "Invalid beta parameter at index 0: 1.0": lambda: ember.optim.Adam([p], betas=(1.0, 0.9)),
        "Invalid epsilon value: -1.0": lambda: ember.optim.AdamW([p], eps=-1.0),
        "Invalid weight_decay value: -0.1": lambda: ember.optim.Adam([p], weight_decay=-0.1),
        "Invalid alpha value: -0.1": lambda: ember.optim.RMSprop([p], alpha=-0.1),
        "Invalid lr_decay value: -0.1": lambda: ember.optim.Adagrad([p], lr_decay=-0.1),
    }
    for message, make in messages.items():
        with pytest.raises(ValueError) as info:
            make()
        assert str(info.value) == message
    opt = ember.optim.SGD([p], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([p])
    with pytest.raises(NotImplementedError):
        ember.optim.Optimizer([p], {}).step()
    with pytest.raises(RuntimeError, match="expected grad of the param's dtype and shape"):
        ember._C._optim.sgd([p], [ember.ones(3)], [], 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(RuntimeError, match="expected one entry per param"):
        ember._C._optim.adagrad([p], [ember.ones(2)], [], [], 0.1, 0.0, 0.0, 1e-10, False)


@pytest.mark.parametrize(
    "cls,kw,message",
    [
        ("Adadelta", dict(lr=-1.0), "Invalid learning rate"),
        ("Adadelta", dict(rho=1.5), "Invalid rho value"),
        ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
        ("Adamax", dict(eps=-1.0), "Invalid epsilon value"),
    ],
)
def test_composite_optimizers_reject_bad_hyperparameters(cls, kw, message):
    with pytest.raises(ValueError, match=message):
        getattr(ember.optim, cls)([ember.zeros(2, requires_grad=True)], **kw)
